"""What of the Cassandra store can be checked without a cluster: its URL and its schema.

The store's behaviour is checked by the conformance suite (test_metadata_store.py), which runs
against a real node (one the tests start, or the cluster SPIDERDUCK_TEST_CASSANDRA names).
"""
from __future__ import annotations

import re
import ssl

import pytest

from spiderduck.core.errors import ConfigError, StoreError
from spiderduck.stores import cassandra_schema
from spiderduck.stores.cassandra_cluster import CassandraOptions, build_cluster
from spiderduck.stores.open import open_metadata_store


def test_url_names_hosts_port_and_keyspace():
    o = CassandraOptions.from_url("cassandra://h1,h2:9043/spiderduck")
    assert o.hosts == ("h1", "h2") and o.port == 9043 and o.keyspace == "spiderduck"
    assert o.consistency == "LOCAL_QUORUM" and o.serial_consistency == "LOCAL_SERIAL"
    assert o.dc == "" and o.replication == 1 and o.retries == 2


def test_url_default_port_and_per_host_ports():
    assert CassandraOptions.from_url("cassandra://10.0.0.5/ks").port == 9042
    o = CassandraOptions.from_url("cassandra://a:9100,b:9100,[::1]:9100/ks")
    assert o.hosts == ("a", "b", "::1") and o.port == 9100


def test_url_options_and_credentials():
    o = CassandraOptions.from_url(
        "cassandra://app:s%40cret@h1/ks?consistency=quorum&serial_consistency=SERIAL&dc=dc1"
        "&replication=3&request_timeout=2.5&retries=0&concurrency=64&batch=8&batch_flying=0")
    assert (o.username, o.password) == ("app", "s@cret")
    assert o.consistency == "QUORUM" and o.serial_consistency == "SERIAL"
    assert o.dc == "dc1" and o.replication == 3 and o.request_timeout == 2.5
    assert o.retries == 0 and o.concurrency == 64 and o.batch == 8 and o.batch_flying == 0
    default = CassandraOptions.from_url("cassandra://h1/ks")
    assert (default.batch, default.batch_flying) == (32, 2)
    assert "s@cret" not in repr(o)


@pytest.mark.parametrize("url, reason", [
    ("cassandra://h1,h2:9042/", "name a keyspace"),
    ("cassandra://h1/bad-name", "keyspace"),
    ("cassandra://h1/ks?consistency=MOSTLY", "consistency"),
    ("cassandra://h1/ks?colour=red", "unknown cassandra option"),
    ("cassandra://h1/ks?replication=0", "out of range"),
    ("cassandra://h1/ks?retries=many", "not a valid value"),
    ("cassandra://h1/ks?reconnect_max=0.1", "out of range"),
    ("cassandra://h1/ks?batch=0", "out of range"),
    ("cassandra://h1/ks?batch=100000", "out of range"),
    ("cassandra://h1/ks?batch_flying=-1", "out of range"),
    ("cassandra://h1:9042,h2:9043/ks", "one port"),
    ("cassandra://h1:port/ks", "bad port"),
    ("cassandra://,h2/ks", "empty host"),
])
def test_bad_urls_say_why(url, reason):
    with pytest.raises(ConfigError, match=reason):
        CassandraOptions.from_url(url)


def test_the_cluster_is_token_aware_over_the_local_dc():
    from cassandra import ConsistencyLevel
    from cassandra.cluster import EXEC_PROFILE_DEFAULT
    from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy
    cluster = build_cluster(CassandraOptions.from_url(
        "cassandra://127.0.0.1:9142/ks?dc=dc1&consistency=LOCAL_ONE"))
    profile = cluster.profile_manager.profiles[EXEC_PROFILE_DEFAULT]
    assert isinstance(profile.load_balancing_policy, TokenAwarePolicy)
    assert isinstance(profile.load_balancing_policy._child_policy, DCAwareRoundRobinPolicy)
    assert profile.load_balancing_policy._child_policy.local_dc == "dc1"
    assert profile.consistency_level == ConsistencyLevel.LOCAL_ONE
    assert cluster.port == 9142


def test_a_node_that_went_away_is_tried_again_within_seconds_not_minutes():
    """The driver's default waits up to 600 s between tries; ours backs off to reconnect_max."""
    def delays(url, n=12):
        policy = build_cluster(CassandraOptions.from_url(url)).reconnection_policy
        return list(zip(range(n), policy.new_schedule()))
    default = [d for _, d in delays("cassandra://127.0.0.1/ks")]
    assert default[0] <= 1.0 and max(default) <= 10.0 and default[-1] >= 5.0
    # It never stops trying: past the driver's default of 64 tries (~10 minutes).
    assert len(delays("cassandra://127.0.0.1/ks", 500)) == 500
    assert max(d for _, d in delays("cassandra://127.0.0.1/ks?reconnect_max=3")) <= 3.0


async def test_an_unreachable_cluster_is_a_retryable_store_error():
    with pytest.raises(StoreError) as caught:        # nothing listens on port 9 (discard)
        await open_metadata_store("cassandra://127.0.0.1:9/ks?connect_timeout=2")
    assert caught.value.retryable


async def test_unsupported_schemes_are_refused():
    with pytest.raises(ConfigError, match="cassandra://"):
        await open_metadata_store("mongodb://h/db")


_CREATE = re.compile(r"^CREATE TABLE IF NOT EXISTS \{keyspace\}\.(\w+) \((.+)\)$", re.S)
_ADD = re.compile(r"^ALTER TABLE \{keyspace\}\.(\w+) ADD IF NOT EXISTS (\w+) (\w+)$")


def test_migrations_are_ordered_and_each_statement_is_idempotent_cql():
    versions = [v for v, _ in cassandra_schema.MIGRATIONS]
    assert versions == sorted(set(versions)) and versions[0] == 1
    assert cassandra_schema.LATEST == versions[-1]
    for _, statements in cassandra_schema.MIGRATIONS:
        assert statements
        for statement in statements:
            assert ";" not in statement and "'" not in statement
            if _ADD.match(statement):
                continue
            match = _CREATE.match(statement)
            assert match, statement
            body = match.group(2)
            assert body.count("(") == body.count(")") and "PRIMARY KEY" in body


def test_version_one_has_the_tables_the_store_uses():
    tables = {}
    for statement in cassandra_schema.statements(1, "ks"):
        name, body = re.match(r"CREATE TABLE IF NOT EXISTS ks\.(\w+) \((.+)\)", statement).groups()
        tables[name] = " ".join(body.split())
    assert tables == {
        "schema_version": "id int PRIMARY KEY, version int, applied_at timestamp",
        "records": "key text PRIMARY KEY, record text, first_seen timestamp, fetched_at timestamp",
        "resolutions": "url text PRIMARY KEY, key text",
        "crawl_status": "key text PRIMARY KEY, status text, fetched_at timestamp",
        "shares": 'key text PRIMARY KEY, "count" counter',
    }


def test_version_two_adds_the_records_protobuf_column():
    assert cassandra_schema.statements(2, "ks") == [
        "ALTER TABLE ks.records ADD IF NOT EXISTS record_pb blob"]


def test_version_three_adds_first_seen_and_share_count_cells():
    assert cassandra_schema.statements(3, "ks") == [
        "ALTER TABLE ks.records ADD IF NOT EXISTS earliest timestamp",
        "ALTER TABLE ks.records ADD IF NOT EXISTS shares_seen bigint"]


def test_version_four_adds_the_aliases_a_forget_reads():
    assert cassandra_schema.statements(4, "ks") == [
        "CREATE TABLE IF NOT EXISTS ks.aliases ( key text, url text, PRIMARY KEY (key, url))"]


def test_keyspace_replication():
    simple = cassandra_schema.keyspace_statement("ks")
    assert simple == ("CREATE KEYSPACE IF NOT EXISTS ks WITH replication = "
                      "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    nts = cassandra_schema.keyspace_statement("ks", replication=3, dc="dc1")
    assert nts.endswith("{'class': 'NetworkTopologyStrategy', 'dc1': 3}")
    with pytest.raises(ConfigError):
        cassandra_schema.keyspace_statement("ks; DROP KEYSPACE x")
    with pytest.raises(ConfigError):
        cassandra_schema.keyspace_statement("ks", dc="x'y")


# --- TLS and secrets (the node side runs in test_cassandra_tls.py) --------------------------------

def test_tls_options(tmp_path):
    from support.certs import TestCA
    ca = TestCA(tmp_path)
    client = ca.issue("spiderduck")
    o = CassandraOptions.from_url(f"cassandra://127.0.0.1/ks?ssl=true&ca={ca.ca}"
                                  f"&cert={client.cert}&key={client.key}")
    assert (o.ssl, o.ca, o.cert, o.key) == (True, ca.ca, client.cert, client.key)
    assert o.check_hostname
    context = o.ssl_context()
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    assert build_cluster(o).ssl_context.verify_mode is ssl.CERT_REQUIRED
    relaxed = CassandraOptions.from_url(f"cassandra://h1/ks?ssl=1&ca={ca.ca}&check_hostname=false")
    assert relaxed.ssl_context().verify_mode is ssl.CERT_REQUIRED
    assert not relaxed.ssl_context().check_hostname
    assert CassandraOptions.from_url("cassandra://h1/ks").ssl_context() is None
    assert build_cluster(CassandraOptions.from_url("cassandra://127.0.0.1/ks")).ssl_context is None


def test_password_file_is_read_and_given_to_the_driver(tmp_path):
    from cassandra.auth import PlainTextAuthProvider
    secret = tmp_path / "cassandra-password"
    secret.write_text("s3cret pass\n")
    o = CassandraOptions.from_url(f"cassandra://app@127.0.0.1/ks?password_file={secret}")
    assert (o.username, o.password, o.password_file) == ("app", "s3cret pass", str(secret))
    assert "s3cret" not in repr(o)
    auth = build_cluster(o).auth_provider
    assert isinstance(auth, PlainTextAuthProvider)
    assert (auth.username, auth.password) == ("app", "s3cret pass")


@pytest.mark.parametrize("query, reason", [
    ("ssl=maybe", "ssl='maybe' is not a valid value"),
    ("ca=/etc/ca.pem", "need ssl=true"),
    ("ssl=false&cert=/c.pem&key=/k.pem", "need ssl=true"),
    ("password_file=/run/secrets/pw", "needs a user name"),
])
def test_bad_tls_and_secret_options(query, reason):
    with pytest.raises(ConfigError, match=reason):
        CassandraOptions.from_url(f"cassandra://h1/ks?{query}")


@pytest.mark.parametrize("option", ["ca", "cert", "key", "password_file"])
def test_a_missing_file_names_its_option_and_path(tmp_path, option):
    from support.certs import TestCA
    ca = TestCA(tmp_path)
    client = ca.issue("spiderduck")
    files = {"ca": ca.ca, "cert": client.cert, "key": client.key}
    missing = str(tmp_path / "nowhere.pem")
    query = "&".join(f"{name}={missing if name == option else path}"
                     for name, path in files.items())
    url = f"cassandra://app@h1/ks?ssl=true&{query}"
    if option == "password_file":
        url += f"&password_file={missing}"
    with pytest.raises(ConfigError) as raised:
        CassandraOptions.from_url(url).ssl_context()
    assert f"{option}={missing}: no such file" in str(raised.value)


def test_the_password_never_shows_in_an_error():
    """Every ConfigError that quotes the URL shows the password as <set>."""
    for url in ("cassandra://app:hunter2@h1/",                      # no keyspace
                "cassandra://app:hunter2@h1:port/ks",               # bad port
                "cassandra://app:hunter2@,h2/ks",                   # empty host
                "cassandra://app:hunter2@h1/ks?password_file=/pw",  # both
                "cassandra://app:hunter2@h1/ks?ca=/ca.pem",         # ca without ssl
                "cassandra://app:hunter2@h1:1,h2:2/ks"):            # two ports
        with pytest.raises(ConfigError) as raised:
            CassandraOptions.from_url(url)
        assert "hunter2" not in str(raised.value) and "app:<set>@" in str(raised.value), url


async def test_the_password_never_shows_when_opening_fails():
    with pytest.raises(ConfigError) as raised:
        await open_metadata_store("cassandra://app:hunter2@h1/")
    assert "hunter2" not in str(raised.value)
    with pytest.raises(ConfigError) as raised:
        await open_metadata_store("mysql://app:hunter2@h1/db")
    assert "hunter2" not in str(raised.value) and "app:<set>@h1" in str(raised.value)
