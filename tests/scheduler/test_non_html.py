"""The Post Processor on what is not HTML (a file, issue 41): an OK card, an image URL's with its
size and type, any file's with its content type, length read and declared size; and the image
probe itself, on real encoder output."""
import io

import pytest
from PIL import Image as PILImage

from spiderduck.core import config

from spiderduck.core.fetch import FetchResult
from spiderduck.core.freshness import Freshness
from spiderduck.core.record import Image
from spiderduck.core.status import Status
from spiderduck.extract.images import ImageInfo, probe
from spiderduck.scheduler.stages.record import PostProcessor
from spiderduck.scheduler.task import CrawlTask
from spiderduck.wire import record_proto
from support.extraction import EXTRACTION


def encoded(fmt: str, size=(321, 123), **save) -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", size, (200, 30, 30)).save(out, fmt, **save)
    return out.getvalue()


@pytest.mark.parametrize("fmt, mime", [("PNG", "image/png"), ("JPEG", "image/jpeg"),
                                        ("GIF", "image/gif"), ("WEBP", "image/webp"),
                                        ("BMP", "image/bmp"), ("TIFF", "image/tiff")])
def test_probe_reads_size_and_type_from_the_header(fmt, mime):
    assert probe(encoded(fmt)) == ImageInfo(321, 123, mime)


def test_probe_needs_only_the_first_bytes():
    png = encoded("PNG", (4000, 3000))
    assert probe(png[:64]) == ImageInfo(4000, 3000, "image/png")
    # A JPEG whose frame header comes before its Huffman tables: Pillow alone wants them too.
    jpeg = encoded("JPEG", (640, 480))
    assert probe(jpeg[:300]) == ImageInfo(640, 480, "image/jpeg")
    # ... and a big EXIF block before the frame header needs a probe long enough to pass it.
    exif = PILImage.Exif()
    exif[0x010E] = "x" * 60_000
    with_exif = encoded("JPEG", (640, 480), exif=exif)
    assert probe(with_exif[:65_536]) == ImageInfo(640, 480, "image/jpeg")
    assert probe(with_exif[:30_000]) is None


@pytest.mark.parametrize("data", [b"", b"garbage" * 100, b"<svg width='100%' height='10'/>",
                                  b"\xff\xd8\xff\xe0\x00\x10JFIF", b"\x89PNG\r\n\x1a\n"])
def test_probe_says_nothing_of_what_it_cannot_read(data):
    assert probe(data) is None


async def process(result: FetchResult):
    task = CrawlTask(result.url, 0.0, url=result.url, hops=(result,))
    return (await PostProcessor(**EXTRACTION,
                                freshness=Freshness.from_settings(config.load(env={})))(task)).record


async def test_an_image_url_gets_a_record_with_its_dimensions():
    png = encoded("PNG", (800, 600))
    record = await process(FetchResult("http://a.test/i.png", Status.OK, 200,
                                       (("Content-Type", "image/png"),), png))
    assert record.status is Status.OK
    assert record.image == Image("http://a.test/i.png", 800, 600, "image/png")
    assert record.content_type == "image/png" and record.content_length == len(png)


async def test_an_image_over_the_head_is_a_card_of_its_first_bytes_with_its_declared_size():
    jpeg = encoded("JPEG", (1024, 768))
    record = await process(FetchResult("http://a.test/big.jpg", Status.OK, 200,
                                       (("Content-Type", "image/jpeg"), ("Content-Length", "52428800")),
                                       jpeg[:400], truncated=True))
    # Issue 41: a file is OK from its first bytes, not TOO_LARGE; `truncated` only if its card says so.
    assert record.status is Status.OK and not record.error and not record.truncated
    assert record.image == Image("http://a.test/big.jpg", 1024, 768, "image/jpeg")
    assert record.medium == "image" and record.title == "big"
    assert record.content_length == 400                   # what was read, not what was claimed
    assert record.file_size == 52428800                   # what was claimed


async def test_an_svg_url_gets_the_size_its_root_states():
    record = await process(FetchResult("http://a.test/logo.svg", Status.OK, 200,
                                       (("Content-Type", "image/svg+xml"),),
                                       b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 32">'))
    assert record.status is Status.OK
    assert record.image == Image("http://a.test/logo.svg", 64, 32, "image/svg+xml")


async def test_an_svg_stating_no_size_is_an_image_of_unknown_size():
    record = await process(FetchResult("http://a.test/logo.svg", Status.OK, 200,
                                       (("Content-Type", "image/svg+xml"),), b"<svg/>"))
    assert record.status is Status.OK
    assert record.image == Image("http://a.test/logo.svg", 0, 0, "image/svg+xml")


async def test_other_types_are_cards_with_content_type_length_and_size():
    pdf = await process(FetchResult("http://a.test/f.pdf", Status.OK, 200,
                                    (("Content-Type", "application/pdf"), ("Content-Length", "12345")),
                                    b"%PDF-1.7"))
    assert pdf.status is Status.OK and pdf.title == "f" and pdf.medium
    assert (pdf.content_type, pdf.content_length) == ("application/pdf", 8)    # bytes read, not the header
    assert pdf.file_size == 12345
    assert record_proto.to_dict(pdf)["file_size"] in (12345, "12345")        # int64 in JSON
    whole = await process(FetchResult("http://a.test/d.json", Status.OK, 200,
                                      (("Content-Type", "application/json"),), b'{"a": 1}'))
    assert whole.content_length == 8 and whole.file_size == 8   # read whole: its size is known
    cut = await process(FetchResult("http://a.test/v.mp4", Status.OK, 200,
                                    (("Content-Type", "video/mp4"),), b"x" * 10, truncated=True))
    assert cut.status is Status.OK and cut.title == "v" and cut.content_length == 10 and cut.file_size == 0


async def test_a_cut_file_that_gives_nothing_to_show_is_too_large():
    nameless = await process(FetchResult("http://a.test/", Status.OK, 200,
                                         (("Content-Type", "application/octet-stream"),), b"\0" * 10,
                                         truncated=True))
    assert nameless.status is Status.TOO_LARGE and "file_head_bytes" in nameless.error
    assert nameless.content_length == 10


async def test_a_page_over_the_body_cap_is_what_its_first_bytes_said():
    html = b"<!doctype html><title>Big</title>" + b"<p>x</p>" * 1000
    record = await process(FetchResult("http://a.test/", Status.OK, 200,
                                       (("Content-Type", "text/html"),), html, truncated=True))
    assert record.status is Status.OK and record.title == "Big" and record.truncated
    assert record.content_length == len(html)
    assert record_proto.to_dict(record)["content_length"] == len(html)      # a number in JSON


async def test_a_page_records_its_length():
    html = b"<!doctype html><title>T</title>"
    record = await process(FetchResult("http://a.test/", Status.OK, 200,
                                       (("Content-Type", "text/html"),), html))
    assert record.title == "T" and record.content_length == len(html)


@pytest.mark.parametrize("header", ["99999999999999999999999", "\u00b2", "12, 12", "-5", "1e3"])
async def test_a_content_length_that_is_not_a_length_is_not_believed(header):
    record = await process(FetchResult("http://a.test/f.pdf", Status.OK, 200,
                                       (("Content-Type", "application/pdf"), ("Content-Length", header)),
                                       b"%PDF", truncated=True))
    assert record.content_length == 4 and record.file_size == 0
    assert record_proto.to_dict(record)["status"] == "OK"                   # and it serializes
