"""The chart's part of issue 26, "Trust on the wire": images pinned by digest, TLS for every
gRPC server from one cert-manager Secret (and the probes that still pass with it), NATS
credentials and TLS from Secrets, store credentials mounted only in the roles that use them,
the metadata API's bearer tokens, and the web UI's admin client pointed at the fetchers.

Helm runs in-process through the `helm-python-sdk` wheel, as in test_chart.py.
"""
from __future__ import annotations

import pytest
import yaml

from support.chart import helm, one, render, role_config

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


# ---- the web UI's admin client reaches every fetcher -----------------------------------------

def _component(peer: dict) -> str | None:
    return peer.get("podSelector", {}).get("matchLabels", {}).get("app.kubernetes.io/component")


def test_the_web_ui_asks_every_fetcher_pod_by_its_stable_name(tmp_path):
    """Each domain has one owner, so the admin client asks every fetcher: the metadata API's
    config lists each fetcher pod's headless-Service name (the name it advertises in its
    leases), up to fetcher.replicas; the schedulers keep routing by the leases."""
    from common import config as sd_config
    docs = render({"fetcher": {"replicas": 4, "port": 50062}}, name="prod", namespace="crawl-eu")
    api = role_config(docs, "metadata-api")
    assert api["scheduler"]["fetchers"] == [
        f"prod-spiderduck-fetcher-{i}.prod-spiderduck-fetcher.crawl-eu.svc:50062" for i in range(4)]
    sts = one(docs, "StatefulSet", "fetcher")
    (container,) = sts["spec"]["template"]["spec"]["containers"]
    advertise = {e["name"]: e.get("value") for e in container["env"]}["SPIDERDUCK_FETCHER__ADVERTISE"]
    assert advertise == "$(POD_NAME).prod-spiderduck-fetcher.$(POD_NAMESPACE).svc:50062"
    assert sts["metadata"]["name"] == "prod-spiderduck-fetcher"
    # A static list in the schedulers' config would replace lease routing: never there.
    assert "scheduler" not in role_config(docs, "scheduler")
    path = tmp_path / "api.yaml"
    path.write_text(yaml.safe_dump(api))
    assert sd_config.load(str(path), env={}).fetcher_addresses == api["scheduler"]["fetchers"]
    # Without the web UI nothing in the metadata API calls the fetchers.
    assert "scheduler" not in role_config(render({"web": {"enabled": False}}), "metadata-api")


def test_network_policies_let_the_metadata_api_reach_the_fetchers_port_only():
    docs = render()
    fetcher = one(docs, "NetworkPolicy", "fetcher")["spec"]
    (ingress,) = fetcher["ingress"]
    assert "metadata-api" in [_component(p) for p in ingress["from"]]
    assert ingress["ports"] == [{"protocol": "TCP", "port": 50052}]
    api = one(docs, "NetworkPolicy", "metadata-api")["spec"]
    (to_fetchers,) = [r for r in api["egress"] if any(_component(p) == "fetcher" for p in r.get("to", []))]
    assert to_fetchers["ports"] == [{"protocol": "TCP", "port": 50052}]
    assert len(to_fetchers["to"]) == 1
    # The web UI off: neither rule.
    off = render({"web": {"enabled": False}})
    (ingress,) = one(off, "NetworkPolicy", "fetcher")["spec"]["ingress"]
    assert [_component(p) for p in ingress["from"]] == ["scheduler"]
    assert not [r for r in one(off, "NetworkPolicy", "metadata-api")["spec"]["egress"]
                if any(_component(p) == "fetcher" for p in r.get("to", []))]
