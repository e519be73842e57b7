"""Real files (tests/files, with their licences) through the wired pipeline, by byte ranges (issue
41): a loopback origin honouring Range counts each request and the bytes it sent; the record holds
what the file states, from at most three requests (fetcher.file_max_requests), never the whole of
a file larger than what its card needs."""
from __future__ import annotations

import pathlib

import pytest

from spiderduck.core.record import Audio, Document, Video
from spiderduck.core.status import Status
from support.file_pipeline import crawl, wired
from support.range_origin import RangeOrigin
from support.scheduler_stores import stores  # noqa: F401 -- the fixture

FILES = pathlib.Path(__file__).resolve().parents[1] / "files"
HEAD = 65_536                   # fetcher.file_head_bytes (its default)
SLACK = 384 * 1024              # what an origin's socket takes before the reader hangs up


def late_moov_mp4(pad: int) -> bytes:
    """go-mp4's sample (moov after its mdat) with `pad` bytes more of mdat: a 1 s 320x180 video
    whose only facts lie past the first megabytes."""
    data = (FILES / "video" / "gomp4_sample_moov_at_end.mp4").read_bytes()
    mdat = data.index(b"mdat") - 4
    size = int.from_bytes(data[mdat:mdat + 4], "big")
    return (data[:mdat] + (size + pad).to_bytes(4, "big") + data[mdat + 4:mdat + size] + b"\x00" * pad
            + data[mdat + size:])


async def served(stores, localweb, path: str, data: bytes, content_type: str):
    origin = RangeOrigin(data, content_type=content_type)
    url = localweb.route("files.test", path, origin)
    async with wired(stores) as (pipeline, _):
        record = (await crawl(pipeline, url)).record
    print(path, [(s.range or "GET", s.status, s.sent) for s in origin.served], "total", origin.sent)
    return url, record, origin


async def test_a_video_whose_moov_lies_after_3_mib_takes_one_exact_range(stores, localweb):
    data = late_moov_mp4(3 * 1024 * 1024)
    url, record, origin = await served(stores, localweb, "/v/Launch-Day_2024.mp4", data, "video/mp4")
    assert (record.status, record.medium, record.title) == (Status.OK, "video", "Launch Day 2024")
    assert record.video == Video(url, 320, 180, "video/mp4", 1024)
    assert record.file_size == len(data) and not record.truncated
    assert [s.status for s in origin.served] == [200, 206]
    assert origin.sent <= HEAD + 8 * 1024 + SLACK < len(data) // 4       # never the whole file


async def test_a_pdf_gives_title_dates_and_pages_from_its_tail(stores, localweb):
    data = (FILES / "pdf" / "pdflib_us_constitution.pdf").read_bytes()
    url, record, origin = await served(stores, localweb, "/docs/constitution.pdf", data, "application/pdf")
    assert (record.status, record.medium, record.title) == (Status.OK, "document", "constitution_pdf2")
    assert record.document == Document(19)
    assert record.published_time.startswith("2003-06-13T09:29:08") and record.modified_time.startswith("2003-09-12")
    assert record.file_size == len(data) and 2 <= len(origin.served) <= 3
    assert origin.served[1].range.endswith(f"-{len(data) - 1}")                # the tail: trailer and xref
    assert dict((p.field, p.source) for p in record.provenance)["document"].startswith("pdf")


@pytest.mark.parametrize("name, content_type, title, author, duration_ms", [
    ("tinytag_test-tagged.wav", "audio/wav", "thetitle", "theartisst", 1000),        # tags after the audio
    ("dhowden_sample.id3v24.mp3", "audio/mpeg", "Test Title", "Test Artist", 3448),
    ("dhowden_sample.flac", "audio/flac", "Test Title", "Test Artist", 3399),
])
async def test_audio_gives_title_artist_and_length(stores, localweb, name, content_type, title, author, duration_ms):
    data = (FILES / "audio" / name).read_bytes()
    url, record, origin = await served(stores, localweb, f"/a/{name}", data, content_type)
    assert (record.status, record.medium, record.title, record.author) == (Status.OK, "audio", title, author)
    assert record.audio.url == url and abs(record.audio.duration_ms - duration_ms) <= 10
    assert len(origin.served) <= 3 and record.file_size == len(data)
