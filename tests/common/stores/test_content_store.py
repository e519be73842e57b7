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
import pathlib
import time
import uuid
from urllib.parse import parse_qs, urlsplit

import pytest

from common.errors import StoreError
from common.stores.content import (IDENTICAL_PAYLOAD_DIGEST, SERVER_NOT_MODIFIED, ContentStore,
                                   FetchedContent, Revisit)
from common.stores.open import open_content_store
from common.stores.warc_rolling import ContentRef


class FileBackend:
    """Stores under a temporary local folder."""

    def __init__(self, base: pathlib.Path):
        self.base = base

    def url(self, sub: str = "content") -> str:
        return f"file://{self.base / sub}"

    async def open(self, sub: str = "content", **options) -> ContentStore:
        if not options:
            return await open_content_store(self.url(sub))
        from common.stores.warc_files import WarcFileStore
        return WarcFileStore(str(self.base / sub), **options)

    def files(self, sub: str = "content") -> dict[str, bytes]:
        root = self.base / sub
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*.warc.gz")}

    def member(self, ref: ContentRef, sub: str = "content") -> bytes:
        with open(self.base / sub / ref.path, "rb") as fh:
            fh.seek(ref.offset)
            return fh.read(ref.length)

    def cleanup(self) -> None:
        pass                                     # tmp_path goes by itself


class HdfsBackend:
    """Stores under a fresh folder on a real cluster, deleted afterwards."""

    def __init__(self, cluster: str):
        parts = urlsplit(cluster)
        user = parse_qs(parts.query).get("user", [""])[0]
        if parts.scheme != "http" or not parts.netloc or not user:
            pytest.fail(f"HDFS cluster {cluster!r}: want http://namenode:9870?user=U")
        import hdfs
        self.netloc, self.user = parts.netloc, user
        self.base = f"/tmp/spiderduck-test-{uuid.uuid4().hex}"
        self.client = hdfs.InsecureClient(f"http://{parts.netloc}", user=user)

    def url(self, sub: str = "content") -> str:
        return f"hdfs://{self.netloc}{self.base}/{sub}?user={self.user}"

    async def open(self, sub: str = "content", **options) -> ContentStore:
        if not options:
            return await open_content_store(self.url(sub))
        from common.stores.hdfs_content import HdfsContentStore, HdfsLocation
        from common.stores.warc_rolling import RollPolicy
        location = HdfsLocation.parse(self.url(sub))
        clock = options.pop("clock", time.time)
        policy = RollPolicy(**{k: options.pop(k, getattr(location.roll, k))
                               for k in ("roll_bytes", "roll_seconds")})
        assert not options, options
        location = HdfsLocation(location.namenodes, location.root, location.user, policy)
        return HdfsContentStore(location, clock=clock)

    def files(self, sub: str = "content") -> dict[str, bytes]:
        """The sealed files, as a reader listing the folders sees them (no in-progress ones)."""
        root = f"{self.base}/{sub}"
        out = {}
        for folder, _, names in self.client.walk(root):
            for name in names:
                if name.startswith("."):
                    continue
                with self.client.read(f"{folder}/{name}") as reader:
                    out[f"{folder}/{name}"[len(root) + 1:]] = reader.read()
        return out

    def member(self, ref: ContentRef, sub: str = "content") -> bytes:
        """The ref's bytes, from its file whether sealed or still in progress."""
        from common.stores.warc_rolling import in_progress
        for path in (ref.path, in_progress(ref.path)):
            if self.client.status(f"{self.base}/{sub}/{path}", strict=False):
                with self.client.read(f"{self.base}/{sub}/{path}", offset=ref.offset,
                                      length=ref.length) as reader:
                    return reader.read()
        raise AssertionError(f"no file for {ref}")

    def cleanup(self) -> None:
        self.client.delete(self.base, recursive=True)


@pytest.fixture(params=["file", "hdfs"])
def backend(request, tmp_path):
    if request.param == "file":
        b = FileBackend(tmp_path)
    else:
        b = HdfsBackend(request.getfixturevalue("hdfs_cluster"))
    yield b
    b.cleanup()


@pytest.fixture
async def store(backend):
    s = await backend.open()
    yield s
    await s.close()


def fetched(n: int, size: int = 50) -> FetchedContent:
    return FetchedContent(url=f"http://a.test/{n}", http_status=200,
                          headers=(("Content-Type", "text/html"),), body=f"<p>{n}</p>".encode() * size,
                          fetched_at=1_700_000_000.0 + n, remote_address="127.0.0.1")


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
        # Digests present (and checked above: a wrong one raises), payload = the body as stored.
        assert r.rec_headers.get_header("WARC-Block-Digest").startswith("sha1:")
        body = r.content_stream().read()
        assert r.rec_headers.get_header("WARC-Payload-Digest") == \
            "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode()
        assert r.rec_headers.get_header("WARC-Date").endswith("Z")


# --- revisit records (WARC 1.1, section 6.7) ---

def not_modified(n: int, etag: str = '"v1"') -> FetchedContent:
    """The 304 to a conditional re-fetch of fetched(n), an hour later."""
    return FetchedContent(url=f"http://a.test/{n}", http_status=304,
                          headers=(("ETag", etag), ("Date", "Wed, 15 Nov 2023 00:00:00 GMT")),
                          body=b"", fetched_at=1_700_003_600.0 + n, remote_address="127.0.0.2")


def sha1_digest(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def warcio_records(data: bytes) -> list[dict]:
    """What warcio reads of every record in `data` (digests checked where warcio checks them: it
    skips a revisit's, so each record's WARC-Block-Digest is also checked here against its raw
    block as warcio frames it)."""
    from warcio.archiveiterator import ArchiveIterator

    raw = [(r.rec_headers.get_header("WARC-Block-Digest"), r.raw_stream.read())
           for r in ArchiveIterator(io.BytesIO(data), no_record_parse=True)]
    for digest, block in raw:
        assert digest == sha1_digest(block)
    out = []
    for r in ArchiveIterator(io.BytesIO(data), check_digests="raise"):
        out.append({"type": r.rec_type, "protocol": r.rec_headers.protocol,
                    "warc": dict(r.rec_headers.headers),
                    "status": r.http_headers.statusline if r.http_headers else None,
                    "http": dict(r.http_headers.headers) if r.http_headers else None,
                    "payload": r.content_stream().read()})
    assert len(out) == len(raw)
    return out


async def test_a_304_is_a_server_not_modified_revisit_of_the_earlier_record(backend, store):
    earlier_ref = await store.append(fetched(1))
    earlier, _ = await store.read(earlier_ref)
    assert earlier["WARC-Record-ID"].startswith("<urn:uuid:")
    item = dataclasses.replace(not_modified(1), revisit=Revisit.of(SERVER_NOT_MODIFIED, earlier))
    ref = await store.append(item)

    headers, block = await store.read(ref)
    assert headers["WARC-Type"] == "revisit"
    assert headers["WARC-Profile"] == SERVER_NOT_MODIFIED
    assert headers["WARC-Record-ID"] != earlier["WARC-Record-ID"]
    assert headers["WARC-Refers-To"] == earlier["WARC-Record-ID"]
    assert headers["WARC-Refers-To-Target-URI"] == earlier["WARC-Target-URI"] == "http://a.test/1"
    assert headers["WARC-Refers-To-Date"] == earlier["WARC-Date"] == "2023-11-14T22:13:21Z"
    assert headers["WARC-Date"] == "2023-11-14T23:13:21Z"                  # the 304's own
    assert headers["WARC-Target-URI"] == "http://a.test/1"
    assert headers["WARC-IP-Address"] == "127.0.0.2"
    assert headers["Content-Type"] == "application/http;msgtype=response"
    assert "WARC-Payload-Digest" not in headers                            # nothing of it here
    assert "WARC-Truncated" not in headers
    assert block == (b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\n'
                     b"Date: Wed, 15 Nov 2023 00:00:00 GMT\r\n\r\n")
    assert headers["WARC-Block-Digest"] == sha1_digest(block)
    assert headers["Content-Length"] == str(len(block))

    def check(rec: dict) -> None:
        assert rec["type"] == "revisit" and rec["protocol"] == "WARC/1.1"
        assert rec["warc"]["WARC-Profile"] == SERVER_NOT_MODIFIED
        assert rec["warc"]["WARC-Refers-To"] == earlier["WARC-Record-ID"]
        assert rec["warc"]["WARC-Refers-To-Target-URI"] == "http://a.test/1"
        assert rec["warc"]["WARC-Refers-To-Date"] == earlier["WARC-Date"]
        assert rec["status"] == "304 Not Modified"
        assert rec["http"]["ETag"] == '"v1"'
        assert rec["http"]["Date"] == "Wed, 15 Nov 2023 00:00:00 GMT"
        assert rec["payload"] == b""

    [alone] = warcio_records(backend.member(ContentRef.parse(ref)))
    check(alone)
    await store.close()
    [data] = backend.files().values()
    first, second = warcio_records(data)
    assert first["type"] == "response" and first["warc"]["WARC-Record-ID"] == earlier["WARC-Record-ID"]
    assert first["payload"] == fetched(1).body
    check(second)


async def test_an_identical_body_is_an_identical_payload_digest_revisit_without_the_body(backend, store):
    earlier_ref = await store.append(fetched(2))
    earlier, _ = await store.read(earlier_ref)
    again = dataclasses.replace(fetched(2), fetched_at=1_700_086_402.0,
                                headers=(("Content-Type", "text/html"), ("ETag", '"v2"')),
                                revisit=Revisit.of(IDENTICAL_PAYLOAD_DIGEST, earlier))
    ref = await store.append(again)

    headers, block = await store.read(ref)
    assert headers["WARC-Type"] == "revisit"
    assert headers["WARC-Profile"] == IDENTICAL_PAYLOAD_DIGEST
    assert headers["WARC-Payload-Digest"] == earlier["WARC-Payload-Digest"] == sha1_digest(again.body)
    assert headers["WARC-Refers-To"] == earlier["WARC-Record-ID"]
    assert headers["WARC-Refers-To-Date"] == earlier["WARC-Date"]
    assert block == b'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nETag: "v2"\r\n\r\n'
    assert headers["WARC-Block-Digest"] == sha1_digest(block)
    member = backend.member(ContentRef.parse(ref))
    assert b"<p>2</p>" not in gzip.decompress(member)                      # the body is left out

    def check(rec: dict) -> None:
        assert rec["type"] == "revisit"
        assert rec["warc"]["WARC-Profile"] == IDENTICAL_PAYLOAD_DIGEST
        assert rec["warc"]["WARC-Payload-Digest"] == earlier["WARC-Payload-Digest"]
        assert rec["warc"]["WARC-Refers-To-Target-URI"] == "http://a.test/2"
        assert rec["status"] == "200 OK" and rec["http"]["ETag"] == '"v2"'
        assert rec["payload"] == b""

    [alone] = warcio_records(member)
    check(alone)
    await store.close()
    [data] = backend.files().values()
    first, second = warcio_records(data)
    assert first["type"] == "response" and first["payload"] == again.body
    check(second)


def test_a_revisit_needs_a_known_profile_and_an_identical_one_the_earlier_digest():
    assert Revisit.of(SERVER_NOT_MODIFIED, {}) == Revisit(SERVER_NOT_MODIFIED)
    with pytest.raises(ValueError):
        Revisit.of(IDENTICAL_PAYLOAD_DIGEST, {})                           # nothing to be identical to
    with pytest.raises(ValueError):
        Revisit("http://netpreserve.org/warc/1.1/revisit/no-such-profile")


async def test_a_revisit_of_an_unknown_record_has_no_refers_to_headers(backend, store):
    ref = await store.append(dataclasses.replace(not_modified(3), revisit=Revisit(SERVER_NOT_MODIFIED)))
    headers, block = await store.read(ref)
    assert headers["WARC-Type"] == "revisit"
    assert headers["WARC-Profile"] == SERVER_NOT_MODIFIED
    assert not [name for name in headers if name.startswith("WARC-Refers-To")]
    assert block.startswith(b"HTTP/1.1 304 Not Modified\r\n")

    def check(rec: dict) -> None:
        assert rec["type"] == "revisit" and rec["status"] == "304 Not Modified"
        assert rec["warc"]["WARC-Target-URI"] == "http://a.test/3"
        assert not [name for name in rec["warc"] if name.startswith("WARC-Refers-To")]
        assert rec["payload"] == b""

    [alone] = warcio_records(backend.member(ContentRef.parse(ref)))
    check(alone)
    await store.close()
    [data] = backend.files().values()
    [rec] = warcio_records(data)
    check(rec)


async def test_hostile_values_in_a_revisit_do_not_break_the_record(backend, store):
    """A revisit's fields (from an earlier record, from an origin) may hold CR, LF and other
    controls: each stays inside its own header, and every record of the file still reads."""
    hostile = Revisit(SERVER_NOT_MODIFIED,
                      refers_to="<urn:uuid:x>\r\nWARC-Type: response",
                      refers_to_uri="http://a.test/\r\n\r\nHTTP/1.1 200 OK\r\nX: 1",
                      refers_to_date="2023-11-14T22:13:20Z\nWARC-Truncated: length\x00\x7f")
    hostile_digest = Revisit(IDENTICAL_PAYLOAD_DIGEST, payload_digest="sha1:AAAA\r\nContent-Length: 0\r\n\r\n")
    items = [fetched(0),
             dataclasses.replace(not_modified(1), revisit=hostile),
             dataclasses.replace(not_modified(2, etag='"x"\r\n\r\nX-Injected: ü'), revisit=hostile),
             dataclasses.replace(fetched(3), revisit=hostile_digest),
             fetched(4)]
    refs = [await store.append(item) for item in items]

    for ref, item in zip(refs, items):
        headers, block = await store.read(ref)
        assert headers["WARC-Target-URI"] == item.url
        assert headers["Content-Length"] == str(len(block))
        assert headers["WARC-Block-Digest"] == sha1_digest(block)
        if item.revisit is None:
            assert headers["WARC-Type"] == "response"
            assert block.endswith(item.body)
            continue
        assert headers["WARC-Type"] == "revisit"
        assert "WARC-Truncated" not in headers and "X" not in headers
    revisit_headers = (await store.read(refs[1]))[0]
    assert revisit_headers["WARC-Refers-To"] == "<urn:uuid:x>%0D%0AWARC-Type: response"
    assert revisit_headers["WARC-Refers-To-Target-URI"] == "http://a.test/%0D%0A%0D%0AHTTP/1.1 200 OK%0D%0AX: 1"
    assert revisit_headers["WARC-Refers-To-Date"] == \
        "2023-11-14T22:13:20Z%0AWARC-Truncated: length%00%7F"
    assert (await store.read(refs[3]))[0]["WARC-Payload-Digest"] == \
        "sha1:AAAA%0D%0AContent-Length: 0%0D%0A%0D%0A"

    expected = [("response" if i.revisit is None else "revisit", i.url) for i in items]
    for ref, want in zip(refs, expected):
        [rec] = warcio_records(backend.member(ContentRef.parse(ref)))
        assert (rec["type"], rec["warc"]["WARC-Target-URI"]) == want
    await store.close()
    [data] = backend.files().values()
    records = warcio_records(data)
    assert [(r["type"], r["warc"]["WARC-Target-URI"]) for r in records] == expected
    assert records[1]["warc"]["WARC-Refers-To"] == "<urn:uuid:x>%0D%0AWARC-Type: response"
    assert records[1]["status"] == "304 Not Modified" and records[1]["payload"] == b""
    assert records[-1]["payload"] == fetched(4).body
