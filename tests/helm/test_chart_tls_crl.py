"""The chart's part of issue 38, certificate rotation and revoked client certificates:
tls.crl.existingSecret mounts a Secret's PEM revocation list in every role with TLS and names it
as config tls.crl; tls.reloadInterval becomes config tls.reload_interval. Combinations the
service would refuse at start are refused at render.

Helm runs in-process through the `helm-python-sdk` wheel, as in test_chart.py.
"""
from __future__ import annotations

import pytest
import yaml

from support.chart import RUNNING, helm, mounted_files, render, role_config, secrets_used

from spiderduck.core import config as sd_config

TLS = {"existingSecret": "sd-grpc-tls"}
CRL = {"tls": {**TLS, "crl": {"existingSecret": "sd-grpc-crl"}}}


def _load(tmp_path, cfg: dict, role: str):
    """The role's rendered config, as the service's config loader reads it."""
    path = tmp_path / f"{role}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return sd_config.load(str(path), env={"SPIDERDUCK_FETCHER__ADVERTISE": "f-0.f.crawl.svc:50052"})


# ---- tls.crl ---------------------------------------------------------------------------------

def test_the_crl_secret_is_mounted_in_every_tls_role_and_named_as_tls_crl(tmp_path):
    docs = render(CRL)
    for role in RUNNING:
        cfg = role_config(docs, role)
        crl, cert = cfg["tls"]["crl"], cfg["tls"]["cert"]
        assert mounted_files(docs, role)[crl] == ("secret", "sd-grpc-crl", "ca.crl"), role
        # A volume of its own beside the certificate's, so either Secret can change alone.
        assert crl.rsplit("/", 1)[0] != cert.rsplit("/", 1)[0], role
        tls = _load(tmp_path, cfg, role).tls
        assert tls.crl == crl and tls.require_client_cert, role
    # The schema Job speaks no gRPC: no list there.
    assert "sd-grpc-crl" not in secrets_used(docs, "schema")
    # Another key of the Secret, and with each role's own certificate.
    own = render({"tls": {"roleSecrets": {"fetcher": "f", "scheduler": "s", "metadataApi": "m"},
                          "crl": {"existingSecret": "sd-grpc-crl", "key": "revoked.pem"}}})
    for role in RUNNING:
        cfg = role_config(own, role)
        assert mounted_files(own, role)[cfg["tls"]["crl"]] == ("secret", "sd-grpc-crl", "revoked.pem"), role
    # Unset: no list, no mount.
    plain = render({"tls": TLS})
    for role in RUNNING:
        assert "crl" not in role_config(plain, role)["tls"], role
        assert "sd-grpc-crl" not in secrets_used(plain, role), role


@pytest.mark.parametrize("tls,message", [
    ({"crl": {"existingSecret": "sd-grpc-crl"}}, "tls.crl.existingSecret is set but TLS is off"),
    ({**TLS, "clientAuth": "none", "crl": {"existingSecret": "sd-grpc-crl"}},
     "tls.crl.existingSecret needs tls.clientAuth require"),
], ids=["tls off", "client auth none"])
def test_a_crl_the_service_would_refuse_fails_the_render(tls, message):
    with pytest.raises(helm.HelmError, match=message):
        render({"tls": tls})


@pytest.mark.parametrize("crl,key", [
    ({"existingSecret": "Not_A_Name"}, "/tls/crl/existingSecret"),
    ({"existingSecret": "sd-grpc-crl", "key": ""}, "/tls/crl/key"),
    ({"existingSecret": "sd-grpc-crl", "keys": "ca.crl"}, "keys"),
])
def test_the_schema_refuses_a_bad_crl_value(crl, key):
    with pytest.raises(helm.HelmError, match=key):
        render({"tls": {**TLS, "crl": crl}})


# ---- tls.reloadInterval ----------------------------------------------------------------------

@pytest.mark.parametrize("given,seconds", [("30s", 30.0), ("2m", 120.0), ("1500ms", 1.5), (10, 10.0)])
def test_reload_interval_reaches_every_tls_role_as_tls_reload_interval(tmp_path, given, seconds):
    docs = render({"tls": {**TLS, "reloadInterval": given}})
    for role in RUNNING:
        cfg = role_config(docs, role)
        assert cfg["tls"]["reload_interval"] == given, role
        assert _load(tmp_path, cfg, role).tls.reload_interval == seconds, role
    assert "tls" not in role_config(docs, "schema")


def test_reload_interval_reaches_the_web_uis_pods_when_only_the_web_ui_has_tls(tmp_path):
    """The web UI looks at web.tls_cert and web.tls_key on the tls.reload_interval timer too."""
    docs = render({"tls": {"reloadInterval": "1m"}, "web": {"tls": {"existingSecret": "sd-web-tls"}}})
    api = role_config(docs, "metadata-api")
    assert api["tls"] == {"reload_interval": "1m"}
    settings = _load(tmp_path, api, "metadata-api")
    assert settings.tls.reload_interval == 60.0 and not settings.tls.server_on
    # The roles with no certificate at all get no key they would not use.
    for role in ("fetcher", "scheduler", "schema"):
        assert "tls" not in role_config(docs, role), role


def test_reload_interval_left_empty_keeps_the_services_default(tmp_path):
    docs = render({"tls": TLS})
    for role in RUNNING:
        cfg = role_config(docs, role)
        assert "reload_interval" not in cfg["tls"], role
        assert _load(tmp_path, cfg, role).tls.reload_interval == 5.0, role


@pytest.mark.parametrize("bad", ["0s", "0", 0, -5, "ten seconds", "1m30s", "5 minutes", True])
def test_the_schema_refuses_a_reload_interval_the_config_would_refuse(bad):
    with pytest.raises(helm.HelmError, match="/tls/reloadInterval"):
        render({"tls": {**TLS, "reloadInterval": bad}})
