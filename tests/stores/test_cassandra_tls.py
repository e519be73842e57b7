"""The Cassandra store over TLS, against a real node that speaks TLS only.

One node for the module (tests/support/cassandra_server.py, one extra start of a few seconds):
client_encryption_options with a certificate made here by TestCA (PEM, no keystore tool), TLS
only (optional: false), require_client_auth, and PasswordAuthenticator. So every client that
gets in has a certificate from our CA and the superuser's password; each test takes one of them
away, or hands the node something it should not accept.
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses

import pytest

from spiderduck.core.errors import StoreError
from spiderduck.stores.cassandra_cluster import CassandraOptions, apply_schema, connect
from spiderduck.stores.open import open_metadata_store
from support.cassandra_server import SUPERUSER
from support.certs import Issued, TestCA
from support.maven_backend import start_or_skip
from test_metadata_store import record

USER, PASSWORD = SUPERUSER
FAST = "connect_timeout=5&request_timeout=10"


@dataclasses.dataclass
class Node:
    port: int
    ca: TestCA
    client: Issued               # a certificate from the node's CA
    other_ca: TestCA
    stranger: Issued             # a certificate from another CA
    password_file: str

    def url(self, query: str = "", *, host: str = "127.0.0.1", userinfo: str = USER,
            keyspace: str = "system") -> str:
        return f"cassandra://{userinfo}@{host}:{self.port}/{keyspace}?{FAST}&{query}"

    def tls(self, *, ca: str = "", cert: Issued | None = None) -> str:
        """ssl=true&ca=...&cert=...&key=...&password_file=... (the node's CA and our client
        certificate unless told otherwise)."""
        cert = cert or self.client
        return (f"ssl=true&ca={ca or self.ca.ca}&cert={cert.cert}&key={cert.key}"
                f"&password_file={self.password_file}")


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    from support.cassandra_server import CassandraServer, NodeTls, resolve
    folder = tmp_path_factory.mktemp("cassandra-tls")
    ca = TestCA(folder / "ca")
    certificate = ca.issue("cassandra-node")                    # localhost and 127.0.0.1
    other = TestCA(folder / "other", name="Another CA")
    password_file = folder / "password"
    password_file.write_text(PASSWORD + "\n")
    server = start_or_skip("Cassandra", lambda: CassandraServer(
        resolve(), tls=NodeTls(certificate.cert, certificate.key, ca.ca), password=True).start())
    try:
        yield Node(server.port, ca, ca.issue("spiderduck"), other, other.issue("stranger"),
                   str(password_file))
    finally:
        server.stop()


async def refused(url: str) -> StoreError:
    """The StoreError that connecting with `url` raises (and that it raises one)."""
    with pytest.raises(StoreError) as raised:
        cluster, _ = await connect(CassandraOptions.from_url(url))
        await asyncio.to_thread(cluster.shutdown)
    return raised.value


async def test_the_store_works_over_tls_with_client_certificate_and_password_file(node):
    url = node.url(node.tls(), keyspace="spiderduck_tls")
    await apply_schema(url)
    store = await open_metadata_store(url)
    try:
        rec = record()
        stored = await store.put(rec.final_url, rec, ["http://s.test/a", rec.final_url])
        assert (await store.get_many(["http://s.test/a"]))[0] == stored
    finally:
        await store.close()


async def test_a_plaintext_client_is_refused(node):
    error = await refused(node.url(f"password_file={node.password_file}"))
    assert "Unable to connect" in str(error) and "authenticate" not in str(error)


async def test_a_node_certificate_from_another_ca_is_refused(node):
    error = await refused(node.url(node.tls(ca=node.other_ca.ca)))
    assert "CERTIFICATE_VERIFY_FAILED" in str(error)


async def test_without_a_client_certificate_the_node_refuses(node):
    no_cert = f"ssl=true&ca={node.ca.ca}&password_file={node.password_file}"
    error = await refused(node.url(no_cert))
    assert "SSL" in str(error) and "authenticate" not in str(error)     # in the handshake


async def test_a_client_certificate_from_another_ca_is_refused(node):
    error = await refused(node.url(node.tls(cert=node.stranger)))
    assert "SSL" in str(error) and "authenticate" not in str(error)


async def test_a_wrong_password_is_refused_and_never_shown(node, tmp_path):
    wrong = tmp_path / "wrong-password"
    wrong.write_text("not-the-Pa55word\n")
    query = node.tls().replace(node.password_file, str(wrong))
    error = await refused(node.url(query))
    assert "authenticate" in str(error).lower() or "credentials" in str(error).lower()
    assert "not-the-Pa55word" not in str(error)
    # The password in the URL instead: refused alike, and not shown either.
    in_url = query.replace(f"&password_file={wrong}", "")
    error = await refused(node.url(in_url, userinfo=f"{USER}:not-the-Pa55word"))
    assert "not-the-Pa55word" not in str(error) and "not-the-Pa55word" not in repr(error)


@contextlib.asynccontextmanager
async def forwarder(listen: tuple[str, int], target: tuple[str, int]):
    """A TCP forwarder: the node reached at another address than its certificate names."""
    async def pipe(reader, writer):
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def serve(reader, writer):
        upstream_reader, upstream_writer = await asyncio.open_connection(*target)
        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    server = await asyncio.start_server(serve, *listen)
    try:
        yield
    finally:
        server.close()


async def test_a_node_dialed_at_an_address_its_certificate_does_not_name(node):
    """Hostname checking (the default) refuses it; check_hostname=false trusts the CA alone."""
    async with forwarder(("127.0.0.2", node.port), ("127.0.0.1", node.port)):
        error = await refused(node.url(node.tls(), host="127.0.0.2"))
        assert "127.0.0.2" in str(error) and "CERTIFICATE_VERIFY_FAILED" in str(error)
        url = node.url(node.tls() + "&check_hostname=false", host="127.0.0.2")
        cluster, session = await connect(CassandraOptions.from_url(url))
        try:
            row = await asyncio.to_thread(lambda: session.execute(
                "SELECT release_version FROM system.local").one())
            assert row["release_version"]
        finally:
            await asyncio.to_thread(cluster.shutdown)
