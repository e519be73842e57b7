"""The chart's part of issue 26, "Trust on the wire": images pinned by digest, TLS for every
gRPC server from one cert-manager Secret (and the probes that still pass with it), NATS
credentials and TLS from Secrets, store credentials mounted only in the roles that use them,
the metadata API's bearer tokens, and the web UI's admin client pointed at the fetchers.

Helm runs in-process through the `helm-python-sdk` wheel, as in test_chart.py.
"""
from __future__ import annotations

import pytest
import yaml

from support.chart import CHART, helm, manifests, one, render, role_config

DIGEST = "sha256:" + "0123456789abcdef" * 4
WORKLOADS = {"fetcher": "StatefulSet", "scheduler": "Deployment", "metadata-api": "Deployment",
             "schema": "Job"}
RUNNING = ("fetcher", "scheduler", "metadata-api")
PORTS = {"fetcher": 50052, "scheduler": 50053, "metadata-api": 50051}
TLS = {"tls": {"existingSecret": "sd-grpc-tls"}}


def pod_spec(docs: list[dict], role: str) -> dict:
    return one(docs, WORKLOADS[role], role)["spec"]["template"]["spec"]


def mounted_files(docs: list[dict], role: str) -> dict[str, tuple[str, str, str]]:
    """Every file a role's container has from a Secret or ConfigMap item: path -> ("secret" or
    "configMap", the object's name, its key). Checks each such mount is read-only, mode 0440
    and no subPath (a subPath mount never sees a renewed Secret)."""
    spec = pod_spec(docs, role)
    volumes = {v["name"]: v for v in spec["volumes"]}
    files = {}
    for container in spec["containers"]:
        for mount in container["volumeMounts"]:
            volume = volumes[mount["name"]]
            for kind in ("secret", "configMap"):
                source = volume.get(kind)
                if not source or "items" not in source:
                    continue
                assert mount["readOnly"] is True and "subPath" not in mount, (role, mount)
                assert source["defaultMode"] == 0o440, (role, mount)
                for item in source["items"]:
                    files[f"{mount['mountPath']}/{item['path']}"] = (
                        kind, source.get("secretName") or source.get("name"), item["key"])
    return files


def env_names(docs: list[dict], role: str) -> set[str]:
    return {e["name"] for c in pod_spec(docs, role)["containers"] for e in c.get("env", [])}


def secrets_used(docs: list[dict], role: str) -> set[str]:
    """Every Secret a role's pods reference: volumes, env and envFrom."""
    spec = pod_spec(docs, role)
    names = {v["secret"]["secretName"] for v in spec["volumes"] if "secret" in v}
    for c in spec["containers"]:
        names |= {e["valueFrom"]["secretKeyRef"]["name"] for e in c.get("env", [])
                  if "secretKeyRef" in e.get("valueFrom", {})}
        names |= {e["secretRef"]["name"] for e in c.get("envFrom", []) if "secretRef" in e}
    return names


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


# ---- TLS for every gRPC server ---------------------------------------------------------------

def test_tls_secret_is_mounted_in_every_role_and_named_in_its_config(tmp_path):
    from common import config as sd_config
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
    from common import config as sd_config
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


def notes(values: dict | None = None) -> str:
    (text,) = [s for p, s in manifests(values).items() if p.endswith("NOTES.txt")]
    return text


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


# ---- NATS credentials and TLS ----------------------------------------------------------------

@pytest.mark.parametrize("kind,key,config_key,file", [
    ("creds", "", "nats_creds", "nats.creds"),
    ("nkey", "seed", "nats_nkey_seed", "nkey.seed"),
    ("token", "", "nats_token_file", "token"),
    ("password", "pw", "nats_password_file", "password"),
])
def test_nats_credentials_come_from_a_secret_one_kind_at_a_time(tmp_path, kind, key, config_key, file):
    from common import config as sd_config
    auth = {"type": kind, "existingSecret": "sd-nats", "key": key}
    if kind == "password":
        auth["user"] = "spiderduck"
    docs = render({"nats": {"auth": auth}})
    others = {"nats_creds", "nats_nkey_seed", "nats_token_file", "nats_password_file", "nats_user"} - {config_key}
    for role in RUNNING:
        cfg = role_config(docs, role)
        assert mounted_files(docs, role)[cfg[config_key]] == ("secret", "sd-nats", key or file), role
        assert cfg[config_key].endswith("/" + file)
        assert not (others - {"nats_user"}) & set(cfg), role
        assert cfg.get("nats_user") == auth.get("user"), role
        path = tmp_path / f"{role}.yaml"
        path.write_text(yaml.safe_dump(cfg))
        assert getattr(sd_config.load(str(path), env={}), config_key) == cfg[config_key]
    assert "sd-nats" not in secrets_used(docs, "schema")
    assert not any(k.startswith("nats") for k in role_config(docs, "schema"))


@pytest.mark.parametrize("auth,message", [
    ({"type": "token"}, "nats.auth: set both"),
    ({"existingSecret": "sd-nats"}, "nats.auth: set both"),
    ({"type": "password", "existingSecret": "sd-nats"}, "nats.auth.user"),
    ({"type": "token", "existingSecret": "sd-nats", "user": "me"}, "nats.auth.user"),
])
def test_nats_credentials_half_set_are_refused(auth, message):
    with pytest.raises(helm.HelmError, match=message):
        render({"nats": {"auth": auth}})


def test_nats_tls_ca_from_a_configmap_or_a_secret_and_a_client_certificate():
    docs = render({"nats": {"tls": {"ca": {"configMap": "nats-ca", "key": "bundle.pem"},
                                    "clientSecret": "sd-nats-client"}}})
    for role in RUNNING:
        cfg, files = role_config(docs, role), mounted_files(docs, role)
        assert files[cfg["nats_tls_ca"]] == ("configMap", "nats-ca", "bundle.pem")
        assert files[cfg["nats_tls_cert"]] == ("secret", "sd-nats-client", "tls.crt")
        assert files[cfg["nats_tls_key"]] == ("secret", "sd-nats-client", "tls.key")
    secret = render({"nats": {"tls": {"ca": {"secret": "nats-ca"}}}})
    cfg = role_config(secret, "fetcher")
    assert mounted_files(secret, "fetcher")[cfg["nats_tls_ca"]] == ("secret", "nats-ca", "ca.crt")
    assert "nats_tls_cert" not in cfg
    with pytest.raises(helm.HelmError, match="nats.tls.ca: set secret or configMap, not both"):
        render({"nats": {"tls": {"ca": {"secret": "a", "configMap": "b"}}}})
    with pytest.raises(helm.HelmError, match="/nats/tls/ca"):
        render({"nats": {"tls": {"ca": {"secretName": "a"}}}})


# ---- store credentials only where the store is used -----------------------------------------

STORES = {
    "cassandra": {"contactPoints": ["cass-a.internal", "cass-b.internal"], "keyspace": "sd",
                  "auth": {"username": "spiderduck", "existingSecret": "sd-cassandra", "key": "pw"},
                  "tls": {"enabled": True, "ca": {"configMap": "cassandra-ca"},
                          "clientSecret": "sd-cassandra-client"}},
    "hdfs": {"namenode": "nn.internal:9871", "path": "/warc", "user": "crawler",
             "tls": {"enabled": True, "ca": {"secret": "hdfs-ca", "key": "root.pem"}}},
    "memcached": {"host": "robots.internal", "tls": {"enabled": True, "ca": {"secret": "mc-ca"}}},
}
STORE_OBJECTS = {"sd-cassandra", "cassandra-ca", "sd-cassandra-client", "hdfs-ca", "mc-ca"}


def objects_used(docs: list[dict], role: str) -> set[str]:
    spec = pod_spec(docs, role)
    names = secrets_used(docs, role)
    names |= {v["configMap"]["name"] for v in spec["volumes"] if "configMap" in v}
    return names


@pytest.fixture(scope="module")
def store_docs() -> list[dict]:
    return render(STORES)


def test_the_cassandra_password_reaches_only_the_roles_that_open_the_metadata_store(store_docs):
    for role in ("scheduler", "metadata-api", "schema"):
        cfg, files = role_config(store_docs, role), mounted_files(store_docs, role)
        url = cfg["metadata_store"]
        head, _, query = url.partition("?")
        assert head == "cassandra://spiderduck@cass-a.internal,cass-b.internal:9042/sd", role
        options = dict(kv.split("=", 1) for kv in query.split("&"))
        assert options["ssl"] == "true" and options["consistency"] == "LOCAL_QUORUM"
        assert files[options["password_file"]] == ("secret", "sd-cassandra", "pw"), role
        assert files[options["ca"]] == ("configMap", "cassandra-ca", "ca.crt"), role
        assert files[options["cert"]] == ("secret", "sd-cassandra-client", "tls.crt"), role
        assert files[options["key"]] == ("secret", "sd-cassandra-client", "tls.key"), role
    # Never the password itself, anywhere: only the file's path.
    for d in store_docs:
        if d["kind"] == "ConfigMap":
            assert "password=" not in str(d["data"]) and ":pw@" not in str(d["data"])


def test_the_cassandra_store_reads_the_rendered_url_with_the_mounted_files(store_docs, tmp_path):
    """The store's own parser takes the URL, reading the password from the file the pod mounts
    (laid out here under tmp_path as the kubelet lays out the Secret)."""
    from common.stores.cassandra_cluster import CassandraOptions
    url = role_config(store_docs, "metadata-api")["metadata_store"]
    for path in mounted_files(store_docs, "metadata-api"):
        local = tmp_path / path.lstrip("/")
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_text("s3cret\n" if path.endswith("/password") else "PEM\n")
    options = CassandraOptions.from_url(url.replace("=/var/run/", f"={tmp_path}/var/run/"))
    assert (options.username, options.password, options.ssl) == ("spiderduck", "s3cret", True)
    assert options.hosts == ("cass-a.internal", "cass-b.internal") and options.check_hostname
    assert options.ca.endswith("/cassandra-ca/ca.crt") and options.cert.endswith("/tls.crt")
    one_cert = render({"cassandra": {"tls": {"enabled": True, "checkHostname": False}}})
    relaxed = CassandraOptions.from_url(role_config(one_cert, "scheduler")["metadata_store"])
    assert relaxed.ssl and not relaxed.check_hostname


def test_the_hdfs_store_reads_the_rendered_https_url_with_the_mounted_ca(store_docs, tmp_path):
    import shutil

    from common.stores.hdfs_content import HdfsLocation
    from support.certs import TestCA
    url = role_config(store_docs, "scheduler")["content_store"]
    (ca_path,) = [p for p, src in mounted_files(store_docs, "scheduler").items() if src[1] == "hdfs-ca"]
    local = tmp_path / ca_path.lstrip("/")
    local.parent.mkdir(parents=True)
    shutil.copy(TestCA(tmp_path / "pki").ca, local)
    location = HdfsLocation.parse(url.replace("=/var/run/", f"={tmp_path}/var/run/"))
    assert location.https and location.ca == str(local)
    assert location.namenodes == (("nn.internal", 9871),) and location.user == "crawler"


def test_the_fetcher_pod_has_no_volume_or_env_from_a_store_secret_but_memcached(store_docs):
    """The fetchers read pages strangers choose: they mount the memcached CA they use, and no
    Cassandra password, Cassandra or HDFS certificate; their config names no store."""
    spec = pod_spec(store_docs, "fetcher")
    used = objects_used(store_docs, "fetcher")
    assert used & STORE_OBJECTS == {"mc-ca"}
    for container in spec["containers"]:
        for env in container.get("env", []):
            ref = env.get("valueFrom", {}).get("secretKeyRef", {}).get("name")
            assert ref not in STORE_OBJECTS, env
        assert not container.get("envFrom"), container.get("envFrom")
    assert not {v["name"] for v in spec["volumes"]} & {"cassandra-auth", "cassandra-ca", "cassandra-client", "hdfs-ca"}
    cfg = role_config(store_docs, "fetcher")
    assert not {"metadata_store", "content_store"} & set(cfg)
    ca = mounted_files(store_docs, "fetcher")
    (ca_path,) = [p for p, src in ca.items() if src[1] == "mc-ca"]
    assert cfg["robots_cache"] == f"memcacheds://robots.internal:11211?ca={ca_path}"


def test_hdfs_tls_only_in_the_schedulers_and_memcached_only_in_the_fetchers(store_docs):
    cfg, files = role_config(store_docs, "scheduler"), mounted_files(store_docs, "scheduler")
    head, _, query = cfg["content_store"].partition("?")
    assert head == "hdfs+https://nn.internal:9871/warc"
    options = dict(kv.split("=", 1) for kv in query.split("&"))
    assert options["user"] == "crawler" and files[options["ca"]] == ("secret", "hdfs-ca", "root.pem")
    assert objects_used(store_docs, "scheduler") & STORE_OBJECTS == STORE_OBJECTS - {"mc-ca"}
    assert objects_used(store_docs, "metadata-api") & STORE_OBJECTS == \
        {"sd-cassandra", "cassandra-ca", "sd-cassandra-client"}
    assert objects_used(store_docs, "schema") & STORE_OBJECTS == \
        {"sd-cassandra", "cassandra-ca", "sd-cassandra-client"}
    assert "robots_cache" not in cfg


def test_notes_warn_when_hdfs_https_meets_the_http_ports_of_the_policy():
    assert "hdfs.tls.enabled while networkPolicy.hdfs.ports" in notes({"hdfs": {"tls": {"enabled": True}}})
    assert "hdfs.tls.enabled while" not in notes({"hdfs": {"tls": {"enabled": True}},
                                                  "networkPolicy": {"hdfs": {"ports": [9871, 9865]}}})
    assert "hdfs.tls.enabled while" not in notes()


def test_store_tls_defaults_keep_the_plain_urls():
    docs = render()
    assert role_config(docs, "scheduler")["content_store"].startswith("hdfs://")
    assert role_config(docs, "fetcher")["robots_cache"] == "memcached://memcached.memcached.svc:11211"
    assert "@" not in role_config(docs, "scheduler")["metadata_store"]
    assert "ssl" not in role_config(docs, "metadata-api")["metadata_store"]
    # TLS with the system CAs: no file, only the scheme or flag.
    sys_ca = render({"cassandra": {"tls": {"enabled": True}}, "hdfs": {"tls": {"enabled": True}},
                     "memcached": {"tls": {"enabled": True}}})
    assert role_config(sys_ca, "scheduler")["metadata_store"].endswith("&replication=3&ssl=true")
    assert "ca=" not in role_config(sys_ca, "scheduler")["content_store"]
    assert role_config(sys_ca, "fetcher")["robots_cache"] == "memcacheds://memcached.memcached.svc:11211"


@pytest.mark.parametrize("values,message", [
    ({"cassandra": {"auth": {"username": "sd"}}}, "cassandra.auth: set both"),
    ({"cassandra": {"auth": {"existingSecret": "sd-cassandra"}}}, "cassandra.auth: set both"),
    ({"cassandra": {"tls": {"ca": {"secret": "ca"}}}}, "cassandra.tls: ca or clientSecret is set"),
    ({"hdfs": {"tls": {"ca": {"configMap": "ca"}}}}, "hdfs.tls: ca or clientSecret is set"),
    ({"memcached": {"tls": {"ca": {"secret": "ca"}}}}, "memcached.tls: ca or clientSecret is set"),
    ({"cassandra": {"auth": {"username": "a@b", "existingSecret": "x"}}}, "/cassandra/auth/username"),
    ({"hdfs": {"tls": {"clientSecret": "x"}}}, "clientSecret"),
])
def test_half_set_store_credentials_are_refused(values, message):
    with pytest.raises(helm.HelmError, match=message):
        render(values)


# ---- the metadata API's bearer tokens and the web UI's HTTPS ---------------------------------

def test_metadata_api_tokens_come_from_a_secret_mounted_there_only(tmp_path):
    from common import config as sd_config
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
    from common import config as sd_config
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
    (port,) = [p for p in one(docs, "Service", "metadata-api")["spec"]["ports"] if p["name"] == "web"]
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

    from common.grpc_tls import server_credentials
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    servicer = health.HealthServicer()
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_secure_port("127.0.0.1:0", server_credentials(tls_settings))
    server.start()
    return server, port


def _run_probe(command: list[str], port: int, config_path) -> int:
    from cli.main import main
    argv = list(command[1:])
    argv[argv.index("--address") + 1] = f"127.0.0.1:{port}"
    argv[argv.index("--config") + 1] = str(config_path)
    return main(argv)


@pytest.mark.parametrize("role", ["metadata-api", "fetcher"])
def test_the_tls_probe_passes_against_the_roles_server_with_the_readme_certificate(tmp_path, role):
    """The probe the chart renders, run as the kubelet runs it (its argv, the role's config
    and the Secret's files), against a TLS server with client_auth require: it passes with a
    certificate carrying the names the README lists, and fails with one that lacks them."""
    from common import config as sd_config
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
    from common import config as sd_config
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
    from common import config as sd_config
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
