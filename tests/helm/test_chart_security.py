"""The chart's part of issue 26, "Trust on the wire": images pinned by digest, TLS for every
gRPC server from one cert-manager Secret (and the probes that still pass with it), NATS
credentials and TLS from Secrets, store credentials mounted only in the roles that use them,
the metadata API's bearer tokens, and the web UI's admin client pointed at the fetchers.

Helm runs in-process through the `helm-python-sdk` wheel, as in test_chart.py.
"""
from __future__ import annotations

import pytest

from support.chart import helm, one, render

DIGEST = "sha256:" + "0123456789abcdef" * 4


# ---- image.digest -----------------------------------------------------------------------------

def test_a_digest_pins_every_image_and_the_tag_is_ignored():
    docs = render({"image": {"tag": "9.9.9", "digest": DIGEST}})
    images = {c["image"] for d in docs if d["kind"] in ("StatefulSet", "Deployment", "Job")
              for c in d["spec"]["template"]["spec"]["containers"]}
    assert images == {f"ghcr.io/spiderduck/spiderduck@{DIGEST}"}
    tagged = render({"image": {"tag": "9.9.9"}})
    assert {c["image"] for d in tagged if d["kind"] in ("StatefulSet", "Deployment", "Job")
            for c in d["spec"]["template"]["spec"]["containers"]} == {"ghcr.io/spiderduck/spiderduck:9.9.9"}


@pytest.mark.parametrize("digest", ["sha256:abc", "0123456789abcdef" * 4, "sha512:" + "ab" * 32,
                                    "sha256:" + "0123456789ABCDEF" * 4])
def test_a_digest_not_of_the_sha256_form_is_refused(digest):
    with pytest.raises(helm.HelmError, match="/image/digest"):
        render({"image": {"digest": digest}})
