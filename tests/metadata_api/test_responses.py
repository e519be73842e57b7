"""GetUrlMetadataResponse framed by hand from stored bytes reads as protobuf's own message, each
record naming the URL asked for."""
from __future__ import annotations

import pytest

from spiderduck.core.record import UrlRecord
from spiderduck.core.status import Status
from spiderduck.metadata_api import responses
from spiderduck.v1 import metadata_pb2
from spiderduck.wire import record_proto


def record(title: str) -> bytes:
    return record_proto.to_bytes(UrlRecord(url="http://a.test/", status=Status.OK, title=title,
                                           structured_data={"k": ["v"] * 50}))


CASES = {
    "found and not": (["http://a.test/", "http://nope.test/"], [record("T"), None]),
    "an empty url": ([""], [record("T")]),
    "unicode": (["http://ü.test/ä?q=é"], [record("Tïtlé ✓")]),
    "a long url": (["http://a.test/" + "x" * 300], [None]),
    "a big record": (["http://a.test/"], [record("x" * 70_000)]),
    "300 results": ([f"http://a.test/{n}" for n in range(300)], [record(str(n)) for n in range(300)]),
    "nothing asked": ([], []),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_framed_response_is_what_protobuf_writes(name):
    urls, stored = CASES[name]
    expected = metadata_pb2.GetUrlMetadataResponse()
    for url, data in zip(urls, stored):
        result = expected.results.add(url=url, found=data is not None)
        if data is not None:
            result.metadata.ParseFromString(data)
            if url:
                result.metadata.url = url
    framed = responses.response(urls, stored)
    assert metadata_pb2.GetUrlMetadataResponse.FromString(framed) == expected


def test_a_record_found_under_another_url_names_the_url_asked_for():
    stored = record_proto.to_bytes(UrlRecord(url="http://short.test/1", status=Status.OK,
                                             final_url="http://a.test/page"))
    framed = responses.response(["http://short.test/2", "http://a.test/page"], [stored, stored])
    results = metadata_pb2.GetUrlMetadataResponse.FromString(framed).results
    assert [r.metadata.url for r in results] == ["http://short.test/2", "http://a.test/page"]
    assert {r.metadata.final_url for r in results} == {"http://a.test/page"}


def test_a_result_not_found_says_pending_when_told_so():
    stored = record("T")
    framed = responses.response(["http://q.test/", "http://a.test/", "http://n.test/", ""],
                                [None, stored, None, None], pending=[True, True, False, True])
    results = metadata_pb2.GetUrlMetadataResponse.FromString(framed).results
    assert [(r.found, r.pending) for r in results] == [(False, True), (True, False), (False, False), (False, True)]
    assert results[1].metadata.title == "T" and results[3].url == ""
