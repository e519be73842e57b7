"""A file's card made in an extraction worker (ExtractionPool.file_card, issue 41): its parts go
out with the job and come back as the FileCard spiderduck.extract.files makes of them; and the
Post Processor keeps the card of the file's name when the worker fails or runs out of time."""
from __future__ import annotations

from spiderduck.core import config
from spiderduck.core.fetch import FetchResult
from spiderduck.core.freshness import Freshness
from spiderduck.core.status import Status
from spiderduck.extract import files
from spiderduck.extract.files import FileBytes, FileCard
from spiderduck.extract.pool import ExtractionFailed, ExtractionPool, ExtractionTimeout
from spiderduck.scheduler.stages.record import PostProcessor
from spiderduck.scheduler.task import CrawlTask
from support.extraction import EXTRACTION

FILES = __import__("pathlib").Path(__file__).resolve().parents[1] / "files"
URL = "http://a.test/papers/Annual%20Report_2024-v2.pdf"


async def test_a_worker_makes_the_card_of_the_parts_this_process_would():
    have = FileBytes(5_000_000, ((0, b"%PDF-1.7\n" + bytes(1000)), (4_999_000, b"trailer" + bytes(993))))
    async with ExtractionPool(workers=1, budget=10, **EXTRACTION) as pool:
        card = await pool.file_card("application/pdf", URL, have)
        empty = await pool.file_card("", URL, FileBytes(0))
    assert isinstance(card, FileCard) and card == files.file_card("application/pdf", URL, have)
    assert card.title == "Annual Report 2024 v2" and empty.title == card.title


async def test_a_card_that_fails_or_runs_out_of_time_leaves_the_title_of_the_file_name():
    for failure in (ExtractionTimeout("slow"), ExtractionFailed("boom")):
        async def failing(content_type, url, have, failure=failure):
            raise failure
        final = FetchResult(URL, Status.OK, 200, (("Content-Type", "application/pdf"), ("Content-Length", "9000")),
                            b"%PDF-1.7", truncated=True)
        stage = PostProcessor(**EXTRACTION, freshness=Freshness.from_settings(config.load(env={})),
                              file_card=failing)
        record = (await stage(CrawlTask(URL, 0.0, url=URL, hops=(final,)))).record
        assert (record.status, record.title, record.file_size, record.content_length) == (
            Status.OK, "Annual Report 2024 v2", 9000, 8)


async def test_a_worker_answers_the_next_range_as_this_process_would():
    """next_range runs in a worker too (ExtractionPool.next_range), so a hostile file's
    cross-references cost a worker's budget, never the scheduler's event loop."""
    pdf = (FILES / "pdf" / "pdflib_us_constitution.pdf").read_bytes()
    have = FileBytes(len(pdf), ((0, pdf[:65536]),))
    async with ExtractionPool(workers=1, budget=10, **EXTRACTION) as pool:
        wanted = await pool.next_range("application/pdf", URL, have)
        done = await pool.next_range("application/pdf", URL, FileBytes(len(pdf), ((0, pdf),)))
    assert wanted == files.next_range("application/pdf", URL, have) and wanted[1] == len(pdf) - 1
    assert done is None


async def test_a_page_with_every_card_field_comes_back_from_a_worker():
    """Labels and offers cross the worker's pipe: the answer's unpickler allows the record's types."""
    page = (b'<html><head><title>Kettle</title><meta property="og:type" content="product">'
            b'<meta name="twitter:label1" content="Price"><meta name="twitter:data1" content="19.99">'
            b'<meta property="product:price:amount" content="19.99"><meta property="product:price:currency" '
            b'content="EUR"><meta name="theme-color" content="#0af"></head><body>x</body></html>')
    async with ExtractionPool(workers=1, budget=10, **EXTRACTION) as pool:
        meta = await pool.extract(page, "http://shop.test/k", "text/html")
    assert meta.labels[0].name == "Price" and meta.offer.price == "19.99" and meta.offer.currency == "EUR"
    assert meta.theme_color == "#00aaff" and meta.medium == "product"
