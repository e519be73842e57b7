"""src/spiderduck/core/telemetry.py: off costs nothing and adds nothing; on, spans join the trace a message's
headers or a call's gRPC metadata carry (W3C traceparent), and carry it on."""
from __future__ import annotations

import pytest

from spiderduck.core import telemetry
from spiderduck.core.settings import Settings, TelemetrySettings

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"




def test_off_by_default_makes_no_spans_and_adds_no_headers():
    assert Settings().telemetry.otlp_endpoint == ""
    telemetry.setup(TelemetrySettings(), "scheduler")()
    assert not telemetry.enabled()
    with telemetry.span("Decoder", parent=telemetry.extract({"traceparent": PARENT})) as span:
        assert span is None
        assert telemetry.inject({}) == {}
        assert telemetry.grpc_metadata() is None
    assert telemetry.extract({"traceparent": PARENT}) is None


def test_a_span_continues_the_traceparent_of_headers_in_any_case(spans):
    parent = telemetry.extract({"Content-Type": "x", "Traceparent": PARENT})
    with telemetry.span("message", parent=parent):
        with telemetry.span("Decoder"):
            headers = telemetry.inject({"Content-Type": "x"})
            metadata = dict(telemetry.grpc_metadata())
    done = {s.name: s for s in spans.get_finished_spans()}
    assert set(done) == {"message", "Decoder"}
    assert {format(s.context.trace_id, "032x") for s in done.values()} == {TRACE_ID}
    assert format(done["message"].parent.span_id, "016x") == "00f067aa0ba902b7"
    assert done["Decoder"].parent.span_id == done["message"].context.span_id
    assert done["message"].resource.attributes["service.name"] == "spiderduck-test"
    # What is carried on names the inner span, in the same trace.
    decoder = format(done["Decoder"].context.span_id, "016x")
    assert headers["traceparent"] == f"00-{TRACE_ID}-{decoder}-01"
    assert metadata == {"traceparent": headers["traceparent"]}


def test_inject_keeps_a_traceparent_already_there_and_extract_reads_grpc_pairs(spans):
    with telemetry.span("message"):
        assert telemetry.inject({"traceparent": PARENT}) == {"traceparent": PARENT}
    parent = telemetry.extract((("user-agent", "grpc"), ("traceparent", PARENT)))
    with telemetry.span("Fetch", parent=parent):
        pass
    fetch = [s for s in spans.get_finished_spans() if s.name == "Fetch"][0]
    assert format(fetch.context.trace_id, "032x") == TRACE_ID
    assert telemetry.extract({"content-type": "x"}) is None
    assert telemetry.extract((("traceparent", b"binary"),)) is None


def test_an_exception_leaving_a_span_is_recorded_on_it(spans):
    with pytest.raises(ValueError):
        with telemetry.span("Decoder"):
            raise ValueError("bad message")
    (span,) = spans.get_finished_spans()
    assert not span.status.is_ok
    assert span.events[0].name == "exception"


class _Js:
    def __init__(self):
        self.published = []

    async def publish(self, subject, data, headers=None):
        self.published.append(headers)


async def test_a_submission_carries_its_submitters_traceparent_and_a_resubmitted_part_its_span(spans):
    from spiderduck.bus import submissions
    assert submissions.encode("http://a.test/", traceparent=PARENT).headers["traceparent"] == PARENT
    js = _Js()
    part = submissions.encode("http://a.test/1")
    with telemetry.span("Decoder", parent=telemetry.extract({"traceparent": PARENT})):
        await submissions.publisher(js)(part.data, part.headers)
        await submissions.publish(js, submissions.encode("http://a.test/2", traceparent=PARENT))
    (decoder,) = spans.get_finished_spans()
    assert js.published[0]["traceparent"] == f"00-{TRACE_ID}-{format(decoder.context.span_id, '016x')}-01"
    assert js.published[1]["traceparent"] == PARENT       # one already there is kept
    assert "traceparent" not in part.headers              # the part as encoded is left as it was
