"""Who may call what, and in what form: what runs before a gRPC service's methods, one place for
every server.

Every method of every service of a spiderduck.rpc.server server is `checked` (issue 29): a request
its deserializer cannot parse (garbage bytes, a truncated varint, a length past the end, a string
not UTF-8) is answered INVALID_ARGUMENT "malformed request: not a <Message> (...)" before the
method runs, never gRPC's UNKNOWN with the exception's text; one over the method's cap of bytes
(spiderduck.rpc.server's request_caps) is RESOURCE_EXHAUSTED, before it is parsed. A
client-streamed request is checked as it is read.

A guard is `async guard(method, context)`: it returns to let the call through, or ends it with
`context.abort(code, reason)`. `GuardInterceptor({service: guard})` runs each service's guard
before any of its methods (services without one, such as health checking and reflection, are
left alone); spiderduck.rpc.server installs it only when some service has a guard, so a server
without any pays nothing. The policies are the roles' (the fetcher's callers, the metadata
API's tokens); this module only runs them, and holds the one shared policy:

    callers_guard(allowed, what)   PERMISSION_DENIED unless the client certificate's identity
                                   (spiderduck.rpc.tls.caller) is in `allowed`
"""
from __future__ import annotations

import inspect
from typing import Awaitable, Callable, Iterable, Mapping

import grpc
import grpc.aio

from spiderduck.rpc.tls import caller

Guard = Callable[[str, grpc.aio.ServicerContext], Awaitable[None]]


class GuardInterceptor(grpc.aio.ServerInterceptor):
    """Each service's guard from `guards`, after `every` (run before every method of every
    service, health checking and reflection too: the revocation list's, spiderduck.rpc.crl)."""

    def __init__(self, guards: Mapping[str, Guard], every: Guard | None = None):
        self._every = every
        self._guards = {service: _after(every, guard) if every else guard for service, guard in guards.items()}

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        service, _, method = handler_call_details.method.lstrip("/").rpartition("/")
        guard = self._guards.get(service, self._every)
        if handler is None or guard is None:
            return handler
        return _guarded(handler, guard, method)


def _after(first: Guard, then: Guard) -> Guard:
    async def both(method: str, context: grpc.aio.ServicerContext) -> None:
        await first(method, context)
        await then(method, context)
    return both


# Before = async before(request_or_requests, context) -> the request(s) to run the method on
Before = Callable[[object, grpc.aio.ServicerContext], Awaitable[object]]


def _guarded(handler: grpc.RpcMethodHandler, guard: Guard, method: str) -> grpc.RpcMethodHandler:
    """The same handler, its behaviour run only once `guard` lets the call through."""
    async def before(request_or_requests, context):
        await guard(method, context)
        return request_or_requests
    return _preceded(handler, before, handler.request_deserializer)


def _preceded(handler: grpc.RpcMethodHandler, before: Before, deserializer) -> grpc.RpcMethodHandler:
    """The same kind of handler, with `deserializer`, its behaviour run on what `before` returns."""
    codec = {"request_deserializer": deserializer, "response_serializer": handler.response_serializer}
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(_single_response(handler.unary_unary, before), **codec)
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(_streamed_responses(handler.unary_stream, before), **codec)
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(_single_response(handler.stream_unary, before), **codec)
    return grpc.stream_stream_rpc_method_handler(_streamed_responses(handler.stream_stream, before), **codec)


def _single_response(inner, before: Before):
    async def behaviour(request_or_requests, context):
        return await inner(await before(request_or_requests, context), context)
    return behaviour


def _streamed_responses(inner, before: Before):
    """`inner` after `before`, in inner's own form, as gRPC tells them: a coroutine function
    writes its answers with `await context.write(...)` (grpc_health's Watch does), anything
    else is an async generator whose answers gRPC sends."""
    if inspect.iscoroutinefunction(inner):
        async def writes(request_or_requests, context):
            await inner(await before(request_or_requests, context), context)
        return writes

    async def yields(request_or_requests, context):
        async for response in inner(await before(request_or_requests, context), context):
            yield response
    return yields


class _Refused:
    """What a request refused before the method runs becomes: one its deserializer cannot
    parse, or one over the method's cap."""
    __slots__ = ("code", "reason")

    def __init__(self, code: grpc.StatusCode, reason: str):
        self.code = code
        self.reason = reason


def checked(handler: grpc.RpcMethodHandler, max_bytes: int | None = None) -> grpc.RpcMethodHandler:
    """The same handler, a request that does not parse answered INVALID_ARGUMENT with a short
    reason naming the message (gRPC itself answers UNKNOWN, with the exception's type and text),
    and one of more than `max_bytes` RESOURCE_EXHAUSTED, unparsed. A handler taking bytes as they
    are (no deserializer) parses them itself."""
    parse = handler.request_deserializer
    if parse is None:
        return handler
    message = getattr(getattr(parse, "__self__", None), "DESCRIPTOR", None)
    name = message.name if message else "request of this method"
    malformed = _Refused(grpc.StatusCode.INVALID_ARGUMENT,
                         f"malformed request: not a {name} (a protobuf whose strings are UTF-8)")

    def lenient(data: bytes):
        if max_bytes is not None and len(data) > max_bytes:
            return _Refused(grpc.StatusCode.RESOURCE_EXHAUSTED,
                            f"a {name} of {len(data)} bytes is over this service's cap of {max_bytes}")
        try:
            return parse(data)
        except Exception:   # noqa: BLE001 -- DecodeError, or whatever a deserializer raises on bad bytes
            return malformed

    async def refused(context, request: _Refused) -> None:
        await context.abort(request.code, request.reason)

    if handler.unary_unary is not None:      # most calls: one await more, no more (the metadata API's)
        inner = handler.unary_unary

        async def answer(request, context):
            if type(request) is _Refused:
                await refused(context, request)
            return await inner(request, context)
        return grpc.unary_unary_rpc_method_handler(answer, request_deserializer=lenient,
                                                   response_serializer=handler.response_serializer)

    async def each_parsed(requests, context):
        async for request in requests:
            if type(request) is _Refused:
                await refused(context, request)
            yield request

    async def before(request_or_requests, context):
        if type(request_or_requests) is _Refused:
            await refused(context, request_or_requests)
        if handler.stream_unary is not None or handler.stream_stream is not None:
            return each_parsed(request_or_requests, context)
        return request_or_requests
    return _preceded(handler, before, lenient)


class CheckedHandlers(grpc.GenericRpcHandler):
    """A generic handler whose method handlers are `checked` (each wrapped once, then kept), each
    with its cap (`cap_of(full method name)`: bytes, or None)."""

    def __init__(self, inner: grpc.GenericRpcHandler,
                 cap_of: Callable[[str], int | None] = lambda method: None):
        self._inner = inner
        self._cap_of = cap_of
        self._checked: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def service_name(self):
        return self._inner.service_name() if hasattr(self._inner, "service_name") else None

    def service(self, handler_call_details):
        handler = self._inner.service(handler_call_details)
        if handler is None:
            return None
        kept = self._checked.get(handler_call_details.method)
        if kept is None or kept[0] is not handler:
            kept = self._checked[handler_call_details.method] = (
                handler, checked(handler, self._cap_of(handler_call_details.method)))
        return kept[1]


def callers_guard(allowed: Iterable[str], what: str) -> Guard | None:
    """A guard letting only the client identities in `allowed` call `what` (a service's name,
    for the refusal's text); None when `allowed` is empty (any verified client may)."""
    names = frozenset(allowed)
    if not names:
        return None

    async def guard(method: str, context: grpc.aio.ServicerContext) -> None:
        identity = caller(context)
        if identity not in names:
            who = f"caller {identity!r}" if identity else "a caller without a client certificate naming it"
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, f"{who} may not call {what}")
    return guard
