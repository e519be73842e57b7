"""Pages read in part (issue 29): a body over fetcher.max_body_bytes is extracted from what was
read (`truncated`), and a page whose extraction runs out of budget falls back on its head alone."""
import pytest

from spiderduck.core import config
from spiderduck.core.fetch import FetchResult
from spiderduck.core.freshness import Freshness
from spiderduck.core.status import Status
from spiderduck.extract import extract_page
from spiderduck.extract.head import HEAD_BYTES, head_of
from spiderduck.extract.pool import ExtractionFailed, ExtractionTimeout
from spiderduck.scheduler.stages.record import PostProcessor
from spiderduck.scheduler.task import CrawlTask
from support.extraction import EXTRACTION

HEAD = (b'<!doctype html><html><head><title>Big page</title>'
        b'<meta property="og:description" content="What it is about"></head>')
TIMEOUT = ExtractionTimeout("metadata extraction took longer than process.extract_timeout (3s)")


async def process(body: bytes, *, truncated: bool = False, content_type: str = "text/html", extract=None):
    result = FetchResult("http://a.test/", Status.OK, 200, (("Content-Type", content_type),), body,
                         truncated=truncated)
    stage = PostProcessor(**EXTRACTION, freshness=Freshness.from_settings(config.load(env={})),
                          extract=extract)
    return (await stage(CrawlTask(result.url, 0.0, url=result.url, hops=(result,)))).record


# --- over the body cap ---------------------------------------------------------------------
@pytest.mark.parametrize("head", [HEAD, b'<meta name="twitter:description" content="What it is about">',
                                  b"<html><head><title>Big page</title>"])
async def test_a_cut_page_whose_first_bytes_make_a_preview_is_ok_and_truncated(head):
    record = await process(head + b"<body>" + b"<p>x</p>" * 10_000, truncated=True)
    assert (record.status, record.truncated, record.error) == (Status.OK, True, "")
    assert record.title == "Big page" or record.description == "What it is about"


@pytest.mark.parametrize("body, content_type", [
    (bytes(range(256)) * 100, "text/html"),                          # no markup
    (b"<html><head><script>var x = 1;" + b"x" * 5000, "text/html"),  # markup that says nothing
])
async def test_a_cut_body_that_gives_nothing_usable_is_too_large(body, content_type):
    record = await process(body, truncated=True, content_type=content_type)
    assert record.status is Status.TOO_LARGE and record.truncated
    assert record.error == f"the body is larger than fetcher.max_body_bytes; the first {len(body)} bytes were read"
    assert record.content_length == len(body)


async def test_a_whole_page_is_not_truncated():
    record = await process(HEAD + b"<body><p>x</p></body></html>")
    assert record.status is Status.OK and not record.truncated


# --- past the extraction budget ------------------------------------------------------------
def budgeted(calls: list[bytes], *, head_too: bool = False):
    """An extraction that runs out of budget on any page with a body or deep nesting (and on
    heads too)."""
    async def extract(body, url, content_type, http_status=200):
        calls.append(body)
        if head_too or b"<body" in body or b"<div>" * 10 in body:
            raise TIMEOUT
        return extract_page(body, url, content_type, **EXTRACTION)
    return extract


async def test_a_page_past_the_budget_gets_its_heads_metadata():
    calls: list[bytes] = []
    page = HEAD + b"<body>" + b"<div>" * 1000 + b"</body></html>"
    record = await process(page, extract=budgeted(calls))
    assert (record.status, record.title, record.description) == (Status.OK, "Big page", "What it is about")
    assert record.truncated and record.error == ""      # OK: no error, the flag says it is partial
    assert calls == [page, HEAD[:-len(b"</head>")]]
    assert record.content_length == len(page)


@pytest.mark.parametrize("page", [
    b"<div>" * 1000 + b"<body></body>",                            # no head: pathological at once
    b"<html><head>" + b"<div>" * 1000 + b"<body>",                  # the nesting is in the head
    b"<html><head><title>x" + b" " * HEAD_BYTES + b"</title></head><body>",   # ends too late
])
async def test_a_page_without_a_usable_head_stays_a_timeout(page):
    calls: list[bytes] = []
    record = await process(page, extract=budgeted(calls))
    assert record.status is Status.TIMEOUT and record.error == str(TIMEOUT)
    assert record.title == "" and len(calls) <= 2


async def test_a_head_past_the_budget_too_is_a_timeout():
    calls: list[bytes] = []
    record = await process(HEAD + b"<body>", extract=budgeted(calls, head_too=True))
    assert record.status is Status.TIMEOUT and record.error == str(TIMEOUT) and len(calls) == 2


async def test_a_page_whose_extraction_fails_is_not_retried_on_its_head():
    calls = []

    async def failing(body, url, content_type, http_status=200):
        calls.append(body)
        raise ExtractionFailed("metadata extraction failed: boom")
    record = await process(HEAD + b"<body>", extract=failing)
    assert record.status is Status.UNSUPPORTED_CONTENT and len(calls) == 1


def test_the_head_ends_at_its_end_tag_or_the_body():
    assert head_of(b"<head><title>t</title></HEAD ><p>") == b"<head><title>t</title>"
    assert head_of(b"<title>t</title><BODY class=x><div>") == b"<title>t</title>"
    assert head_of(b"<title>t</title><bodyguard>") is None
    assert head_of(b" " * HEAD_BYTES + b"</head>") is None
