"""The HDFS content store over HTTPS (hdfs+https://), against a real mini HDFS serving HTTPS only.

One cluster for the module (tests/support/hdfs_server.py with `tls`: dfs.http.policy HTTPS_ONLY,
the namenode and the datanode both serving a certificate made here by TestCA). A store with
`ca=` of that CA writes and reads; one with another CA is refused in the handshake, even when
the environment's REQUESTS_CA_BUNDLE names the cluster's CA (requests would let it win).
"""
from __future__ import annotations

import dataclasses
import uuid

import pytest
import requests

from spiderduck.core.errors import StoreError
from spiderduck.stores.content import FetchedContent
from spiderduck.stores.open import open_content_store
from support.certs import TestCA
from support.maven_backend import start_or_skip


@dataclasses.dataclass
class Cluster:
    netloc: str
    user: str
    ca: str
    other_ca: str

    def url(self, ca: str = "") -> str:
        return (f"hdfs+https://{self.netloc}/tmp/spiderduck-https-{uuid.uuid4().hex}/content"
                f"?user={self.user}&ca={ca or self.ca}&timeout=10")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from support.hdfs_server import HdfsServer, NodeTls, resolve
    folder = tmp_path_factory.mktemp("hdfs-https")
    ca = TestCA(folder / "ca")
    node = ca.issue("hdfs")                          # localhost and 127.0.0.1, as both nodes bind
    other = TestCA(folder / "other", name="Another CA")
    server = start_or_skip("HDFS", lambda: HdfsServer(
        resolve(), tls=NodeTls(node.cert, node.key, ca.ca)).start())
    try:
        yield Cluster(server.webhdfs.removeprefix("https://"), server.user, ca.ca, other.ca)
    finally:
        server.stop()


def fetched(n: int) -> FetchedContent:
    return FetchedContent(url=f"https://a.test/{n}", http_status=200, headers=(),
                          body=f"<p>{n}</p>".encode(), fetched_at=1_700_000_000.0 + n)


async def test_the_store_writes_and_reads_over_https(cluster):
    store = await open_content_store(cluster.url())
    try:
        refs = [await store.append(fetched(n)) for n in range(3)]
        for n, ref in enumerate(refs):
            _, body = await store.read(ref)
            assert body.endswith(f"\r\n\r\n<p>{n}</p>".encode())     # the HTTP response
    finally:
        await store.close()


def test_the_datanodes_are_sent_to_over_https_too(cluster):
    """The namenode redirects a CREATE to a datanode's HTTPS address, which the store follows."""
    session = requests.Session()
    session.trust_env = False
    reply = session.put(f"https://{cluster.netloc}/webhdfs/v1/tmp/probe-{uuid.uuid4().hex}",
                        params={"op": "CREATE", "user.name": cluster.user}, verify=cluster.ca,
                        allow_redirects=False, timeout=10)
    assert reply.status_code == 307
    location = reply.headers["Location"]
    assert location.startswith("https://127.0.0.1:") and cluster.netloc not in location


async def test_a_cluster_certificate_from_another_ca_is_refused(cluster, monkeypatch):
    # requests would take REQUESTS_CA_BUNDLE over a session's verify: ca= must still decide.
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", cluster.ca)
    monkeypatch.setenv("CURL_CA_BUNDLE", cluster.ca)
    store = await open_content_store(cluster.url(ca=cluster.other_ca))
    try:
        with pytest.raises(StoreError, match="CERTIFICATE_VERIFY_FAILED") as raised:
            await store.append(fetched(1))
        assert raised.value.retryable
    finally:
        await store.close()


async def test_plain_http_to_an_https_only_cluster_fails(cluster):
    url = cluster.url().replace("hdfs+https://", "hdfs://").partition("&ca=")[0]
    store = await open_content_store(url + "&timeout=5")
    try:
        with pytest.raises(StoreError):
            await store.append(fetched(1))
    finally:
        await store.close()
