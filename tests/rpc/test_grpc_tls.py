"""gRPC over TLS for real: certificates made here, handshakes on loopback, every refusal tried."""
from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from spiderduck.core.config import TlsSettings
from spiderduck.core.errors import ConfigError
from spiderduck.rpc.guard import callers_guard
from spiderduck.rpc.server import GrpcServer
from spiderduck.rpc.tls import caller, open_channel
from support.certs import TestCA

SERVICE = "spiderduck.test.Guarded"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pki")
    ca, other = TestCA(folder / "ca"), TestCA(folder / "other", name="Another CA")
    return {
        "ca": ca.ca,
        "server": ca.issue("server"),
        "alice": ca.issue("alice", dns=["alice.spiderduck.test", "second.test"]),
        "cn-only": ca.issue("cn-only", dns=[], ips=["10.1.2.3"]),
        "stranger": other.issue("alice", dns=["alice.spiderduck.test"]),   # same name, other CA
        "other-ca": other.ca,
    }


def server_tls(pki, client_auth: str = "") -> TlsSettings:
    return TlsSettings(cert=pki["server"].cert, key=pki["server"].key, ca=pki["ca"], client_auth=client_auth)


def client_tls(pki, who: str | None, ca: str | None = None) -> TlsSettings:
    issued = pki[who] if who else None
    return TlsSettings(cert=issued.cert if issued else "", key=issued.key if issued else "",
                       ca=ca or pki["ca"])


async def check(address: str, tls: TlsSettings | None, service: str = "") -> grpc.StatusCode | str:
    """The health answer's status name, or the call's error code."""
    async with open_channel(address, tls) as channel:
        try:
            answer = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=5)
        except grpc.aio.AioRpcError as exc:
            return exc.code()
    return health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)


async def test_mutual_tls_admits_only_clients_of_its_ca(pki):
    async with GrpcServer("127.0.0.1:0", tls=server_tls(pki)) as server:
        assert await check(server.address, client_tls(pki, "alice")) == "SERVING"
        assert await check(server.address, client_tls(pki, "cn-only")) == "SERVING"
        # Refused in the handshake: no call reaches the server.
        assert await check(server.address, None) is grpc.StatusCode.UNAVAILABLE             # plaintext
        assert await check(server.address, client_tls(pki, None)) is grpc.StatusCode.UNAVAILABLE  # no cert
        assert await check(server.address, client_tls(pki, "stranger")) is grpc.StatusCode.UNAVAILABLE


async def test_a_client_verifies_the_server_against_its_ca(pki):
    async with GrpcServer("127.0.0.1:0", tls=server_tls(pki, "none")) as server:
        assert await check(server.address, client_tls(pki, None)) == "SERVING"   # no client cert needed
        assert await check(server.address, client_tls(pki, None, ca=pki["other-ca"])) \
            is grpc.StatusCode.UNAVAILABLE
        # The server's certificate names 127.0.0.1 and localhost, not this name.
        named = TlsSettings(ca=pki["ca"], server_name="elsewhere.test")
        assert await check(server.address, named) is grpc.StatusCode.UNAVAILABLE
        assert await check(server.address, TlsSettings(ca=pki["ca"], server_name="localhost")) == "SERVING"


async def test_the_caller_is_its_first_dns_name_else_its_common_name(pki):
    seen = []

    async def guard(method, context):
        seen.append((method, caller(context)))
    async with GrpcServer("127.0.0.1:0", tls=server_tls(pki),
                          guards={"grpc.health.v1.Health": guard}) as server:
        for who in ("alice", "cn-only"):
            assert await check(server.address, client_tls(pki, who)) == "SERVING"
    assert seen == [("Check", "alice.spiderduck.test"), ("Check", "cn-only")]


async def test_a_callers_guard_refuses_other_identities(pki):
    guard = callers_guard(["cn-only"], "Health")
    async with GrpcServer("127.0.0.1:0", tls=server_tls(pki), guards={"grpc.health.v1.Health": guard}) as server:
        assert await check(server.address, client_tls(pki, "cn-only")) == "SERVING"
        assert await check(server.address, client_tls(pki, "alice")) is grpc.StatusCode.PERMISSION_DENIED
    assert callers_guard([], "anything") is None          # empty: any verified client


@pytest.mark.parametrize("change, named", [
    ({"cert": "/nonexistent/server.crt"}, "tls.cert: cannot read /nonexistent/server.crt"),
    ({"key": "CERT"}, "is not an unencrypted PEM private key"),
    ({"cert": "KEY"}, "holds no PEM certificate"),
    ({"key": "ALICE_KEY"}, "is not the key of the certificate"),
    ({"ca": "KEY"}, "tls.ca:"),
])
def test_bad_files_fail_at_start_naming_the_setting(pki, change, named):
    files = {"CERT": pki["server"].cert, "KEY": pki["server"].key, "ALICE_KEY": pki["alice"].key}
    values = {"cert": pki["server"].cert, "key": pki["server"].key, "ca": pki["ca"]}
    values.update({k: files.get(v, v) for k, v in change.items()})
    with pytest.raises(ConfigError, match=named) as raised:
        GrpcServer("127.0.0.1:0", tls=TlsSettings(**values))
    key_text = open(pki["server"].key).read()
    assert "PRIVATE KEY" not in str(raised.value) and key_text not in str(raised.value)


@pytest.mark.parametrize("values, named", [
    ({"cert": "a.crt"}, "tls.cert and tls.key"),
    ({"cert": "a.crt", "key": "a.key"}, "needs tls.ca"),             # require is the default
    ({"cert": "a.crt", "key": "a.key", "ca": "c", "client_auth": "optional"}, "tls.client_auth"),
])
def test_tls_settings_are_checked_at_load(values, named):
    from spiderduck.core import config
    with pytest.raises(ConfigError, match=named):
        config.load(env={}, overrides={f"tls.{k}": v for k, v in values.items()})


def test_callers_need_verified_client_certificates():
    from spiderduck.core import config
    with pytest.raises(ConfigError, match="fetcher.allowed_callers"):
        config.load(env={}, overrides={"fetcher.allowed_callers": ["scheduler"]})
    with pytest.raises(ConfigError, match="fetcher.admin_callers"):
        config.load(env={}, overrides={"fetcher.admin_callers": ["ops"], "tls.cert": "a", "tls.key": "b",
                                       "tls.ca": "c", "tls.client_auth": "none"})
