"""A file read by byte ranges through the wired pipeline (issue 41): a real Fetcher (in this
process, as `spiderduck up` has it) against a loopback origin that counts every request and the
bytes it sent, real SQLite and WARC files. The card's parsers are another module's
(spiderduck.extract.files); which range comes next is set here (`asking`), as a parser would."""
from __future__ import annotations

import io
import pytest
from PIL import Image as PILImage

from spiderduck.core.record import Image
from spiderduck.core.status import Status
from spiderduck.extract import files
from spiderduck.fetcher.fetcher import Fetcher
from support.file_pipeline import CAP, crawl, wired
from support.range_origin import RangeOrigin
from support.scheduler_stores import stores  # noqa: F401 -- the fixture
from support.warc import warc_records

SIZE = 5 * 1024 * 1024
HEAD = 65_536                   # fetcher.file_head_bytes (its default)
SLACK = 384 * 1024              # what an origin's socket takes before the reader hangs up (measured: 150 KiB)
PART = 4096                     # each range `asking` asks for
NAME = "/files/Annual_Report-2024.png"


def png_file(width: int = 1200, height: int = 900, size: int = SIZE) -> bytes:
    """A PNG (Pillow's) of that size in pixels, padded with zeros to `size` bytes."""
    out = io.BytesIO()
    PILImage.new("RGB", (width, height), (20, 90, 200)).save(out, "PNG")
    head = out.getvalue()
    return head + bytes(size - len(head))


@pytest.fixture
def asking(monkeypatch):
    """next_range as a parser that always wants more: the next PART after the last part read
    (the file's tail first, when its size is known), so only fetcher.file_max_requests stops it."""
    def next_range(content_type, url, have):
        if len(have.parts) > 20:
            return None
        if len(have.parts) == 1 and have.total:
            return have.total - PART, have.total - 1
        start = 1_000_000 + len(have.parts) * PART
        return start, start + PART - 1
    monkeypatch.setattr(files, "next_range", next_range)


def report(name: str, origin: RangeOrigin) -> None:
    """What the origin served, for the record of the run (pytest -s shows it)."""
    print(name, [(s.range or "GET", s.status, s.sent) for s in origin.served], "total", origin.sent)


async def crawled(stores, localweb, mode: str):
    """(the record, the origin) of NAME served in `mode` (support.range_origin), crawled once."""
    origin = RangeOrigin(png_file(), mode=mode)
    url = localweb.route("files.test", NAME, origin)
    async with wired(stores) as (pipeline, _):
        record = (await crawl(pipeline, url)).record
    report(mode, origin)
    return record, origin


async def test_a_file_honouring_range_is_a_card_from_three_requests_and_few_bytes(stores, localweb, asking,
                                                                                  tmp_path):
    origin = RangeOrigin(png_file())
    url = localweb.route("files.test", NAME, origin)
    async with wired(stores) as (pipeline, _):
        outcome = await crawl(pipeline, url)
    report("honour", origin)
    record = outcome.record
    assert (record.status, record.http_status, record.title) == (Status.OK, 200, "Annual Report 2024")
    assert record.file_size == SIZE and record.medium == "image"
    assert record.image == Image(url, 1200, 900, "image/png")
    assert record.content_length == HEAD + 2 * PART and not record.truncated
    # The head, then two ranges: fetcher.file_max_requests (3) in all, whatever next_range wants.
    assert [(s.range, s.status) for s in origin.served] == [
        ("", 200), (f"bytes={SIZE - PART}-{SIZE - 1}", 206), (f"bytes={1000000 + 2 * PART}-{1000000 + 3 * PART - 1}", 206)]
    assert all(s.accept_encoding == "identity" for s in origin.served[1:])
    assert origin.served[0].sent <= HEAD + SLACK
    assert origin.sent <= HEAD + 2 * PART + SLACK < SIZE // 10
    # The ranges' 206s are logged after the file's own response.
    logged = [(h.get("WARC-Target-URI"), body) for h, body in warc_records(tmp_path / "content")
              if h.get("WARC-Type") == "response"]
    assert [u for u, _ in logged] == [url] * 3
    assert sum(b"206 Partial Content" in body[:40] for _, body in logged) == 2


async def test_an_origin_ignoring_range_is_read_up_to_the_cap_and_no_further(stores, localweb, asking):
    record, origin = await crawled(stores, localweb, "ignore")
    assert [(s.range != "", s.status) for s in origin.served] == [(False, 200), (True, 200)]   # then it stops
    assert origin.served[1].sent <= CAP - HEAD + SLACK < SIZE
    # the file's requests together read no more than fetcher.max_body_bytes
    assert (record.status, record.file_size, record.content_length) == (Status.OK, SIZE, CAP - HEAD)
    assert record.title == "Annual Report 2024"


async def test_the_size_is_the_content_range_total_when_the_head_declares_none(stores, localweb, asking):
    record, origin = await crawled(stores, localweb, "chunked")
    assert len(origin.served) == 3 and origin.served[1].status == 206
    assert record.status is Status.OK and record.file_size == SIZE
    assert any(p.field == "file_size" and p.source == "Content-Range" for p in record.provenance)


@pytest.mark.parametrize("mode", ["bad-content-range", "wrong-offset", "unsatisfiable"])
async def test_a_range_answered_wrong_leaves_the_card_of_the_head(stores, localweb, asking, mode):
    record, origin = await crawled(stores, localweb, mode)
    url = localweb.url("files.test", NAME)
    assert len(origin.served) == 2                          # the head, one range, then no more
    assert (record.status, record.title, record.file_size) == (Status.OK, "Annual Report 2024", SIZE)
    assert record.content_length == HEAD and record.image == Image(url, 1200, 900, "image/png")


async def test_the_ranges_take_the_domains_turns(stores, localweb, asking):
    origin = RangeOrigin(png_file())
    url = localweb.route("slow.test", NAME, origin)
    interval = 0.25
    async with wired(stores, **{"fetcher.rate_overrides": {"slow.test": 1 / interval}}) as (pipeline, _):
        await crawl(pipeline, url)
    starts = [h.at for h in localweb.hits_for("slow.test")]       # robots.txt, the head, two ranges
    assert len(starts) == 4
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert min(gaps) >= interval * 0.8, gaps


async def test_robots_txt_disallowing_the_file_means_no_request_for_it(stores, localweb, asking):
    origin = RangeOrigin(png_file())
    url = localweb.route("files.test", NAME, origin)
    localweb.robots("files.test", "User-agent: *\nDisallow: /files/\n")
    async with wired(stores) as (pipeline, fetcher):
        record = (await crawl(pipeline, url)).record
        part = await fetcher.fetch(url, purpose="file", range="bytes=0-99")
    assert record.status is Status.ROBOTS_DISALLOWED and part.status is Status.ROBOTS_DISALLOWED
    assert origin.served == []


async def test_a_whole_small_file_asks_for_no_range(stores, localweb, asking):
    small = png_file(640, 480, size=20_000)
    origin = RangeOrigin(small, content_type="image/png")
    url = localweb.route("files.test", "/logo.png", origin)
    async with wired(stores) as (pipeline, _):
        record = (await crawl(pipeline, url)).record
    assert len(origin.served) == 1 and origin.sent == len(small)
    assert (record.status, record.file_size, record.content_length) == (Status.OK, len(small), len(small))
    assert record.title == "logo" and record.image == Image(url, 640, 480, "image/png")


@pytest.mark.parametrize("answer, asked", [
    (("a", "b"), []), ((-5, 3), []), ((10, 5), []), ((0, 10**30), [f"bytes=0-{CAP - 1}"]),
    ((SIZE + 10, SIZE + 20), []), ((SIZE - 10, SIZE + 10**6), [f"bytes={SIZE - 10}-{SIZE - 1}"]),
    (ZeroDivisionError, [])])
async def test_whatever_next_range_answers_the_reading_stays_bounded(stores, localweb, monkeypatch, answer, asked):
    """A parser's next_range that answers nonsense, or raises, costs the file its ranges, never
    its card: a range past the file or longer than fetcher.max_body_bytes is cut or not asked."""
    def next_range(content_type, url, have):
        if isinstance(answer, type):
            raise answer("a parser's bug")
        return answer if len(have.parts) == 1 else None
    monkeypatch.setattr(files, "next_range", next_range)
    origin = RangeOrigin(png_file())
    url = localweb.route("files.test", NAME, origin)
    async with wired(stores) as (pipeline, _):
        record = (await crawl(pipeline, url)).record
    assert [s.range for s in origin.served[1:]] == asked
    assert (record.status, record.file_size, record.title) == (Status.OK, SIZE, "Annual Report 2024")


@pytest.mark.parametrize("mode", ["overrun", "encoded", "error-page"])
async def test_a_range_answered_with_something_else_is_not_taken_for_the_file(stores, localweb, asking, mode):
    """A 206 running past its range is read no further than the range or what is left of the cap,
    and not kept; a gzipped 206's bytes are not the file's at those offsets; a 200 error page
    answering the Range is not the file: each leaves the card of what was read before it, and
    ends the reading. (The overrun's first range, the file's tail, cannot run past the end.)"""
    record, origin = await crawled(stores, localweb, mode)
    kept = HEAD + PART if mode == "overrun" else HEAD
    assert len(origin.served) == (3 if mode == "overrun" else 2)
    assert (record.status, record.file_size, record.content_length) == (Status.OK, SIZE, kept)
    assert record.title == "Annual Report 2024" and record.image.width == 1200
    assert origin.sent <= CAP + SLACK
