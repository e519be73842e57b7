"""Who may Forget, ListForgotten and Unforget, over real gRPC to a real MetadataService (issue 39):
an admin token (metadata_api.admin_tokens_file), a client certificate named in
metadata_api.admin_callers, or with neither, a caller on loopback only. Anyone else is
PERMISSION_DENIED; no token where tokens are asked is UNAUTHENTICATED. An admin token passes
wherever an ordinary one does. The service here has no NATS, so an admin's call is
FAILED_PRECONDITION (no denylist): the admin check came first and let it through."""
from __future__ import annotations

import socket

import grpc
import pytest

from spiderduck.cli.nats_server import free_port
from spiderduck.core.config import MetadataApiSettings, TlsSettings
from spiderduck.metadata_api import server
from spiderduck.metadata_api.admins import Admins, admin_token_file, on_loopback
from spiderduck.metadata_api.auth import metadata_guard
from spiderduck.metadata_api.forget import ForgetService
from spiderduck.rpc.server import GrpcServer
from spiderduck.rpc.tls import open_channel
from spiderduck.stores.open import open_metadata_store
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc
from support.certs import TestCA

ORDINARY, ADMIN = "tok-ordinary-s3cret", "tok-admin-s3cret"
ADMITTED = grpc.StatusCode.FAILED_PRECONDITION      # past the admin check, then no NATS here


def _non_loopback_address() -> str | None:
    """An address of this host that is not loopback (the route's source), else None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))            # no packet is sent
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


async def _serve(tmp_path, api: MetadataApiSettings, tls: TlsSettings = TlsSettings(), host: str = "127.0.0.1"):
    store = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    admin_tokens = admin_token_file(api)
    listen = f"{host}:{free_port()}"
    grpc_server = GrpcServer(listen, tls=tls, guards={
        server.SERVICE_NAME: metadata_guard(api, tls, admin_tokens=admin_tokens)})
    server.register(grpc_server, store, api, forgetting=ForgetService(None, Admins(api, admin_tokens), api))
    return store, grpc_server


async def code_of(call, request, token: str | None = None) -> grpc.StatusCode:
    try:
        await call(request, metadata=[("authorization", f"Bearer {token}")] if token else None, timeout=10)
    except grpc.aio.AioRpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK


FORGET = metadata_pb2.ForgetRequest(urls=["https://a.test/x"], reason="ticket 1")
GET = metadata_pb2.GetUrlMetadataRequest(urls=["https://a.test/x"])


@pytest.fixture
def token_files(tmp_path):
    tokens, admins = tmp_path / "tokens", tmp_path / "admin-tokens"
    tokens.write_text(f"frontend:{ORDINARY}\n")
    admins.write_text(f"oncall:{ADMIN}\n")
    return str(tokens), str(admins)


async def test_tokens_an_admin_token_passes_everywhere_an_ordinary_one_only_for_ordinary_calls(tmp_path, token_files):
    tokens, admins = token_files
    api = MetadataApiSettings(tokens_file=tokens, admin_tokens_file=admins, resolve_rate=0)
    store, grpc_server = await _serve(tmp_path, api)
    async with grpc_server, grpc.aio.insecure_channel(grpc_server.listen) as channel:
        stub = metadata_pb2_grpc.MetadataServiceStub(channel)
        assert await code_of(stub.GetUrlMetadata, GET, ORDINARY) is grpc.StatusCode.OK
        assert await code_of(stub.GetUrlMetadata, GET, ADMIN) is grpc.StatusCode.OK
        assert await code_of(stub.GetUrlMetadata, GET, "tok-unknown") is grpc.StatusCode.UNAUTHENTICATED
        for call, request in ((stub.Forget, FORGET), (stub.ListForgotten, metadata_pb2.ListForgottenRequest()),
                              (stub.Unforget, metadata_pb2.UnforgetRequest(urls=["https://a.test/x"]))):
            assert await code_of(call, request) is grpc.StatusCode.UNAUTHENTICATED
            assert await code_of(call, request, ORDINARY) is grpc.StatusCode.PERMISSION_DENIED
            assert await code_of(call, request, ADMIN) is ADMITTED
    await store.close()


async def test_admin_tokens_alone_ask_no_token_of_ordinary_calls_and_end_the_loopback_rule(tmp_path, token_files):
    _, admins = token_files
    api = MetadataApiSettings(admin_tokens_file=admins, resolve_rate=0)
    store, grpc_server = await _serve(tmp_path, api)
    async with grpc_server, grpc.aio.insecure_channel(grpc_server.listen) as channel:
        stub = metadata_pb2_grpc.MetadataServiceStub(channel)
        assert await code_of(stub.GetUrlMetadata, GET) is grpc.StatusCode.OK
        assert await code_of(stub.Forget, FORGET) is grpc.StatusCode.PERMISSION_DENIED   # loopback, no token
        assert await code_of(stub.Forget, FORGET, ORDINARY) is grpc.StatusCode.PERMISSION_DENIED
        assert await code_of(stub.Forget, FORGET, ADMIN) is ADMITTED
    await store.close()


async def test_a_client_certificate_named_in_admin_callers_is_an_admin_another_is_not(tmp_path):
    ca = TestCA(tmp_path / "pki")
    service, ops, web = ca.issue("service"), ca.issue("ops", dns=["ops"]), ca.issue("web", dns=["web"])
    tls = TlsSettings(cert=service.cert, key=service.key, ca=ca.ca, client_auth="require")
    api = MetadataApiSettings(admin_callers=["ops"], resolve_rate=0)
    store, grpc_server = await _serve(tmp_path, api, tls)
    async with grpc_server:
        for issued, expected in ((ops, ADMITTED), (web, grpc.StatusCode.PERMISSION_DENIED)):
            client = TlsSettings(cert=issued.cert, key=issued.key, ca=ca.ca)
            async with open_channel(grpc_server.listen, client) as channel:
                stub = metadata_pb2_grpc.MetadataServiceStub(channel)
                assert await code_of(stub.Forget, FORGET) is expected, issued
                assert await code_of(stub.GetUrlMetadata, GET) is grpc.StatusCode.OK
    await store.close()


async def test_with_no_admin_set_only_a_caller_on_loopback_is_an_admin(tmp_path):
    address = _non_loopback_address()
    api = MetadataApiSettings(resolve_rate=0)
    store, grpc_server = await _serve(tmp_path, api, host="0.0.0.0")
    port = grpc_server.listen.rpartition(":")[2]
    async with grpc_server:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            assert await code_of(metadata_pb2_grpc.MetadataServiceStub(channel).Forget, FORGET) is ADMITTED
        if address is None:
            pytest.skip("no address but loopback here: the peers are tried in the test below")
        async with grpc.aio.insecure_channel(f"{address}:{port}") as channel:
            stub = metadata_pb2_grpc.MetadataServiceStub(channel)
            assert await code_of(stub.Forget, FORGET) is grpc.StatusCode.PERMISSION_DENIED
            assert await code_of(stub.GetUrlMetadata, GET) is grpc.StatusCode.OK
    await store.close()


@pytest.mark.parametrize("peer, local", [
    ("ipv4:127.0.0.1:5123", True), ("ipv4:127.8.9.10:1", True), ("ipv6:[::1]:5123", True),
    ("ipv6:[::ffff:127.0.0.1]:5123", True), ("unix:/run/spiderduck.sock", True), ("unix-abstract:x", True),
    ("ipv4:192.0.2.2:5123", False), ("ipv6:[fd00::2]:5123", False), ("ipv6:[::ffff:10.0.0.1]:1", False),
    ("ipv4:0.0.0.0:1", False), ("", False), ("ipv4:localhost:1", False),
])
def test_loopback_peers(peer, local):
    assert on_loopback(peer) is local
