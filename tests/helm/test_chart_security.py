"""The chart's part of issue 26, "Trust on the wire": images pinned by digest, TLS for every
gRPC server from one cert-manager Secret (and the probes that still pass with it), NATS
credentials and TLS from Secrets, store credentials mounted only in the roles that use them,
the metadata API's bearer tokens, and the web UI's admin client pointed at the fetchers.

Helm runs in-process through the `helm-python-sdk` wheel, as in test_chart.py.
"""
from __future__ import annotations

import pytest
import yaml

from support.chart import (CHART, RUNNING, STORES, WORKLOADS, helm, mounted_files, notes, one, pod_spec,
                           render, role_config, secrets_used)

DIGEST = "sha256:" + "0123456789abcdef" * 4
PORTS = {"fetcher": 50052, "scheduler": 50053, "metadata-api": 50051}
TLS = {"tls": {"existingSecret": "sd-grpc-tls"}}


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
    from spiderduck.core import config as sd_config
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


# ---- TLS for every gRPC server ---------------------------------------------------------------

def test_tls_secret_is_mounted_in_every_role_and_named_in_its_config(tmp_path):
    from spiderduck.core import config as sd_config
    docs = render(TLS)
    for role in RUNNING:
        files = mounted_files(docs, role)
        cfg = role_config(docs, role)
        assert files[cfg["tls"]["cert"]] == ("secret", "sd-grpc-tls", "tls.crt"), role
        assert files[cfg["tls"]["key"]] == ("secret", "sd-grpc-tls", "tls.key"), role
        assert files[cfg["tls"]["ca"]] == ("secret", "sd-grpc-tls", "ca.crt"), role
        assert set(cfg["tls"]) == {"cert", "key", "ca"}, role
        assert pod_spec(docs, role)["securityContext"]["fsGroup"] == 10001
        path = tmp_path / f"{role}.yaml"
        path.write_text(yaml.safe_dump(cfg))
        tls = sd_config.load(str(path), env={}).tls
        assert tls.server_on and tls.client_on and tls.require_client_cert, role
    # The schema Job speaks no gRPC: no certificate there.
    assert "sd-grpc-tls" not in secrets_used(docs, "schema")
    assert "tls" not in role_config(docs, "schema")
    # Off by default.
    plain = render()
    for role in RUNNING:
        assert "tls" not in role_config(plain, role) and not mounted_files(plain, role)


def test_client_auth_and_server_name_pass_through(tmp_path):
    from spiderduck.core import config as sd_config
    docs = render({"tls": {"existingSecret": "sd-grpc-tls", "clientAuth": "none",
                           "serverName": "spiderduck.crawl.svc"}})
    for role in RUNNING:
        cfg = role_config(docs, role)
        assert cfg["tls"]["client_auth"] == "none" and cfg["tls"]["server_name"] == "spiderduck.crawl.svc"
        path = tmp_path / f"{role}.yaml"
        path.write_text(yaml.safe_dump(cfg))
        tls = sd_config.load(str(path), env={}).tls
        assert not tls.require_client_cert and tls.server_name == "spiderduck.crawl.svc"
    with pytest.raises(helm.HelmError, match="/tls/clientAuth"):
        render({"tls": {"existingSecret": "x", "clientAuth": "optional"}})


@pytest.mark.parametrize("role", RUNNING)
def test_with_tls_the_probes_run_spiderduck_health_with_the_roles_config(role):
    """The kubelet's gRPC probe cannot present a client certificate: `spiderduck health` dials
    the role's port with the role's own TLS settings and verifies the server as the name its
    certificate carries, the role's Service name unless tls.serverName is set."""
    port = PORTS[role]
    service = {"fetcher": "sd-spiderduck-fetcher.crawl.svc", "scheduler": "sd-spiderduck-scheduler.crawl.svc",
               "metadata-api": "sd-spiderduck-metadata-api.crawl.svc"}[role]
    for values, name in ((TLS, service),
                         ({"tls": {**TLS["tls"], "serverName": "grpc.spiderduck.internal"}},
                          "grpc.spiderduck.internal")):
        (container,) = pod_spec(render(values), role)["containers"]
        for probe in ("livenessProbe", "readinessProbe"):
            assert "grpc" not in container[probe], probe
            assert container[probe]["exec"]["command"] == [
                "spiderduck", "health", "--address", f"127.0.0.1:{port}",
                "--config", "/etc/spiderduck/config.yaml", "--set", f"tls.server_name={name}"]
            assert container[probe]["timeoutSeconds"] >= 1
    # The config the probe reads is the one the container runs with.
    assert container["args"][-2:] == ["--config", "/etc/spiderduck/config.yaml"]
    # Plaintext: the native gRPC probe, as before.
    (plain,) = pod_spec(render(), role)["containers"]
    assert plain["livenessProbe"]["grpc"] == {"port": port} and "exec" not in plain["livenessProbe"]


def test_the_default_probe_name_is_the_services_own():
    docs = render(TLS)
    api = one(docs, "Service", "metadata-api")["metadata"]["name"]
    fetchers = one(docs, "Service", "fetcher")["metadata"]["name"]
    names = {role: pod_spec(docs, role)["containers"][0]["readinessProbe"]["exec"]["command"][-1]
             for role in ("metadata-api", "fetcher")}
    assert names == {"metadata-api": f"tls.server_name={api}.crawl.svc",
                     "fetcher": f"tls.server_name={fetchers}.crawl.svc"}


def test_secret_files_need_an_fs_group():
    with pytest.raises(helm.HelmError, match="podSecurityContext.fsGroup"):
        render({**TLS, "podSecurityContext": {"runAsNonRoot": True, "runAsUser": 10001, "fsGroup": None}})
    # Without mounted files, no fsGroup is needed.
    render({"podSecurityContext": {"runAsNonRoot": True, "runAsUser": 10001, "fsGroup": None}})


def test_notes_say_whether_tls_is_on():
    off = notes()
    assert "TLS is OFF" in off and "grpcurl -plaintext" in off
    assert "tls.existingSecret is not set" in off.split("WARNINGS:", 1)[1]
    on = notes(TLS)
    assert "TLS is ON (Secret sd-grpc-tls)" in on and "refuses clients without a" in on
    assert "-plaintext" not in on and "tls.existingSecret is not set" not in on
    assert "-servername sd-spiderduck-metadata-api.crawl.svc" in on
    assert "*.sd-spiderduck-fetcher.crawl.svc" in on
    one_name = notes({"tls": {"existingSecret": "x", "serverName": "grpc.internal", "clientAuth": "none"}})
    assert "must name grpc.internal." in one_name and "refuses clients" not in one_name


# ---- the metadata API's bearer tokens and the web UI's HTTPS ---------------------------------

def test_metadata_api_tokens_come_from_a_secret_mounted_there_only(tmp_path):
    from spiderduck.core import config as sd_config
    docs = render({"metadataApi": {"tokens": {"existingSecret": "sd-api-tokens", "key": "callers"}}})
    cfg = role_config(docs, "metadata-api")
    assert mounted_files(docs, "metadata-api")[cfg["metadata_api"]["tokens_file"]] == \
        ("secret", "sd-api-tokens", "callers")
    path = tmp_path / "api.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert sd_config.load(str(path), env={}).metadata_api.tokens_file == cfg["metadata_api"]["tokens_file"]
    for role in ("fetcher", "scheduler", "schema"):
        assert "sd-api-tokens" not in secrets_used(docs, role), role
    assert "tokens_file" not in role_config(render(), "metadata-api")["metadata_api"]
    assert "Bearer <token>`, a token of Secret sd-api-tokens (key tokens)" in notes(
        {"metadataApi": {"tokens": {"existingSecret": "sd-api-tokens"}}})


def test_web_ui_https_and_allowed_hosts(tmp_path):
    from spiderduck.core import config as sd_config
    docs = render({"web": {"tls": {"existingSecret": "sd-web-tls"},
                           "allowedHosts": ["spiderduck.example.com"]}})
    cfg = role_config(docs, "metadata-api")
    files = mounted_files(docs, "metadata-api")
    assert files[cfg["web"]["tls_cert"]] == ("secret", "sd-web-tls", "tls.crt")
    assert files[cfg["web"]["tls_key"]] == ("secret", "sd-web-tls", "tls.key")
    assert cfg["web"]["allowed_hosts"] == ["spiderduck.example.com"]
    path = tmp_path / "api.yaml"
    path.write_text(yaml.safe_dump(cfg))
    web = sd_config.load(str(path), env={}).web
    assert web.tls_cert and web.tls_key and web.allowed_hosts == ["spiderduck.example.com"]
    (port,) = one(docs, "Service", "web")["spec"]["ports"]
    assert port["appProtocol"] == "https"
    assert "sd-web-tls" not in secrets_used(docs, "fetcher") | secrets_used(docs, "scheduler")
    assert "open https://127.0.0.1:8080/" in notes({"web": {"tls": {"existingSecret": "sd-web-tls"}}})
    # The UI off: nothing of it is mounted.
    off = render({"web": {"enabled": False, "tls": {"existingSecret": "sd-web-tls"}}})
    assert "sd-web-tls" not in secrets_used(off, "metadata-api")
    assert role_config(off, "metadata-api")["web"] == {"listen": ""}


# ---- the TLS probe against a real TLS server -------------------------------------------------

README_NAMES = ["sd-spiderduck-metadata-api.crawl.svc", "sd-spiderduck-metadata-api.crawl.svc.cluster.local",
                "sd-spiderduck-fetcher.crawl.svc", "*.sd-spiderduck-fetcher.crawl.svc",
                "sd-spiderduck-scheduler.crawl.svc"]


def _lay_out_secret(tmp_path, docs, role, issued, ca) -> dict:
    """The role's config with its tls files laid out under tmp_path, as the kubelet mounts the
    Secret: the config's paths, rooted at tmp_path."""
    import shutil
    cfg = role_config(docs, role)
    sources = {"tls.crt": issued.cert, "tls.key": issued.key, "ca.crt": ca}
    for path, (_, _, key) in mounted_files(docs, role).items():
        local = tmp_path / path.lstrip("/")
        local.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(sources[key], local)
    cfg["tls"] = {k: f"{tmp_path}{v}" if k in ("cert", "key", "ca") else v for k, v in cfg["tls"].items()}
    return cfg


def _serve_health(tls_settings):
    """A gRPC server of health checking only, SERVING, with the role's server credentials."""
    from concurrent import futures

    import grpc
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc

    from spiderduck.rpc.tls import server_credentials
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    servicer = health.HealthServicer()
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_secure_port("127.0.0.1:0", server_credentials(tls_settings))
    server.start()
    return server, port


def _run_probe(command: list[str], port: int, config_path) -> int:
    from spiderduck.cli.main import main
    argv = list(command[1:])
    argv[argv.index("--address") + 1] = f"127.0.0.1:{port}"
    argv[argv.index("--config") + 1] = str(config_path)
    return main(argv)


@pytest.mark.parametrize("role", ["metadata-api", "fetcher"])
def test_the_tls_probe_passes_against_the_roles_server_with_the_readme_certificate(tmp_path, role):
    """The probe the chart renders, run as the kubelet runs it (its argv, the role's config
    and the Secret's files), against a TLS server with client_auth require: it passes with a
    certificate carrying the names the README lists, and fails with one that lacks them."""
    from spiderduck.core import config as sd_config
    from support.certs import TestCA
    docs = render(TLS)
    (container,) = pod_spec(docs, role)["containers"]
    command = container["readinessProbe"]["exec"]["command"]
    ca = TestCA(tmp_path / "pki")
    for names, expected in ((README_NAMES, 0), (["somewhere-else.crawl.svc"], 1)):
        issued = ca.issue(f"spiderduck-{expected}", dns=names)
        root = tmp_path / f"pod-{expected}"
        cfg = _lay_out_secret(root, docs, role, issued, ca.ca)
        config_path = root / "config.yaml"
        config_path.write_text(yaml.safe_dump(cfg))
        settings = sd_config.load(str(config_path), env={})
        assert settings.tls.require_client_cert
        server, port = _serve_health(settings.tls)
        try:
            assert _run_probe(command, port, config_path) == expected, names
        finally:
            server.stop(None)


# ---- everything on: lint, and each role mounts exactly what its config names ----------------

EVERYTHING = {
    **STORES,
    "image": {"digest": DIGEST},
    "tls": {"existingSecret": "sd-grpc-tls", "clientAuth": "require"},
    "nats": {"url": "tls://nats.internal:4222", "replicas": 3,
             "auth": {"type": "password", "existingSecret": "sd-nats", "user": "spiderduck"},
             "tls": {"ca": {"secret": "nats-ca"}, "clientSecret": "sd-nats-client"}},
    "metadataApi": {"tokens": {"existingSecret": "sd-api-tokens"}},
    "web": {"adminToken": {"existingSecret": "sd-web"}, "tls": {"existingSecret": "sd-web-tls"},
            "allowedHosts": ["spiderduck.example.com"]},
    "networkPolicy": {"memcached": {"cidrs": ["10.20.1.5/32"], "namespaceSelector": None, "podSelector": None}},
}


def test_everything_on_passes_strict_lint():
    report = helm.lint(str(CHART), EVERYTHING, strict=True)
    assert report["errors"] == [], report["errors"]
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


@pytest.mark.parametrize("role", list(WORKLOADS))
def test_each_role_mounts_exactly_the_files_its_config_names(role, tmp_path):
    from spiderduck.core import config as sd_config
    docs = render(EVERYTHING)
    files = set(mounted_files(docs, role))
    named = set()

    def walk(node):
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, str):
            for part in node.replace("?", "&").split("&"):
                value = part.split("=", 1)[-1]
                if value.startswith("/var/run/secrets/"):
                    named.add(value)
    cfg = role_config(docs, role)
    walk(cfg)
    assert named == files, (role, named ^ files)
    assert files, role
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    sd_config.load(str(path), env={"SPIDERDUCK_FETCHER__ADVERTISE": "f-0.f.crawl.svc:50052"})


# ---- one identity per role -------------------------------------------------------------------

def test_each_role_can_have_its_own_certificate_and_the_fetchers_restrict_their_callers(tmp_path):
    from spiderduck.core import config as sd_config
    values = {"tls": {"existingSecret": "sd-grpc-tls", "roleSecrets": {"scheduler": "sd-scheduler-tls",
                                                                      "metadataApi": "sd-api-tls"}},
              "config": {"fetcher": {"allowed_callers": ["sd-spiderduck-scheduler.crawl.svc"],
                                     "admin_callers": ["sd-spiderduck-metadata-api.crawl.svc"]}}}
    docs = render(values)
    expected = {"fetcher": "sd-grpc-tls", "scheduler": "sd-scheduler-tls", "metadata-api": "sd-api-tls"}
    for role, secret in expected.items():
        cfg = role_config(docs, role)
        files = mounted_files(docs, role)
        assert files[cfg["tls"]["cert"]] == ("secret", secret, "tls.crt"), role
        assert secrets_used(docs, role) & set(expected.values()) == {secret}, role
        path = tmp_path / f"{role}.yaml"
        path.write_text(yaml.safe_dump(cfg))
        settings = sd_config.load(str(path), env={})
        assert settings.fetcher.admin_callers == ["sd-spiderduck-metadata-api.crawl.svc"], role
    text = notes(values)
    assert "TLS is ON (Secrets sd-grpc-tls, sd-scheduler-tls, sd-api-tls)" in text
    # All three of their own: no shared Secret needed, TLS still on (exec probes).
    own = render({"tls": {"roleSecrets": {"fetcher": "f", "scheduler": "s", "metadataApi": "m"}}})
    assert "exec" in pod_spec(own, "fetcher")["containers"][0]["livenessProbe"]
    assert {role: role_config(own, role)["tls"]["cert"] != "" for role in RUNNING} == dict.fromkeys(RUNNING, True)


def test_a_role_left_without_a_certificate_is_refused():
    with pytest.raises(helm.HelmError, match="tls.roleSecrets.scheduler"):
        render({"tls": {"roleSecrets": {"fetcher": "f", "metadataApi": "m"}}})
