"""Revisit records (WARC 1.1, section 6.7) of every ContentStore: a 304 is a server-not-modified
revisit, an identical body an identical-payload-digest revisit without the body. The backends are
those of test_content_store.py (tests/support/content_backends.py)."""
from __future__ import annotations

import base64
import dataclasses
import gzip
import hashlib
import io

import pytest

from spiderduck.stores.content import IDENTICAL_PAYLOAD_DIGEST, SERVER_NOT_MODIFIED, FetchedContent, Revisit
from spiderduck.stores.warc_rolling import ContentRef
from support.content_backends import backend, fetched, store  # noqa: F401 -- fixtures


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
    skips a revisit's, so each revisit's WARC-Block-Digest is also checked here against its raw
    block as warcio frames it; a response record has none: its gzip member's CRC covers it)."""
    from warcio.archiveiterator import ArchiveIterator

    raw = [(r.rec_type, r.rec_headers.get_header("WARC-Block-Digest"), r.raw_stream.read())
           for r in ArchiveIterator(io.BytesIO(data), no_record_parse=True)]
    for kind, digest, block in raw:
        assert digest == (None if kind == "response" else sha1_digest(block)), kind
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
        assert headers.get("WARC-Block-Digest") == (None if item.revisit is None else sha1_digest(block))
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
