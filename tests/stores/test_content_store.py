"""One conformance suite for every ContentStore.

The local WARC-file store runs it every time. The HDFS store runs it against the
`hdfs_cluster` fixture (tests/conftest.py): the cluster SPIDERDUCK_TEST_HDFS names
(`http://namenode:9870?user=U`), else a mini HDFS the session starts on loopback; each test
writes in a fresh folder on the cluster that is deleted afterwards.
"""
from __future__ import annotations

import asyncio
import base64
import dataclasses
import gzip
import hashlib
import io
import os
import time

import pytest

from spiderduck.core.errors import StoreError
from spiderduck.stores.content import ContentStore, FetchedContent
from spiderduck.stores.warc_rolling import ContentRef
from support.content_backends import backend, fetched, store  # noqa: F401 -- fixtures


def noisy(n: int) -> FetchedContent:
    """A record that does not compress away (so size-based rolling has bytes to count)."""
    return dataclasses.replace(fetched(n), body=os.urandom(600).hex().encode())


class Clock:
    def __init__(self, now: float = 1_700_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


async def assert_reads_back(store: ContentStore, n: int, ref: str) -> None:
    headers, block = await store.read(ref)
    assert headers["WARC-Type"] == "response"
    assert headers["WARC-Target-URI"] == f"http://a.test/{n}", ref


async def test_each_fetch_is_one_readable_warc_record(store):
    refs = [await store.append(fetched(n)) for n in range(3)]
    assert len(set(refs)) == 3
    for n, ref in enumerate(refs):
        headers, block = await store.read(ref)
        assert headers["WARC-Type"] == "response"
        assert headers["WARC-Target-URI"] == f"http://a.test/{n}"
        assert headers["WARC-IP-Address"] == "127.0.0.1"
        assert block.startswith(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n")
        assert block.endswith(f"<p>{n}</p>".encode())


async def test_a_body_cut_at_the_cap_is_marked_truncated(store):
    whole = await store.append(fetched(1))
    cut = await store.append(dataclasses.replace(fetched(2), truncated=True))
    assert "WARC-Truncated" not in (await store.read(whole))[0]
    assert (await store.read(cut))[0]["WARC-Truncated"] == "length"     # WARC 1.1, section 5.13


async def test_the_file_is_a_valid_multi_member_gzip(backend, store):
    for n in range(2):
        await store.append(fetched(n))
    await store.close()
    [data] = backend.files().values()
    text = gzip.decompress(data)
    assert text.count(b"WARC/1.1\r\n") == 2


async def test_many_appends_land_in_order_and_read_back(store):
    refs = [await store.append(fetched(n)) for n in range(60)]
    parsed = [ContentRef.parse(r) for r in refs]
    assert len({p.path for p in parsed}) == 1
    # Each record starts where the one before it ended: nothing lost, nothing overlapping.
    assert [p.offset for p in parsed] == [0] + [p.offset + p.length for p in parsed[:-1]]
    for n, ref in enumerate(refs):
        await assert_reads_back(store, n, ref)


async def test_concurrent_appends_never_overlap(store):
    refs = await asyncio.gather(*(store.append(fetched(n)) for n in range(40)))
    spans = sorted((p.offset, p.offset + p.length) for p in map(ContentRef.parse, refs))
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:]))
    for n, ref in enumerate(refs):
        await assert_reads_back(store, n, ref)


async def test_roll_by_size_makes_several_files_and_every_ref_reads_back(backend):
    store = await backend.open(roll_bytes=4096)
    async with store:
        refs = [await store.append(noisy(n)) for n in range(20)]
        for n, ref in enumerate(refs):
            await assert_reads_back(store, n, ref)
    files = backend.files()
    paths = {ContentRef.parse(r).path for r in refs}
    assert len(files) >= 3
    assert set(files) == paths
    for data in files.values():
        assert len(data) < 4096 + 2 * 1200          # passes roll_bytes by one record at most
        assert gzip.decompress(data).startswith(b"WARC/1.1\r\n")
    assert sum(gzip.decompress(d).count(b"WARC/1.1\r\n") for d in files.values()) == 20


async def test_roll_by_age_starts_a_new_file(backend):
    clock = Clock()
    store = await backend.open(roll_seconds=3600, clock=clock)
    async with store:
        first = await store.append(fetched(0))
        clock.now += 3599
        second = await store.append(fetched(1))
        clock.now += 1
        third = await store.append(fetched(2))
        for n, ref in enumerate([first, second, third]):
            await assert_reads_back(store, n, ref)
    a, b, c = (ContentRef.parse(r).path for r in (first, second, third))
    assert a == b != c
    assert len(backend.files()) == 2


async def test_a_ref_from_another_store_is_not_retryable(backend, store):
    other = await backend.open("other")
    async with other:
        foreign = await other.append(fetched(0))
        await assert_reads_back(other, 0, foreign)
    with pytest.raises(StoreError) as err:
        await store.read(foreign)
    assert not err.value.retryable


async def test_a_ref_that_misses_a_record_is_not_retryable(store):
    ref = ContentRef.parse(await store.append(fetched(0)))
    wrong = [
        ContentRef(ref.path, ref.offset + 1, ref.length - 1),           # inside the record
        ContentRef(ref.path, ref.offset, ref.length + 10),               # past the end of file
        ContentRef(ref.path, ref.offset + ref.length + 100, 10),         # beyond the file
        ContentRef("spiderduck-20000101000000-elsewhere-1-00001.warc.gz", 0, 100),
        ContentRef("2000/01/01/spiderduck-20000101000000-elsewhere-1-00001.warc.gz", 0, 100),
    ]
    for bad in wrong:
        with pytest.raises(StoreError) as err:
            await store.read(str(bad))
        assert not err.value.retryable, bad


async def test_the_records_following_a_ref_read_back_in_order_within_the_window(store):
    refs = [await store.append(fetched(n)) for n in range(4)]
    after = await store.read_following(refs[0], 1 << 20, 10)
    assert [headers["WARC-Target-URI"] for headers, _ in after] == [fetched(n).url for n in (1, 2, 3)]
    assert after[0][1].endswith(fetched(1).body)
    assert len(await store.read_following(refs[0], 1 << 20, 2)) == 2                 # max_records
    one = ContentRef.parse(refs[1]).length
    assert len(await store.read_following(refs[0], one + one // 2, 10)) == 1        # a record cut: left out
    assert await store.read_following(refs[-1], 1 << 20, 10) == []                  # nothing after the last


async def test_a_rendered_dom_is_a_conversion_record_referring_to_its_response(backend, store):
    """A rendered page (issue 31): its static response, then a `conversion` record of the DOM
    that refers to it; warcio reads both, digests checked."""
    from warcio.archiveiterator import ArchiveIterator

    from spiderduck.stores.content import new_record_id
    rid = new_record_id()
    page = dataclasses.replace(fetched(7), record_id=rid)
    dom = "<html><head><title>Rendered ✓</title></head><body>made by a script</body></html>".encode()
    refs = [await store.append(page),
            await store.append(dataclasses.replace(fetched(7), body=dom, conversion_of=rid))]
    response, conversion = [await store.read(ref) for ref in refs]
    assert response[0]["WARC-Record-ID"] == rid and response[0]["WARC-Type"] == "response"
    assert conversion[0]["WARC-Type"] == "conversion" and conversion[0]["WARC-Refers-To"] == rid
    assert conversion[1] == dom and conversion[0]["WARC-Target-URI"] == page.url
    members = b"".join(backend.member(ContentRef.parse(ref)) for ref in refs)
    read = [(r.rec_type, r.content_stream().read())
            for r in ArchiveIterator(io.BytesIO(members), check_digests="raise")]
    assert [kind for kind, _ in read] == ["response", "conversion"] and read[1][1] == dom


@pytest.mark.parametrize("ref", [
    "", "nonsense", "a.warc.gz", "a.warc.gz@1", "a.warc.gz@x+1", "a.warc.gz@1+0",
    "a.warc.gz@-1+5", "../escape.warc.gz@0+10", "/etc/passwd@0+10", "a//b@0+10",
    "a/../../b@0+10", "a.warc.gz@0+10\n", " a.warc.gz@0+10",
])
async def test_a_malformed_ref_is_not_retryable(store, ref):
    with pytest.raises(StoreError) as err:
        await store.read(ref)
    assert not err.value.retryable


async def test_warcio_reads_every_record_of_the_files_and_of_each_ref(backend, store):
    """A standard reader (warcio) reads our WARC 1.1 back: whole files and each ref's member."""
    import io

    from warcio.archiveiterator import ArchiveIterator

    big = bytes(range(256)) * 4096                      # 1 MiB of binary, not text
    items = [fetched(0),
             dataclasses.replace(fetched(1), truncated=True),
             FetchedContent(url="http://a.test/moved", http_status=301,
                            headers=(("Location", "http://a.test/0"), ("X-Ünïcode", "välue")),
                            body=b"", fetched_at=1_700_000_000.0),
             FetchedContent(url="http://a.test/blob", http_status=200,
                            headers=(("Content-Type", "application/octet-stream"),),
                            body=big, fetched_at=1_700_000_000.0),
             FetchedContent(url="http://a.test/teapot", http_status=799, headers=(), body=b"?",
                            fetched_at=1_700_000_000.0)]
    refs = [await store.append(item) for item in items]

    def read(data: bytes) -> list[tuple[str, str, int, bytes, str | None]]:
        return [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"),
                 int(r.http_headers.get_statuscode()), r.content_stream().read(),
                 r.rec_headers.get_header("WARC-Truncated"))
                for r in ArchiveIterator(io.BytesIO(data), check_digests="raise")]

    expected = [("response", i.url, i.http_status, i.body, "length" if i.truncated else None)
                for i in items]
    for ref, want in zip(refs, expected):
        assert read(backend.member(ContentRef.parse(ref))) == [want]
    await store.close()
    assert [r for data in backend.files().values() for r in read(data)] == expected
    for r in ArchiveIterator(io.BytesIO(b"".join(backend.files().values()))):
        assert r.rec_headers.protocol == "WARC/1.1"
        # The payload digest present (and checked above: a wrong one raises) and the body as
        # stored; no block digest (each member's gzip CRC covers the block).
        assert r.rec_headers.get_header("WARC-Block-Digest") is None
        body = r.content_stream().read()
        assert r.rec_headers.get_header("WARC-Payload-Digest") == \
            "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode()
        assert r.rec_headers.get_header("WARC-Date").endswith("Z")
