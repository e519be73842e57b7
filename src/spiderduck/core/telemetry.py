"""Traces: OpenTelemetry spans, exported over OTLP gRPC when `telemetry.otlp_endpoint` is set.

    shutdown = setup(settings.telemetry, "scheduler")   # once per process, by src/spiderduck/cli/roles.py
    with span("Decoder", parent=extract(headers)): ...
    headers = inject({...})                             # NATS headers: W3C traceparent
    metadata = grpc_metadata()                          # gRPC call metadata: the same

One URL's trace crosses processes as W3C Trace Context (`traceparent`, `tracestate`): in the
headers of its NATS messages (the submission, a split's parts, the UrlProcessed event) and in the
metadata of its gRPC calls (the scheduler's Fetch to a fetcher). A submitter that sends its own
`traceparent` gets its trace continued.

Off (no endpoint) nothing is installed: `enabled()` is False, `span` is OFF (a shared context
that yields None: nothing made but the call), and `inject` adds nothing.
"""
from __future__ import annotations

import contextlib
import logging
from typing import Any, Callable, Iterator, Mapping, MutableMapping, Sequence

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.propagators.textmap import Getter
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

log = logging.getLogger("spiderduck.telemetry")

TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"
TRACER_NAME = "spiderduck"
_PROPAGATOR = TraceContextTextMapPropagator()
_provider: Any = None       # the SDK TracerProvider setup installed, None when off (this
                            # process's own: OpenTelemetry's global one can be set only once)
EXPORT_EVERY_MS = 500       # the batch exporter sends what ended at least this often


class _AnyCaseGetter(Getter):
    """Header names as NATS keeps them (any case) or as gRPC sends them (lower case)."""

    def get(self, carrier: Mapping[str, str], key: str) -> list[str] | None:
        for name, value in carrier.items():
            if name.lower() == key:
                return [value]
        return None

    def keys(self, carrier: Mapping[str, str]) -> list[str]:
        return [k.lower() for k in carrier]


_GETTER = _AnyCaseGetter()


def enabled() -> bool:
    """Whether this process makes spans (setup found an endpoint)."""
    return _provider is not None


def setup(settings, role: str, *, exporter: Any = None) -> Callable[[], None]:
    """Install a TracerProvider exporting to `settings.otlp_endpoint` (a TelemetrySettings) in
    batches, its resource's service.name `settings.service_name` or spiderduck-<role>. Returns the
    shutdown, which flushes what is batched and turns spans off again. With no endpoint: nothing
    installed, a no-op shutdown; while one is installed, a second setup changes nothing (`up`'s
    roles share their process's). `exporter` (tests) takes each span as it ends instead."""
    global _provider
    endpoint = settings.otlp_endpoint
    if (not endpoint and exporter is None) or _provider is not None:
        return lambda: None
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    name = settings.service_name or f"spiderduck-{role}"
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        insecure = not endpoint.startswith("https://")
        provider.add_span_processor(BatchSpanProcessor(
            OTLPSpanExporter(endpoint=endpoint, insecure=insecure), schedule_delay_millis=EXPORT_EVERY_MS))
        log.info("traces: exporting spans as %s to %s (OTLP gRPC)", name, endpoint)
    _provider = provider

    def shutdown() -> None:
        global _provider
        if _provider is provider:
            _provider = None
            provider.shutdown()
    return shutdown


def tracer() -> trace.Tracer:
    """The tracer of the provider setup installed (the no-op one when off)."""
    return (_provider or trace.NoOpTracerProvider()).get_tracer(TRACER_NAME)


def extract(carrier: Mapping[str, str] | Sequence[tuple[str, str]] | None) -> otel_context.Context | None:
    """The trace context a message's headers (a mapping) or a call's gRPC metadata (pairs) carry;
    None when off or when they carry none."""
    if _provider is None or not carrier:
        return None
    if not isinstance(carrier, Mapping):
        carrier = {k: v for k, v in carrier if isinstance(v, str)}
    if not any(k.lower() == TRACEPARENT for k in carrier):
        return None
    return _PROPAGATOR.extract(carrier, getter=_GETTER)


def inject(headers: MutableMapping[str, str]) -> MutableMapping[str, str]:
    """`headers` with the current span's traceparent (and tracestate) added, when on and in a
    span; returned for chaining. A traceparent already there is kept."""
    if _provider is None or any(k.lower() == TRACEPARENT for k in headers):
        return headers
    _PROPAGATOR.inject(headers)
    return headers


def grpc_metadata() -> tuple[tuple[str, str], ...] | None:
    """The current span's trace context as gRPC call metadata, None when off or outside a span."""
    if _provider is None:
        return None
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return tuple(carrier.items()) or None


OFF: contextlib.AbstractContextManager[None] = contextlib.nullcontext()   # what `span` is when off


def span(name: str, *, parent: otel_context.Context | None = None,
         kind: trace.SpanKind = trace.SpanKind.INTERNAL,
         attributes: Mapping[str, Any] | None = None) -> contextlib.AbstractContextManager[trace.Span | None]:
    """A span made current for the block, a child of `parent` (else of the current span);
    an exception leaving the block is recorded on it. Off: OFF, which yields None (no generator,
    no span); a caller whose attributes cost something to gather checks `enabled()` first."""
    if _provider is None:
        return OFF
    return _span(name, parent, kind, attributes)


@contextlib.contextmanager
def _span(name: str, parent: otel_context.Context | None, kind: trace.SpanKind,
          attributes: Mapping[str, Any] | None) -> Iterator[trace.Span]:
    with tracer().start_as_current_span(name, context=parent, kind=kind,
                                        attributes=dict(attributes or {})) as current:
        yield current
