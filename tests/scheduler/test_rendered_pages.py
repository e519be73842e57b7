"""The Post Processor and a rendered page (issue 31): the record is made from the DOM after
rendering, by the same rules, and says `fetch_mode: rendered`; a render past render.timeout is
TIMEOUT with what the static HTML gave; a crashed render, or a DOM that cannot be extracted,
leaves the static HTML's record."""
import pytest

from spiderduck.core import config
from spiderduck.core.fetch import FetchResult
from spiderduck.core.freshness import Freshness
from spiderduck.core.status import Status
from spiderduck.extract import extract_page
from spiderduck.extract.pool import ExtractionFailed
from spiderduck.scheduler.stages.record import PostProcessor
from spiderduck.scheduler.task import CrawlTask
from support.extraction import EXTRACTION

SHELL = b'<!doctype html><html><head><title>App</title></head><body><div id="root"></div><script src="/app.js"></script></body></html>'
DOM = ('<html><head><title>App</title><meta property="og:title" content="The story, rendered ✓">'
       '<meta property="og:description" content="Filled in by a script."></head>'
       '<body><div id="root"><h1>The story</h1></div></body></html>').encode()


async def process(rendered: bytes = b"", outcome: str = "", *, content_type: str = "text/html; charset=iso-8859-1",
                  extract=None):
    result = FetchResult("http://a.test/app", Status.OK, 200, (("Content-Type", content_type),), SHELL,
                         rendered=rendered, render_outcome=outcome)
    stage = PostProcessor(**EXTRACTION, freshness=Freshness.from_settings(config.load(env={})),
                          extract=extract)
    return (await stage(CrawlTask(result.url, 0.0, url=result.url, hops=(result,)))).record


async def test_a_rendered_page_is_read_from_its_dom_as_utf8_and_says_so():
    record = await process(DOM, "ok")
    assert (record.status, record.fetch_mode) == (Status.OK, "rendered")
    # The DOM is UTF-8 whatever the static answer's charset said.
    assert record.title == "The story, rendered ✓" and record.description == "Filled in by a script."
    assert record.content_length == len(SHELL)          # the response's, as logged


async def test_a_page_not_rendered_is_static():
    record = await process()
    assert (record.status, record.fetch_mode, record.title) == (Status.OK, "static", "App")


async def test_a_render_past_its_timeout_is_timeout_with_the_static_htmls_fields():
    record = await process(b"", "timeout")
    assert (record.status, record.fetch_mode, record.title) == (Status.TIMEOUT, "static", "App")
    assert "render.timeout" in record.error


@pytest.mark.parametrize("outcome", ["crash", "refused", "something new"])
async def test_a_render_that_failed_otherwise_leaves_the_static_record(outcome):
    record = await process(b"", outcome)
    assert (record.status, record.fetch_mode, record.title, record.error) == (Status.OK, "static", "App", "")


async def test_a_dom_that_cannot_be_extracted_falls_back_on_the_static_html():
    async def extract(body, url, content_type, http_status=200):
        if body == DOM:
            raise ExtractionFailed("metadata extraction failed: worker died twice")
        return extract_page(body, url, content_type, **EXTRACTION)
    record = await process(DOM, "ok", extract=extract)
    assert (record.status, record.fetch_mode, record.title) == (Status.OK, "static", "App")
