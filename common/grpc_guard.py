"""Who may call what: guards run before a gRPC service's methods, one place for every server.

A guard is `async guard(method, context)`: it returns to let the call through, or ends it with
`context.abort(code, reason)`. `GuardInterceptor({service: guard})` runs each service's guard
before any of its methods (services without one, such as health checking and reflection, are
left alone); common.grpc_server installs it only when some service has a guard, so a server
without any pays nothing. The policies are the roles' (the fetcher's callers, the metadata
API's tokens); this module only runs them, and holds the one shared policy:

    callers_guard(allowed, what)   PERMISSION_DENIED unless the client certificate's identity
                                   (common.grpc_tls.caller) is in `allowed`
"""
from __future__ import annotations

import inspect
from typing import Awaitable, Callable, Iterable, Mapping

import grpc
import grpc.aio

from common.grpc_tls import caller

Guard = Callable[[str, grpc.aio.ServicerContext], Awaitable[None]]


class GuardInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, guards: Mapping[str, Guard]):
        self._guards = dict(guards)

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        service, _, method = handler_call_details.method.lstrip("/").rpartition("/")
        guard = self._guards.get(service)
        if handler is None or guard is None:
            return handler
        return _guarded(handler, guard, method)


def _guarded(handler: grpc.RpcMethodHandler, guard: Guard, method: str) -> grpc.RpcMethodHandler:
    """The same handler, its behaviour run only once `guard` lets the call through."""
    codec = {"request_deserializer": handler.request_deserializer,
             "response_serializer": handler.response_serializer}
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(_single_response(handler.unary_unary, guard, method), **codec)
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(_streamed_responses(handler.unary_stream, guard, method),
                                                    **codec)
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(_single_response(handler.stream_unary, guard, method), **codec)
    return grpc.stream_stream_rpc_method_handler(_streamed_responses(handler.stream_stream, guard, method),
                                                 **codec)


def _single_response(inner, guard: Guard, method: str):
    async def behaviour(request_or_requests, context):
        await guard(method, context)
        return await inner(request_or_requests, context)
    return behaviour


def _streamed_responses(inner, guard: Guard, method: str):
    """`inner` behind `guard`, in inner's own form, as gRPC tells them: a coroutine function
    writes its answers with `await context.write(...)` (grpc_health's Watch does), anything
    else is an async generator whose answers gRPC sends."""
    if inspect.iscoroutinefunction(inner):
        async def writes(request_or_requests, context):
            await guard(method, context)
            await inner(request_or_requests, context)
        return writes

    async def yields(request_or_requests, context):
        await guard(method, context)
        async for response in inner(request_or_requests, context):
            yield response
    return yields


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
