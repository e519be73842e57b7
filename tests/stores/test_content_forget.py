"""ContentStore.forget: a forgotten URL's records leave the content log, nothing else moves.

Each erased record's gzip member is replaced by a filler of exactly its length (a valid gzip
member holding a small WARC `metadata` record that says only that a record was removed), so
warcio still reads every file from start to end and every other record's content_ref reads back
the same. The first test runs on local WARC files and on a real (mini) HDFS; the rest on files.
"""
from __future__ import annotations

import asyncio
import dataclasses
import gzip
import io
import pathlib
import subprocess
import sys
import zlib

import pytest
from warcio.archiveiterator import ArchiveIterator

from spiderduck.core.errors import StoreError
from spiderduck.stores.content import FetchedContent, IDENTICAL_PAYLOAD_DIGEST, Revisit, new_record_id, payload_digest
from spiderduck.stores.warc_files import WarcFileStore
from spiderduck.stores.warc_filler import EMPTY_MEMBER, filler
from support.content_backends import backend, fetched  # noqa: F401 -- fixtures

ROOT = pathlib.Path(__file__).resolve().parents[2]
MARKER = b"forget-me-marker-7f3a"


def victim_records(url: str = "http://victim.test/page?id=1") -> list[FetchedContent]:
    """A page, the DOM rendered from it, a revisit of it and one of its related fetches."""
    page_id = new_record_id()
    page = FetchedContent(url=url, http_status=200, headers=(("Content-Type", "text/html"),),
                          body=b"<p>" + MARKER * 40 + b"</p>", fetched_at=1_700_000_100.0,
                          record_id=page_id)
    dom = dataclasses.replace(page, body=b"<html>" + MARKER * 30 + b"</html>", record_id="",
                              conversion_of=page_id)
    revisit = dataclasses.replace(page, record_id="", revisit=Revisit(
        IDENTICAL_PAYLOAD_DIGEST, refers_to=page_id, refers_to_uri=url,
        payload_digest=payload_digest(page.body)))
    image = FetchedContent(url="http://cdn.other.test/picture.png", http_status=200,
                           headers=(("Content-Type", "image/png"),), body=MARKER * 5 + b"\x89PNG",
                           fetched_at=1_700_000_101.0, concurrent_to=page_id)
    return [page, dom, revisit, image]


def warcio_records(data: bytes) -> list[tuple[str, str, bytes]]:
    """(type, target URI, content) of every record warcio reads in a whole file."""
    return [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI") or "", r.content_stream().read())
            for r in ArchiveIterator(io.BytesIO(data))]


async def assert_forgotten(backend, store, kept: dict[str, tuple], erased: list[str]) -> None:
    files = backend.files()
    assert files
    for data in files.values():
        assert MARKER not in gzip.decompress(data) and MARKER not in data
        records = warcio_records(data)
        assert not any("victim.test" in uri or "cdn.other.test" in uri for _, uri, _ in records)
    for ref, (headers, block) in kept.items():
        assert await store.read(ref) == (headers, block)
    for ref in erased:
        with pytest.raises(StoreError, match="erased") as info:
            await store.read(ref)
        assert not info.value.retryable


async def test_forget_erases_a_url_its_dom_revisit_and_related_fetches_and_moves_nothing(backend):
    store = await backend.open()
    try:
        refs = [await store.append(fetched(1))]
        erased = []
        for item in victim_records():
            erased.append(await store.append(item))
            refs.append(await store.append(fetched(len(refs) + 1)))
        kept = {ref: await store.read(ref) for ref in refs}
        following = await store.read_following(refs[0], 1 << 20, 100)
        # The URL in another form (case, default port): compared as lookup_key forms.
        assert await store.forget(["HTTP://Victim.TEST:80/page?id=1"]) == 4
        await assert_forgotten(backend, store, kept, erased)
        # read_following skips the fillers: the other records, as they were.
        assert await store.read_following(refs[0], 1 << 20, 100) == [
            r for r in following if r[0].get("WARC-Target-URI", "").startswith("http://a.test/")]
        assert await store.forget(["http://victim.test/page?id=1"]) == 0      # idempotent
    finally:
        await store.close()


async def test_forget_a_domain_takes_every_host_of_it(tmp_path):
    store = WarcFileStore(str(tmp_path))
    try:
        urls = ["http://www.example.co.uk/a", "https://news.example.co.uk/b", "http://example.com/c",
                "http://notexample.co.uk/d"]
        refs = [await store.append(dataclasses.replace(fetched(n), url=url)) for n, url in enumerate(urls)]
        assert await store.forget([], domain="example.co.uk") == 2
        for ref in refs[:2]:
            with pytest.raises(StoreError, match="erased"):
                await store.read(ref)
        assert [(await store.read(ref))[0]["WARC-Target-URI"] for ref in refs[2:]] == urls[2:]
        assert await store.forget([], domain="example.co.uk") == 0
    finally:
        await store.close()


async def test_forget_nothing_in_an_empty_store(tmp_path):
    store = WarcFileStore(str(tmp_path / "none"))
    assert await store.forget(["http://a.test/"]) == 0
    await store.close()


@pytest.mark.parametrize("length", [EMPTY_MEMBER, EMPTY_MEMBER + 1, 150, 296, 4096, 3 << 20])
def test_a_filler_is_one_gzip_member_of_exactly_the_length(length):
    data = b"".join(filler(length, 1_700_000_000.0))
    assert len(data) == length
    d = zlib.decompressobj(31)
    raw = d.decompress(data)
    assert d.eof and not d.unused_data and b"http" not in raw
    one = gzip.compress(b"WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:x>\r\n"
                        b"WARC-Date: 2023-01-01T00:00:00Z\r\nContent-Length: 0\r\n\r\n\r\n\r\n")
    types = [r.rec_type for r in ArchiveIterator(io.BytesIO(one + data + one))]
    # Long enough for the `metadata` record that says a record went (about 210 bytes; the
    # smallest record we write, a 404 with no headers, takes 296); else an empty member, which
    # warcio reads as no record at all.
    assert types == (["resource", "metadata", "resource"] if length >= 296 else ["resource", "resource"])


def test_nothing_can_stand_in_a_member_shorter_than_a_gzip_member():
    with pytest.raises(ValueError):
        list(filler(EMPTY_MEMBER - 1, 0.0))


WRITER = """
import asyncio, sys
from spiderduck.stores.content import FetchedContent
from spiderduck.stores.warc_files import WarcFileStore

async def main(folder, n):
    store = WarcFileStore(folder)
    victim = FetchedContent(url="http://victim.test/page?id=1", http_status=200, headers=(),
                            body=b"forget-me-marker-7f3a" * 40, fetched_at=1_700_000_000.0)
    print(await store.append(victim), flush=True)
    sys.stdin.readline()                               # the forget has begun
    for i in range(n):
        body = (b"<p>%d</p>" % i) * 300
        ref = await store.append(FetchedContent(url=f"http://a.test/{i}", http_status=200,
                                                headers=(), body=body, fetched_at=1_700_000_000.0 + i))
        print(ref, flush=True)
    await store.close()

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


async def test_forget_in_a_file_another_process_is_appending_to(tmp_path):
    """A writer in another process appends to the file while the forget erases in it: its
    records all read back whole, the file reads from start to end, the victim is gone."""
    folder = tmp_path / "content"
    writer = await asyncio.create_subprocess_exec(
        sys.executable, "-c", WRITER, str(folder), "3000", stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, env={"PYTHONPATH": str(ROOT / "src")})
    victim_ref = (await asyncio.wait_for(writer.stdout.readline(), 30)).decode().strip()
    store = WarcFileStore(str(folder))
    mine = await store.append(victim_records()[0])      # and one in this process's own file
    writer.stdin.write(b"go\n")
    await writer.stdin.drain()
    forgetting = asyncio.create_task(store.forget(["http://victim.test/page?id=1"]))
    refs = [line.decode().strip() async for line in writer.stdout]
    assert await asyncio.wait_for(writer.wait(), 60) == 0
    assert await forgetting == 2
    assert len(refs) == 3000
    for ref in (victim_ref, mine):
        with pytest.raises(StoreError, match="erased"):
            await store.read(ref)
    for i, ref in enumerate(refs):
        headers, block = await store.read(ref)
        assert headers["WARC-Target-URI"] == f"http://a.test/{i}" and block.endswith((b"<p>%d</p>" % i) * 300)
    for path in folder.iterdir():
        data = path.read_bytes()
        assert MARKER not in data and MARKER not in gzip.decompress(data)
        assert len(warcio_records(data)) >= 1
    await store.close()


async def test_forget_while_this_store_appends(tmp_path):
    """The same store's writer thread keeps appending while a forget erases in its file."""
    store = WarcFileStore(str(tmp_path))
    victims = [await store.append(item) for item in victim_records()]
    before = [await store.append(fetched(n)) for n in range(50)]

    async def appending():
        return [await store.append(fetched(n)) for n in range(50, 1050)]

    during, count = await asyncio.gather(appending(), store.forget(["http://victim.test/page?id=1"]))
    assert count == 4
    for n, ref in enumerate(before + during):
        assert (await store.read(ref))[0]["WARC-Target-URI"] == f"http://a.test/{n}"
    for ref in victims:
        with pytest.raises(StoreError, match="erased"):
            await store.read(ref)
    await store.close()
    (data,) = [p.read_bytes() for p in tmp_path.iterdir()]
    assert len(warcio_records(data)) == 1050 + 4          # the four fillers are `metadata` records


@pytest.mark.parametrize("chunk", [64, 4096, 1 << 20])
def test_members_walks_every_whole_member_and_stops_before_a_cut_one(chunk):
    """Whatever the pieces read: a last record that inflates to far more than a piece (zeros)
    is found whole; a member cut short is not."""
    from spiderduck.stores.content import warc_record
    from spiderduck.stores.warc_erase import members
    records = [warc_record(fetched(1)), warc_record(dataclasses.replace(fetched(2), body=b"\0" * (5 << 20)))]
    data = b"".join(records)
    found = list(members(io.BytesIO(data), chunk=chunk))
    assert [(m.offset, m.length) for m in found] == [(0, len(records[0])), (len(records[0]), len(records[1]))]
    assert [m.headers["WARC-Target-URI"] for m in found] == ["http://a.test/1", "http://a.test/2"]
    cut = list(members(io.BytesIO(data[:-3]), chunk=chunk))
    assert [(m.offset, m.length) for m in cut] == [(0, len(records[0]))]
