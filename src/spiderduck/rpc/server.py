"""gRPC servers: one asyncio server with health checking and reflection on, plaintext or TLS
(config `tls`, spiderduck.rpc.tls), with the guards of its services (spiderduck.rpc.guard). Every
handler registered on it, by `add` or on `server` itself, is `checked` (spiderduck.rpc.guard): a
malformed request is INVALID_ARGUMENT with a short reason, whatever the service.

What a server receives is capped (issue 38): `request_caps` names the largest legitimate request
of each service (or of one method, "/service/Method"), as the module defining the service works
it out. gRPC itself refuses a message over the largest of them (or DEFAULT_MAX_REQUEST_BYTES, for
a server of health checking and reflection alone) before reading it whole, and a request over its
own service's or method's cap is refused before it is parsed: RESOURCE_EXHAUSTED either way.
Answers may stay large (a fetch answer carries a body): MAX_MESSAGE_BYTES bounds what is sent.

Certificates rotate without a restart (issue 38): every tls.reload_interval seconds the server looks
at tls.cert, tls.key and tls.ca (and tls.crl, spiderduck.rpc.crl). Once they changed and load, a
new grpc.aio server with the same handlers is bound to the same port with the new credentials
and started, and the old one stopped as at a stop (its calls in flight get `stop_grace`; its
clients, told to go away, connect again and meet the new one). The old listener closes before
the new one binds (SO_REUSEPORT stays off, so no other process can share the port): a
connection attempted in those few milliseconds is refused, and a gRPC client dials again. No
Python runs in gRPC's handshakes (grpc.dynamic_ssl_server_credentials would: see
spiderduck.rpc.reloading for the deadlock it caused), and a stop never waits on a handshake."""
from __future__ import annotations

import asyncio
import logging
from typing import Callable, Mapping, Sequence

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from spiderduck.core.config import TlsSettings
from spiderduck.core.errors import ConfigError
from spiderduck.rpc import tls as grpc_tls
from spiderduck.rpc.crl import revocation_list
from spiderduck.rpc.guard import CheckedHandlers, Guard, GuardInterceptor, checked

log = logging.getLogger("spiderduck.rpc.tls")

MAX_MESSAGE_BYTES = 64 * 1024 * 1024      # the largest answer sent
DEFAULT_MAX_REQUEST_BYTES = 64 * 1024     # received, when no service names a cap: health checking
                                          # and reflection requests are a name or a symbol
REQUEST_HEADROOM = 64 * 1024              # what a service's cap adds to its largest legitimate request
REBIND_TIMEOUT = 5.0                      # seconds a rotation tries to bind the port its old server let go


class GrpcServer:
    """`async with GrpcServer(listen) as s: s.add(register_fn, servicer, service_name)`."""

    def __init__(self, listen: str, max_concurrent_rpcs: int | None = None, *, stop_grace: float = 2.0,
                 tls: TlsSettings | None = None, guards: Mapping[str, Guard | None] | None = None,
                 request_caps: Mapping[str, int] | None = None):
        """`max_concurrent_rpcs`: calls beyond it are refused at once with RESOURCE_EXHAUSTED.
        `stop_grace`: seconds calls in flight at a stop may take before they are cancelled.
        `tls`: with tls.cert set the server serves TLS only (its credentials, and tls.crl, are
        read here, so a bad file fails at start; they are read again when they change).
        `guards`: service name -> who may call it (None: anyone who reaches it; with TLS and
        client_auth require, anyone with a valid certificate).
        `request_caps`: service name, or "/service/Method", -> the largest request it receives."""
        self.listen = listen
        self.stop_grace = stop_grace
        self._files = grpc_tls.server_files(tls) if tls is not None else None
        self._revoked = revocation_list(tls)  # tls.crl: before every method of every service
        self._reload_interval = tls.reload_interval if tls is not None else 0.0
        active = {name: guard for name, guard in (guards or {}).items() if guard is not None}
        every = self._revoked.guard if self._revoked is not None else None
        interceptors = [GuardInterceptor(active, every)] if active or every else None
        caps = dict(request_caps or {})
        self.max_request_bytes = max(caps.values(), default=DEFAULT_MAX_REQUEST_BYTES)
        self.server: CheckedServer = CheckedServer(lambda: grpc.aio.server(
            maximum_concurrent_rpcs=max_concurrent_rpcs, interceptors=interceptors, options=[
                ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_receive_message_length", self.max_request_bytes),
                ("grpc.so_reuseport", 0),
            ]), caps)
        self.health = health.aio.HealthServicer()
        self._names: list[str] = []
        self.port = 0
        self._watchers: list[asyncio.Task] = []
        self._rotation: asyncio.Task | None = None      # a new server being put in place
        self._retiring: set[asyncio.Task] = set()       # old servers stopping

    def add(self, register, servicer, service_name: str) -> None:
        register(servicer, self.server)
        self._names.append(service_name)

    def bind(self) -> str:
        """Bind the listening port now, before start (servicers may still be added until then),
        and return the bound address: for a servicer whose state names it (the fetcher's shard
        leases). start() binds if this was not called; calling it again is a no-op."""
        if not self.port:
            try:
                if self._files is None:
                    self.port = self.server.add_insecure_port(self.listen)
                else:
                    self.port = self.server.add_secure_port(self.listen, self._files.current)
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
        if self._files is not None:
            self._watchers.append(asyncio.create_task(self._files.watch(self._reload_interval, self._rotate)))
        if self._revoked is not None:
            self._watchers.append(asyncio.create_task(self._revoked.files.watch(self._reload_interval)))

    async def _rotate(self, credentials: grpc.ServerCredentials) -> None:
        """Serve `credentials` from now on (shielded: a stop waits for a rotation under way)."""
        self._rotation = asyncio.create_task(self._serve_anew(credentials))
        await asyncio.shield(self._rotation)

    async def _serve_anew(self, credentials: grpc.ServerCredentials) -> None:
        fresh = self.server.renewed()
        old = self.server.current
        retiring = asyncio.create_task(old.stop(self.stop_grace))    # closes its listener at once
        self._retiring.add(retiring)
        retiring.add_done_callback(self._retiring.discard)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + REBIND_TIMEOUT
        while True:
            await asyncio.sleep(0.01)          # for the old listener to close: a few milliseconds
            try:
                fresh.add_secure_port(self.address, credentials)
                break
            except RuntimeError:
                if loop.time() > deadline:
                    log.error("tls.cert, tls.key and tls.ca changed, but %s could not be listened on "
                              "again within %gs: this server no longer accepts connections", self.address,
                              REBIND_TIMEOUT)
                    raise
        await fresh.start()
        self.server.current = fresh
        log.info("gRPC server on %s serves the new certificate", self.address)

    @property
    def address(self) -> str:
        host = self.listen.rsplit(":", 1)[0]
        return f"{host}:{self.port}"

    async def stop(self) -> None:
        for watcher in self._watchers:
            watcher.cancel()
        await asyncio.gather(*self._watchers, return_exceptions=True)
        if self._rotation is not None:
            await asyncio.gather(self._rotation, return_exceptions=True)
        for name in ["", *self._names]:
            await self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.server.stop(self.stop_grace)
        await asyncio.gather(*self._retiring, return_exceptions=True)

    async def __aenter__(self) -> "GrpcServer":
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()



class CheckedServer(grpc.aio.Server):
    """A grpc.aio server whose every registered handler is `checked`: no service can forget to
    answer a malformed request INVALID_ARGUMENT, nor take a request over its cap (`caps`: service
    name or "/service/Method" -> bytes; the method's own first). `make()` makes the server; every
    registration is kept, so `renewed()` is another server with the same handlers (a rotation's,
    put in place by setting `current`). Everything else is the current server's own."""

    def __init__(self, make: Callable[[], grpc.aio.Server], caps: Mapping[str, int] | None = None):
        self._make = make
        self.current = make()
        self._caps = dict(caps or {})
        self._registrations: list[Callable[[grpc.aio.Server], None]] = []

    def cap_of(self, method: str) -> int | None:
        """The cap of a method by its full name ("/service/Method"), else None."""
        return self._caps.get(method, self._caps.get(method.lstrip("/").rpartition("/")[0]))

    def _register(self, register: Callable[[grpc.aio.Server], None]) -> None:
        self._registrations.append(register)
        register(self.current)

    def renewed(self) -> grpc.aio.Server:
        """A new server, neither bound nor started, with every handler registered so far."""
        server = self._make()
        for register in self._registrations:
            register(server)
        return server

    def add_generic_rpc_handlers(self, generic_rpc_handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        handlers = tuple(CheckedHandlers(h, self.cap_of) for h in generic_rpc_handlers)
        self._register(lambda server: server.add_generic_rpc_handlers(handlers))

    def add_registered_method_handlers(self, service_name: str, method_handlers) -> None:
        handlers = {name: checked(handler, self.cap_of(f"/{service_name}/{name}"))
                    for name, handler in method_handlers.items()}
        self._register(lambda server: server.add_registered_method_handlers(service_name, handlers))

    def add_insecure_port(self, address: str) -> int:
        return self.current.add_insecure_port(address)

    def add_secure_port(self, address: str, server_credentials) -> int:
        return self.current.add_secure_port(address, server_credentials)

    async def start(self) -> None:
        await self.current.start()

    async def stop(self, grace: float | None) -> None:
        await self.current.stop(grace)

    async def wait_for_termination(self, timeout: float | None = None) -> bool:
        return await self.current.wait_for_termination(timeout)

    def __getattr__(self, name: str):
        return getattr(self.current, name)
