"""gRPC servers: one asyncio server with health checking and reflection on, plaintext or TLS
(config `tls`, spiderduck.rpc.tls), with the guards of its services (spiderduck.rpc.guard). Every
handler registered on it, by `add` or on `server` itself, is `checked` (spiderduck.rpc.guard): a
malformed request is INVALID_ARGUMENT with a short reason, whatever the service."""
from __future__ import annotations

from typing import Mapping, Sequence

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from spiderduck.core.config import TlsSettings
from spiderduck.core.errors import ConfigError
from spiderduck.rpc import tls as grpc_tls
from spiderduck.rpc.guard import CheckedHandlers, Guard, GuardInterceptor, checked

MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class GrpcServer:
    """`async with GrpcServer(listen) as s: s.add(register_fn, servicer, service_name)`."""

    def __init__(self, listen: str, max_concurrent_rpcs: int | None = None, *, stop_grace: float = 2.0,
                 tls: TlsSettings | None = None, guards: Mapping[str, Guard | None] | None = None):
        """`max_concurrent_rpcs`: calls beyond it are refused at once with RESOURCE_EXHAUSTED.
        `stop_grace`: seconds calls in flight at a stop may take before they are cancelled.
        `tls`: with tls.cert set the server serves TLS only (its credentials are read here, so
        a bad file fails at start). `guards`: service name -> who may call it (None: anyone
        who reaches it; with TLS and client_auth require, anyone with a valid certificate)."""
        self.listen = listen
        self.stop_grace = stop_grace
        self._credentials = grpc_tls.server_credentials(tls) if tls is not None else None
        active = {name: guard for name, guard in (guards or {}).items() if guard is not None}
        self.server: grpc.aio.Server = CheckedServer(grpc.aio.server(
            maximum_concurrent_rpcs=max_concurrent_rpcs,
            interceptors=[GuardInterceptor(active)] if active else None, options=[
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.so_reuseport", 0),
        ]))
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
    answer a malformed request INVALID_ARGUMENT. Everything else is the server's own."""

    def __init__(self, server: grpc.aio.Server):
        self._server = server

    def add_generic_rpc_handlers(self, generic_rpc_handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self._server.add_generic_rpc_handlers(tuple(CheckedHandlers(h) for h in generic_rpc_handlers))

    def add_registered_method_handlers(self, service_name: str, method_handlers) -> None:
        self._server.add_registered_method_handlers(
            service_name, {name: checked(handler) for name, handler in method_handlers.items()})

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
