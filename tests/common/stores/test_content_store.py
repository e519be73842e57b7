"""One conformance suite for every ContentStore (WARC files here)."""
from __future__ import annotations

import gzip

import pytest

from common.stores.content import FetchedContent
from common.stores.open import open_content_store


@pytest.fixture(params=["file"])
async def store(request, tmp_path):
    s = await open_content_store(f"file://{tmp_path}/content")
    yield s
    await s.close()


def fetched(n: int) -> FetchedContent:
    return FetchedContent(url=f"http://a.test/{n}", http_status=200,
                          headers=(("Content-Type", "text/html"),), body=f"<p>{n}</p>".encode() * 50,
                          fetched_at=1_700_000_000.0 + n, remote_address="127.0.0.1")


async def test_each_fetch_is_one_readable_warc_record(store):
    refs = [await store.append(fetched(n)) for n in range(3)]
    assert len(set(refs)) == 3
    for n, ref in enumerate(refs):
        headers, block = await store.read(ref)
        assert headers["WARC-Type"] == "response"
        assert headers["WARC-Target-URI"] == f"http://a.test/{n}"
        assert block.startswith(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n")
        assert block.endswith(f"<p>{n}</p>".encode())


async def test_the_file_is_a_valid_multi_member_gzip(tmp_path, store):
    for n in range(2):
        await store.append(fetched(n))
    await store.close()
    [path] = (tmp_path / "content").glob("*.warc.gz")
    text = gzip.decompress(path.read_bytes())
    assert text.count(b"WARC/1.1\r\n") == 2
