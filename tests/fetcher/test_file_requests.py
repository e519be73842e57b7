"""A file through the fetcher (issue 41): a page hop whose answer is not HTML reads its head alone
(fetcher.file_head_bytes); a `range` request is sent as Range with Accept-Encoding: identity, and
a malformed one is refused before anything is sent (INVALID_ARGUMENT over gRPC). The byte-range
headers are read strictly, whatever an origin or a caller sends."""
from __future__ import annotations

import grpc
import pytest

from spiderduck.core import byte_ranges
from spiderduck.core.status import Status
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.ownership import AllShards
from spiderduck.v1 import fetcher_pb2
from support.fetcher_grpc import served
from support.fetcher_settings import local_settings
from support.range_origin import RangeOrigin

SIZE = 3 * 1024 * 1024
CAP = 1024 * 1024
HEAD = 8192
SLACK = 384 * 1024      # what an origin's socket takes before the reader hangs up


def settings(**kw):
    return local_settings(**{"fetcher.max_body_bytes": CAP, "fetcher.file_head_bytes": HEAD, **kw})


@pytest.mark.parametrize("value", [
    "", "bytes=5-1", "bytes=-5", "bytes=0-", "bytes=0-1,5-9", "bytes=\u0661-\u0662", "items=0-1",
    " bytes=0-1", "bytes=0-1\r\nX-Evil: 1", "bytes=" + "9" * 30 + "-" + "9" * 31, "bytes=0-" + "1" * 19,
    "x" * 100_000, f"bytes=0-{CAP}"])
def test_a_range_that_is_not_one_closed_bounded_range_is_refused(value):
    with pytest.raises(byte_ranges.InvalidRange):
        byte_ranges.parse_range(value, CAP)


def test_a_closed_range_within_the_bound_is_read():
    assert byte_ranges.parse_range("bytes=0-0", CAP) == (0, 0)
    assert byte_ranges.parse_range(f"bytes=7-{CAP + 6}", CAP) == (7, CAP + 6)
    assert byte_ranges.parse_range("bytes=999999999999999999-999999999999999999", 1) == (10**18 - 1,) * 2


@pytest.mark.parametrize("value, expected", [
    ("bytes 0-99/1000", (0, 99, 1000)), ("bytes 5-5/*", (5, 5, 0)), (" bytes 0-0/1 ", (0, 0, 1)),
    ("bytes 0-99/50", None), ("bytes 9-1/100", None), ("bytes */1000", None), ("bytes ?-?/many", None),
    ("bytes 0-1/" + "9" * 40, None), ("b" * 100_000, None), (None, None), ("", None)])
def test_a_content_range_is_read_strictly(value, expected):
    assert byte_ranges.content_range(value) == expected


@pytest.mark.parametrize("value, expected", [
    ("12345", 12345), (" 7 ", 7), ("-5", None), ("1e3", None), ("12, 12", None), ("\u00b2", None),
    ("\u0661\u0662", None), ("9" * 19, None), (None, None)])
def test_a_content_length_is_read_strictly(value, expected):
    assert byte_ranges.declared_length(value) == expected


async def test_a_page_hop_answered_by_a_file_reads_its_head_and_html_the_cap(localweb):
    origin = RangeOrigin(bytes(SIZE), content_type="application/pdf")
    url = localweb.route("f.test", "/doc.pdf", origin)
    html = localweb.page("f.test", "/big.html", b"<title>x</title>" + b" " * SIZE)
    async with Fetcher(settings(), ownership=AllShards()) as f:
        head = await f.fetch(url)
        page = await f.fetch(html)
        image = await f.fetch(url, purpose="image", max_body_bytes=512)
    assert (head.status, head.http_status, len(head.body), head.truncated) == (Status.OK, 200, HEAD, True)
    assert origin.served[0].sent <= HEAD + SLACK < SIZE                    # and the connection closed
    assert (len(page.body), page.truncated) == (CAP, True)
    assert (len(image.body), image.truncated) == (512, True)               # as the image probe asks


async def test_a_range_request_is_sent_as_range_in_identity_and_its_206_returned(localweb):
    data = bytes(range(256)) * 4096
    origin = RangeOrigin(data, content_type="video/mp4")
    url = localweb.route("f.test", "/v.mp4", origin)
    async with Fetcher(settings(), ownership=AllShards()) as f:
        part = await f.fetch(url, purpose="file", range="bytes=1000-1999")
    assert (part.status, part.http_status, part.body, part.truncated) == (Status.OK, 206, data[1000:2000], False)
    assert byte_ranges.content_range(part.header("content-range")) == (1000, 1999, len(data))
    assert [(s.range, s.accept_encoding) for s in origin.served] == [("bytes=1000-1999", "identity")]


async def test_a_range_ignored_by_the_origin_is_read_up_to_the_cap_and_no_further(localweb):
    origin = RangeOrigin(bytes(SIZE), mode="ignore", content_type="video/mp4")
    url = localweb.route("f.test", "/v.mp4", origin)
    async with Fetcher(settings(), ownership=AllShards()) as f:
        whole = await f.fetch(url, purpose="file", range="bytes=0-99")
    assert (whole.http_status, len(whole.body), whole.truncated) == (200, CAP, True)
    assert origin.served[0].sent <= CAP + SLACK < SIZE


async def test_a_malformed_range_is_refused_before_anything_is_sent(localweb):
    origin = RangeOrigin(bytes(1000))
    url = localweb.route("f.test", "/i.png", origin)
    async with Fetcher(settings(), ownership=AllShards()) as f:
        for bad in ("bytes=9-1", "bytes=0-", f"bytes=0-{CAP}", "bytes=0-1\r\nHost: evil.test"):
            with pytest.raises(byte_ranges.InvalidRange):
                await f.fetch(url, purpose="file", range=bad)
    assert origin.served == [] and localweb.hits == []


async def test_over_grpc_a_malformed_range_is_invalid_argument_and_a_good_one_answered(localweb):
    origin = RangeOrigin(bytes(range(256)) * 64)
    url = localweb.route("f.test", "/i.png", origin)
    async with Fetcher(settings(), ownership=AllShards()) as f:
        async with served(f) as stub:
            for bad in ("bytes=5-1", "bytes=0-" + "9" * 40, "garbage"):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.Fetch(fetcher_pb2.FetchRequest(url=url, purpose="file", range=bad))
                assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
            good = await stub.Fetch(fetcher_pb2.FetchRequest(url=url, purpose="file", range="bytes=10-19"))
    assert (good.http_status, good.body) == (206, bytes(range(10, 20)))
    assert [s.range for s in origin.served] == ["bytes=10-19"]
