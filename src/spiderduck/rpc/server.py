"""gRPC servers: one asyncio server with health checking and reflection on, plaintext or TLS
(config `tls`, spiderduck.rpc.tls), with the guards of its services (spiderduck.rpc.guard). Every
handler registered on it, by `add` or on `server` itself, is `checked` (spiderduck.rpc.guard): a
malformed request is INVALID_ARGUMENT with a short reason, whatever the service.

What a server receives is capped (issue 38): `request_caps` names the largest legitimate request
of each service (or of one method, "/service/Method"), as the module defining the service works
it out. gRPC itself refuses a message over the largest of them (or DEFAULT_MAX_REQUEST_BYTES, for
a server of health checking and reflection alone) before reading it whole, and a request over its
own service's or method's cap is refused before it is parsed: RESOURCE_EXHAUSTED either way.
Answers may stay large (a fetch answer carries a body): MAX_MESSAGE_BYTES bounds what is sent."""
from __future__ import annotations

from typing import Mapping, Sequence

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from spiderduck.core.config import TlsSettings
from spiderduck.core.errors import ConfigError
from spiderduck.rpc import tls as grpc_tls
from spiderduck.rpc.guard import CheckedHandlers, Guard, GuardInterceptor, checked

MAX_MESSAGE_BYTES = 64 * 1024 * 1024      # the largest answer sent
DEFAULT_MAX_REQUEST_BYTES = 64 * 1024     # received, when no service names a cap: health checking
                                          # and reflection requests are a name or a symbol
REQUEST_HEADROOM = 64 * 1024              # what a service's cap adds to its largest legitimate request


class GrpcServer:
    """`async with GrpcServer(listen) as s: s.add(register_fn, servicer, service_name)`."""

    def __init__(self, listen: str, max_concurrent_rpcs: int | None = None, *, stop_grace: float = 2.0,
                 tls: TlsSettings | None = None, guards: Mapping[str, Guard | None] | None = None,
                 request_caps: Mapping[str, int] | None = None):
        """`max_concurrent_rpcs`: calls beyond it are refused at once with RESOURCE_EXHAUSTED.
        `stop_grace`: seconds calls in flight at a stop may take before they are cancelled.
        `tls`: with tls.cert set the server serves TLS only (its credentials are read here, so
        a bad file fails at start). `guards`: service name -> who may call it (None: anyone
        who reaches it; with TLS and client_auth require, anyone with a valid certificate).
        `request_caps`: service name, or "/service/Method", -> the largest request it receives."""
        self.listen = listen
        self.stop_grace = stop_grace
        self._credentials = grpc_tls.server_credentials(tls) if tls is not None else None
        active = {name: guard for name, guard in (guards or {}).items() if guard is not None}
        caps = dict(request_caps or {})
        self.max_request_bytes = max(caps.values(), default=DEFAULT_MAX_REQUEST_BYTES)
        self.server: grpc.aio.Server = CheckedServer(grpc.aio.server(
            maximum_concurrent_rpcs=max_concurrent_rpcs,
            interceptors=[GuardInterceptor(active)] if active else None, options=[
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_receive_message_length", self.max_request_bytes),
            ("grpc.so_reuseport", 0),
        ]), caps)
        self.health = health.aio.HealthServicer()
        self._names: list[str] = []
        self.port = 0

    def add(self, register, servicer, service_name: str) -> None:
        register(servicer, self.server)
        self._names.append(service_name)

    def bind(self) -> str:
        """Bind the listening port now, before start (servicers may still be added until then),
        and return the bound address: for a servicer whose state names it (the fetcher's shard
        leases). start() binds if this was not called; calling it again is a no-op."""
        if not self.port:
            try:
                if self._credentials is None:
                    self.port = self.server.add_insecure_port(self.listen)
                else:
                    self.port = self.server.add_secure_port(self.listen, self._credentials)
            except RuntimeError as exc:
                raise ConfigError(f"cannot listen on {self.listen}: {exc}") from exc
        return self.address

    async def start(self) -> None:
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        reflection.enable_server_reflection(
            [*self._names, health.SERVICE_NAME, reflection.SERVICE_NAME], self.server)
        self.bind()
        await self.server.start()
        for name in ["", *self._names]:
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    @property
    def address(self) -> str:
        host = self.listen.rsplit(":", 1)[0]
        return f"{host}:{self.port}"

    async def stop(self) -> None:
        for name in ["", *self._names]:
            await self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.server.stop(self.stop_grace)

    async def __aenter__(self) -> "GrpcServer":
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()



class CheckedServer(grpc.aio.Server):
    """A grpc.aio server whose every registered handler is `checked`: no service can forget to
    answer a malformed request INVALID_ARGUMENT, nor take a request over its cap (`caps`: service
    name or "/service/Method" -> bytes; the method's own first). Everything else is the server's own."""

    def __init__(self, server: grpc.aio.Server, caps: Mapping[str, int] | None = None):
        self._server = server
        self._caps = dict(caps or {})

    def cap_of(self, method: str) -> int | None:
        """The cap of a method by its full name ("/service/Method"), else None."""
        return self._caps.get(method, self._caps.get(method.lstrip("/").rpartition("/")[0]))

    def add_generic_rpc_handlers(self, generic_rpc_handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self._server.add_generic_rpc_handlers(
            tuple(CheckedHandlers(h, self.cap_of) for h in generic_rpc_handlers))

    def add_registered_method_handlers(self, service_name: str, method_handlers) -> None:
        self._server.add_registered_method_handlers(service_name, {
            name: checked(handler, self.cap_of(f"/{service_name}/{name}"))
            for name, handler in method_handlers.items()})

    def add_insecure_port(self, address: str) -> int:
        return self._server.add_insecure_port(address)

    def add_secure_port(self, address: str, server_credentials) -> int:
        return self._server.add_secure_port(address, server_credentials)

    async def start(self) -> None:
        await self._server.start()

    async def stop(self, grace: float | None) -> None:
        await self._server.stop(grace)

    async def wait_for_termination(self, timeout: float | None = None) -> bool:
        return await self._server.wait_for_termination(timeout)

    def __getattr__(self, name: str):
        return getattr(self._server, name)
