"""Traces across processes: a scheduler, a fetcher and a metadata-api, each its own `spiderduck`
process with telemetry.otlp_endpoint set, export their spans over OTLP gRPC to a receiver in this test (the
collector's protocol: opentelemetry.proto.collector.trace.v1.TraceService/Export). One URL
submitted with the submitter's own traceparent makes one trace: the submitter's id, a span for
the delivery, one per scheduler stage, the hop and the fetcher's Fetch, the page's extraction,
the store calls (the record read and written, the WARC record appended), the event's publish; and
the UrlProcessed event carries the trace on in its headers. A ResolveUrl call with its caller's
traceparent in its gRPC metadata joins the metadata-api's span to the same kind of trace."""
from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import os

import grpc
import nats
import yaml
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from spiderduck.bus import streams as bus
from spiderduck.bus import submissions
from spiderduck.cli.nats_server import free_port
from spiderduck.core.config import as_dict
from spiderduck.scheduler.pipeline import build_pipeline
from support.cli import Proc
from support.service import service_settings, wait_port
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc

ORIGIN = os.path.join(os.path.dirname(__file__), "..", "support", "origin_process.py")
TRACE_ID = "5a1f2b3c4d5e6f708192a3b4c5d6e7f8"
SUBMITTER_SPAN = "1122334455667788"
TRACEPARENT = f"00-{TRACE_ID}-{SUBMITTER_SPAN}-01"


class OtlpReceiver(trace_service_pb2_grpc.TraceServiceServicer):
    """An OTLP gRPC trace receiver on a free port: every span exported to it, as
    (service.name, span) pairs; `arrived` is set on each export."""

    def __init__(self):
        self.spans: list[tuple[str, object]] = []
        self.arrived = asyncio.Event()
        self.address = f"127.0.0.1:{free_port()}"

    async def Export(self, request, context):
        for resource_spans in request.resource_spans:
            service = next((a.value.string_value for a in resource_spans.resource.attributes
                            if a.key == "service.name"), "")
            for scope_spans in resource_spans.scope_spans:
                self.spans.extend((service, span) for span in scope_spans.spans)
        self.arrived.set()
        return trace_service_pb2.ExportTraceServiceResponse()

    async def __aenter__(self) -> "OtlpReceiver":
        self._server = grpc.aio.server()
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(self, self._server)
        self._server.add_insecure_port(self.address)
        await self._server.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self._server.stop(None)

    async def wait_for(self, done, timeout: float) -> None:
        """Until `done(spans)` is true, waking on each export; fails after `timeout` seconds."""
        async def until():
            while not done(self.spans):
                self.arrived.clear()
                await self.arrived.wait()
        try:
            await asyncio.wait_for(until(), timeout)
        except TimeoutError:
            names = sorted({(s, span.name) for s, span in self.spans})
            raise AssertionError(f"spans so far: {names}") from None


# The spans of the extraction and of the store calls one crawl makes, each with the stage it is in.
STORED = {"extract": "PostProcessor", "metadata get": "CrawlDecider", "metadata put": "CrawlRecorder",
          "content append": "CrawlRecorder"}


def _attribute(span, key: str):
    """The value of a span's attribute `key` (a string or an int), None without it."""
    for a in span.attributes:
        if a.key == key:
            return a.value.string_value or a.value.int_value
    return None


def stage_names(settings) -> list[str]:
    """The scheduler's stages, by the names their spans take (scheduler.stages.chain)."""
    from spiderduck.scheduler.stages.chain import stage_name
    pipeline = build_pipeline(settings, metadata=None, content=None, fetch_hop=None,
                              publish=None, metrics=None)
    return [stage_name(s) for s in pipeline.stages]


class Traced:
    """What a test of traces runs on: the receiver, the settings, NATS and the events."""
    receiver: OtlpReceiver
    settings: object
    js: object
    events: asyncio.Queue
    origin_port: int


@contextlib.asynccontextmanager
async def traced_roles(tmp_path, nats_server, *roles: str):
    """`roles` as `spiderduck` processes exporting to an in-process receiver, an origin process
    serving any page, and NATS with the event subject followed."""
    origin_port = free_port()
    origin = subprocess.Popen([sys.executable, ORIGIN, str(origin_port), "0"])
    procs: list[Proc] = []
    async with OtlpReceiver() as receiver:
        settings = service_settings(tmp_path, nats_server.url, **{
            "telemetry.otlp_endpoint": receiver.address})
        config_path = tmp_path / "spiderduck.yaml"
        config_path.write_text(yaml.safe_dump(as_dict(settings)))
        nc = await nats.connect(nats_server.url)
        try:
            traced = Traced()
            traced.receiver, traced.settings, traced.js = receiver, settings, nc.jetstream()
            traced.events, traced.origin_port = asyncio.Queue(), origin_port
            await bus.ensure_streams(traced.js)
            await nc.subscribe(bus.PROCESSED_SUBJECT, cb=traced.events.put)
            procs.extend(Proc(tmp_path, role, "--config", str(config_path)) for role in roles)
            await wait_port(f"127.0.0.1:{origin_port}", 20)
            await wait_port(settings.fetcher.listen, 30)
            yield traced
        finally:
            for proc in procs:
                await proc.stop()
            await nc.close()
            origin.terminate()
            origin.wait()


async def test_one_url_makes_one_trace_across_the_scheduler_and_the_fetcher(tmp_path, nats_server):
    async with traced_roles(tmp_path, nats_server, "fetcher", "scheduler") as traced:
        url = f"http://traced.test:{traced.origin_port}/page"
        await submissions.publish(traced.js, submissions.encode(url, traceparent=TRACEPARENT))
        event = await asyncio.wait_for(traced.events.get(), 60)
        assert event.headers["traceparent"].startswith(f"00-{TRACE_ID}-")
        stages = stage_names(traced.settings)

        def complete(spans) -> bool:
            names = {(service, span.name) for service, span in spans}
            return ({("spiderduck-scheduler", s) for s in (*stages, *STORED)} | {
                ("spiderduck-fetcher", "Fetch"), ("spiderduck-scheduler", "publish UrlProcessed"),
                ("spiderduck-scheduler", "process submission")}) <= names
        await traced.receiver.wait_for(complete, 30)

    spans = traced.receiver.spans
    assert {span.trace_id.hex() for _, span in spans} == {TRACE_ID}
    by_name = {}
    for service, span in spans:
        by_name.setdefault(span.name, []).append((service, span))
    ((_, root),) = by_name["process submission"]
    assert root.parent_span_id.hex() == SUBMITTER_SPAN       # the submitter's span continued
    # Each stage a child of the one outside it, the outermost of the delivery's span.
    parent = root
    for name in stages[:stages.index("RedirectFollower") + 1]:
        service, span = by_name[name][0]
        assert (service, span.parent_span_id) == ("spiderduck-scheduler", parent.span_id), name
        parent = span
    # The fetcher's Fetch span is a child of a hop the scheduler made, across processes.
    hops = {span.span_id for service, span in by_name["fetch hop"] if service == "spiderduck-scheduler"}
    fetches = [span for service, span in by_name["Fetch"] if service == "spiderduck-fetcher"]
    assert fetches and all(span.parent_span_id in hops for span in fetches)
    assert any(a.value.string_value == url for span in fetches for a in span.attributes
               if a.key == "url.full")
    # The extraction and the store calls: each in the trace, a child of the stage that made it.
    ids = {span.span_id for _, span in spans}
    for name, stage in STORED.items():
        made = [(s, span) for s, span in by_name[name] if _attribute(span, "url.full") == url]
        stage_ids = {span.span_id for _, span in by_name[stage]}
        assert made and all(s == "spiderduck-scheduler" and span.parent_span_id in ids & stage_ids
                            for s, span in made), (name, stage)
    ((_, extract),) = by_name["extract"]
    assert _attribute(extract, "spiderduck.body_bytes") > 0
    assert {_attribute(span, "db.system") for name in ("metadata get", "metadata put")
            for _, span in by_name[name]} == {"sqlite"}
    assert {_attribute(span, "db.system") for _, span in by_name["content append"]} == {"warc"}


async def test_a_resolve_url_call_joins_the_metadata_api_to_its_callers_trace(tmp_path, nats_server):
    """The metadata-api's ResolveUrl span continues the caller's traceparent (gRPC metadata), and
    the submission it publishes carries the trace on to the scheduler and the fetcher."""
    async with traced_roles(tmp_path, nats_server, "fetcher", "scheduler", "metadata-api") as traced:
        url = f"http://resolved.test:{traced.origin_port}/page"
        await wait_port(traced.settings.metadata_api.listen, 30)
        async with grpc.aio.insecure_channel(traced.settings.metadata_api.listen) as channel:
            answer = await metadata_pb2_grpc.MetadataServiceStub(channel).ResolveUrl(
                metadata_pb2.ResolveUrlRequest(url=url), metadata=(("traceparent", TRACEPARENT),), timeout=60)
        assert answer.found

        def complete(spans) -> bool:
            names = {(service, span.name) for service, span in spans}
            return {("spiderduck-metadata-api", "ResolveUrl"), ("spiderduck-scheduler", "process submission"),
                    ("spiderduck-fetcher", "Fetch")} <= names
        await traced.receiver.wait_for(complete, 30)

    spans = traced.receiver.spans
    assert {span.trace_id.hex() for _, span in spans} == {TRACE_ID}
    by_name = {span.name: (service, span) for service, span in spans}
    service, resolve = by_name["ResolveUrl"]
    assert service == "spiderduck-metadata-api" and resolve.parent_span_id.hex() == SUBMITTER_SPAN
    _, delivery = by_name["process submission"]
    assert delivery.parent_span_id == resolve.span_id       # across NATS, from the metadata-api
