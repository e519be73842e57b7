"""The chart's credentials (issue 26): NATS credentials and TLS from Secrets; the Cassandra
password, its TLS, HDFS over HTTPS and memcached's TLS reach only the roles that open that store, and each role's config reads the files
mounted for it. Helm runs in-process through the `helm-python-sdk` wheel, as in test_chart.py."""
from __future__ import annotations

import pytest
import yaml

from support.chart import RUNNING, STORES, helm, mounted_files, notes, pod_spec, render, role_config, secrets_used


# ---- NATS credentials and TLS ----------------------------------------------------------------

@pytest.mark.parametrize("kind,key,config_key,file", [
    ("creds", "", "nats_creds", "nats.creds"),
    ("nkey", "seed", "nats_nkey_seed", "nkey.seed"),
    ("token", "", "nats_token_file", "token"),
    ("password", "pw", "nats_password_file", "password"),
])
def test_nats_credentials_come_from_a_secret_one_kind_at_a_time(tmp_path, kind, key, config_key, file):
    from spiderduck.core import config as sd_config
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
    from spiderduck.stores.cassandra_cluster import CassandraOptions
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

    from spiderduck.stores.hdfs_content import HdfsLocation
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


def test_hdfs_tls_in_the_schedulers_and_the_metadata_api_memcached_only_in_the_fetchers(store_docs):
    cfg, files = role_config(store_docs, "scheduler"), mounted_files(store_docs, "scheduler")
    head, _, query = cfg["content_store"].partition("?")
    assert head == "hdfs+https://nn.internal:9871/warc"
    options = dict(kv.split("=", 1) for kv in query.split("&"))
    assert options["user"] == "crawler" and files[options["ca"]] == ("secret", "hdfs-ca", "root.pem")
    assert objects_used(store_docs, "scheduler") & STORE_OBJECTS == STORE_OBJECTS - {"mc-ca"}
    # The metadata API reads the content store (ExplainUrl): the HDFS CA too, never memcached's.
    assert objects_used(store_docs, "metadata-api") & STORE_OBJECTS == \
        {"sd-cassandra", "cassandra-ca", "sd-cassandra-client", "hdfs-ca"}
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
