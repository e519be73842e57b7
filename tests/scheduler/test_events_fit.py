"""An event always fits the NATS max payload: the record's structured data goes first, then the record."""
from __future__ import annotations

from spiderduck.core.record import UrlRecord
from spiderduck.core.status import Status
from spiderduck.scheduler.events import fitted
from spiderduck.v1 import events_pb2
from spiderduck.wire import record_proto


def event_of(rec: UrlRecord) -> events_pb2.UrlProcessed:
    return events_pb2.UrlProcessed(url=rec.url, status=int(rec.status), metadata=record_proto.to_proto(rec))


def test_an_event_that_fits_is_unchanged():
    event = event_of(UrlRecord(url="http://a.test/", status=Status.OK, title="T",
                               structured_data={"json-ld": [{"a": 1}]}))
    before = event.SerializeToString()
    assert fitted(event, 1 << 20).SerializeToString() == before


def test_a_large_event_loses_structured_data_then_the_record():
    rec = UrlRecord(url="http://a.test/", status=Status.OK, title="T" * 900,
                    structured_data={"json-ld": [{"text": "x" * 5000}]})
    small = fitted(event_of(rec), 2000)
    assert small.ByteSize() <= 2000 and small.metadata.title == "T" * 900
    assert not small.metadata.HasField("structured_data")
    tiny = fitted(event_of(rec), 500)
    assert tiny.ByteSize() <= 500 and not tiny.HasField("metadata")
    assert tiny.url == "http://a.test/" and tiny.status == Status.OK


def test_the_event_carries_the_records_fetch_mode():
    from spiderduck.scheduler.events import processed_event
    from spiderduck.scheduler.task import CrawlTask, Outcome, Resolution
    rec = UrlRecord(url="http://a.test/", status=Status.OK, title="T", fetch_mode="static")
    event = processed_event(Outcome(CrawlTask("http://a.test/", 90.0), rec, Resolution.CRAWLED, key="http://a.test/"), now=100.0)
    assert event.fetch_mode == "static" and event.metadata.fetch_mode == "static"
    parsed = events_pb2.UrlProcessed.FromString(event.SerializeToString())
    assert parsed.fetch_mode == "static"
    failed = UrlRecord(url="http://a.test/", status=Status.TIMEOUT)
    assert processed_event(Outcome(CrawlTask("http://a.test/", 90.0), failed, Resolution.CRAWLED, key="http://a.test/")).fetch_mode == ""
