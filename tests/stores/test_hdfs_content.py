"""The HDFS content store without a cluster: its URL and its errors.

The store's behaviour runs in the conformance suite (test_content_store.py) against a real
HDFS (SPIDERDUCK_TEST_HDFS's, or a mini HDFS on loopback). Here nothing pretends to be HDFS:
the error tests talk to a closed local port, as a store would when its namenode is down.
"""
from __future__ import annotations

import socket

import pytest

from spiderduck.core.errors import ConfigError, StoreError
from spiderduck.stores.content import FetchedContent
from spiderduck.stores.hdfs_content import HdfsContentStore, HdfsLocation
from spiderduck.stores.open import open_content_store
from spiderduck.stores.warc_rolling import RollPolicy


def fetched(n: int) -> FetchedContent:
    return FetchedContent(url=f"http://a.test/{n}", http_status=200, headers=(),
                          body=b"<p>hi</p>", fetched_at=1_700_000_000.0 + n)


def test_an_hdfs_url_names_namenode_port_folder_and_user():
    loc = HdfsLocation.parse("hdfs://namenode:9870/spiderduck/content?user=crawler")
    assert loc.namenodes == (("namenode", 9870),)
    assert loc.root == "/spiderduck/content"
    assert loc.user == "crawler"
    assert loc.webhdfs_url == "http://namenode:9870"
    assert loc.roll == RollPolicy()                      # 256 MiB / 1 h


def test_the_port_defaults_to_webhdfs_and_options_set_rolling():
    loc = HdfsLocation.parse("hdfs://nn/data/warc/?user=u&roll_bytes=1048576&roll_seconds=600&timeout=5")
    assert loc.namenodes == (("nn", 9870),)
    assert loc.root == "/data/warc"
    assert loc.roll == RollPolicy(1 << 20, 600.0)
    assert loc.timeout == 5.0


def test_several_namenodes_for_high_availability():
    loc = HdfsLocation.parse("hdfs://nn1:9870,nn2:50070/c?user=u")
    assert loc.namenodes == (("nn1", 9870), ("nn2", 50070))
    assert loc.webhdfs_url == "http://nn1:9870;http://nn2:50070"


@pytest.mark.parametrize("url", [
    "hdfs://nn:9870/c",                       # no user
    "hdfs://nn:9870/?user=u",                 # no folder
    "hdfs://nn:9870/a/../../b?user=u",        # leaves its folder
    "hdfs://nn:port/c?user=u",
    "hdfs://nn:9870/c?user=u&roll_bytes=lots",
    "hdfs://nn:9870/c?user=u&roll_seconds=0",
    "hdfs://nn:9870/c?user=u&replication=2",  # unknown option: say so, don't ignore it
    "file:///c",
])
def test_bad_hdfs_urls_are_config_errors(url):
    with pytest.raises(ConfigError):
        HdfsLocation.parse(url)


async def test_open_content_store_opens_hdfs_without_touching_the_cluster():
    store = await open_content_store("hdfs://namenode.invalid:9870/spiderduck/content?user=u")
    assert isinstance(store, HdfsContentStore)
    assert "namenode.invalid:9870/spiderduck/content" in repr(store)
    await store.close()


def test_hdfs_https_verifies_against_ca(tmp_path):
    from support.certs import TestCA
    ca = TestCA(tmp_path).ca
    loc = HdfsLocation.parse(f"hdfs+https://nn1,nn2:50470/c?user=u&ca={ca}")
    assert loc.namenodes == (("nn1", 9871), ("nn2", 50470))      # 9871: WebHDFS over HTTPS
    assert loc.webhdfs_url == "https://nn1:9871;https://nn2:50470"
    assert (loc.https, loc.ca) == (True, ca)
    adapter = loc.session().get_adapter("https://nn1:9871/webhdfs/v1/")
    assert adapter._ca == ca            # whatever REQUESTS_CA_BUNDLE says (test_hdfs_https.py)
    default = HdfsLocation.parse("hdfs+https://nn/c?user=u")          # requests' own CAs
    assert default.ca == "" and default.webhdfs_url == "https://nn:9871"


@pytest.mark.parametrize("query, reason", [
    ("ca=/nowhere/ca.pem", "ca=/nowhere/ca.pem: no such file"),
    ("ca=/", "ca=/: is a folder"),
])
def test_a_bad_ca_is_a_config_error_naming_it(query, reason):
    with pytest.raises(ConfigError, match=reason):
        HdfsLocation.parse(f"hdfs+https://nn/c?user=u&{query}")


def test_ca_needs_https(tmp_path):
    with pytest.raises(ConfigError, match="ca= needs hdfs\\+https://"):
        HdfsLocation.parse(f"hdfs://nn/c?user=u&ca={tmp_path}/ca.pem")


async def test_open_content_store_opens_hdfs_https():
    store = await open_content_store("hdfs+https://namenode.invalid/spiderduck/content?user=u")
    assert "https://namenode.invalid:9871/spiderduck/content" in repr(store)
    await store.close()


@pytest.fixture
def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_an_unreachable_namenode_is_a_retryable_store_error(closed_port):
    store = HdfsContentStore.from_url(f"hdfs://127.0.0.1:{closed_port}/c?user=u&timeout=2")
    async with store:
        for _ in range(2):                      # the writer thread survives a failure
            with pytest.raises(StoreError) as err:
                await store.append(fetched(0))
            assert err.value.retryable
            assert isinstance(err.value.__cause__, Exception)
        with pytest.raises(StoreError) as err:
            await store.read("2023/11/14/x.warc.gz@0+10")
        assert err.value.retryable
