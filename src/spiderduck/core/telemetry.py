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

No secret of a URL reaches a span: a URL attribute (URL_ATTRIBUTES, `url.full`) given to `span` or
`set_attribute` goes through `redact_url`, which drops the userinfo and writes REDACTED for the
value of each query parameter named by `telemetry.redact_query_params`; an exception recorded on
a span has every URL in its message and stack trace (and the span's status) redacted alike.
"""
from __future__ import annotations

import contextlib
import logging
import re
import traceback
from urllib.parse import unquote_plus
from typing import Any, Callable, Iterator, Mapping, MutableMapping, Sequence

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode
from opentelemetry.propagators.textmap import Getter
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from spiderduck.core.urls import without_userinfo

log = logging.getLogger("spiderduck.telemetry")

TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"
TRACER_NAME = "spiderduck"
_PROPAGATOR = TraceContextTextMapPropagator()
_provider: Any = None       # the SDK TracerProvider setup installed, None when off (this
                            # process's own: OpenTelemetry's global one can be set only once)
EXPORT_EVERY_MS = 500       # the batch exporter sends what ended at least this often
REDACTED = "REDACTED"
URL_ATTRIBUTES = frozenset({"url.full"})    # span attributes whose value is a URL
_redact_names: tuple[str, ...] = ()         # setup's telemetry.redact_query_params, lower-cased


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

    global _redact_names
    _redact_names = tuple(n.strip().lower() for n in settings.redact_query_params)
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


def redact_url(url: str, names: Sequence[str]) -> str:
    """`url` without its userinfo, and with REDACTED for the value of each query (or fragment)
    parameter whose lower-cased, percent-decoded name contains one of `names` (lower-cased):
    `redact_url("https://h/?session_token=abc&q=1", ["token"])` -> `https://h/?session_token=REDACTED&q=1`."""
    url = without_userinfo(url)
    if "?" not in url and "#" not in url:
        return url
    rest, hash_, fragment = url.partition("#")
    base, mark, query = rest.partition("?")
    return base + mark + _redact_params(query, names) + hash_ + _redact_params(fragment, names)


def _redact_params(params: str, names: Sequence[str]) -> str:
    if not params or not names:
        return params
    out = []
    for part in params.split("&"):
        name, eq, _ = part.partition("=")
        if eq and any(n in unquote_plus(name).lower() for n in names):
            part = f"{name}={REDACTED}"
        out.append(part)
    return "&".join(out)


_URL_IN_TEXT = re.compile(r"""[A-Za-z][A-Za-z0-9+.-]*://[^\s'"<>]+""")


def redact_text(text: str) -> str:
    """`text` (an exception's message, a stack trace) with every URL in it through redact_url,
    by the names setup was given."""
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(), _redact_names), text)


def set_attribute(span: trace.Span | None, key: str, value: Any) -> None:
    """`span.set_attribute(key, value)`, a URL attribute redacted (redact_url); nothing when
    `span` is None (traces off)."""
    if span is not None:
        span.set_attribute(key, _redacted(key, value))


def _redacted(key: str, value: Any) -> Any:
    return redact_url(value, _redact_names) if key in URL_ATTRIBUTES and isinstance(value, str) else value


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
    with tracer().start_as_current_span(
            name, context=parent, kind=kind, record_exception=False, set_status_on_exception=False,
            attributes={k: _redacted(k, v) for k, v in (attributes or {}).items()}) as current:
        try:
            yield current
        except BaseException as exc:    # recorded as the SDK would, each URL in it redacted
            if current.is_recording():
                current.record_exception(exc, escaped=True, attributes={
                    "exception.message": redact_text(str(exc)),
                    "exception.stacktrace": redact_text("".join(traceback.format_exception(exc)))})
                current.set_status(Status(StatusCode.ERROR, redact_text(f"{type(exc).__name__}: {exc}")))
            raise
