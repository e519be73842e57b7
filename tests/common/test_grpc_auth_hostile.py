"""The gRPC guards against a hostile caller, over real sockets: streaming methods under a guard,
a certificate naming nobody, and which client certificates the handshake admits."""
from __future__ import annotations

import datetime
import ipaddress
import pathlib

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc

from common.config import TlsSettings
from common.grpc_guard import callers_guard
from common.grpc_server import GrpcServer
from common.grpc_tls import caller, open_channel
from support.certs import Issued, TestCA

HEALTH = "grpc.health.v1.Health"


def signed(folder: pathlib.Path, slug: str, issuer_key, issuer: x509.Name, *, cn: str | None = None,
           ips: tuple[str, ...] = (), eku=(ExtendedKeyUsageOID.CLIENT_AUTH,), is_ca: bool = False,
           chain: tuple[x509.Certificate, ...] = ()) -> tuple[Issued, object, x509.Certificate]:
    """A certificate signed by `issuer_key` (support.certs.TestCA makes only leaves of a root,
    with both usages): (its files, its key, it). `chain` is written after it in the .crt."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().issuer_name(issuer).public_key(key.public_key())
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)] if cn else []))
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=is_ca, path_length=None), critical=True))
    if eku:
        builder = builder.add_extension(x509.ExtendedKeyUsage(list(eku)), critical=False)
    if ips:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(i)) for i in ips]), critical=not cn)
    cert = builder.sign(issuer_key, hashes.SHA256())
    cert_path, key_path = folder / f"{slug}.crt", folder / f"{slug}.key"
    cert_path.write_bytes(b"".join(c.public_bytes(serialization.Encoding.PEM) for c in (cert, *chain)))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return Issued(cert=str(cert_path), key=str(key_path)), key, cert


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pki")
    ca, other = TestCA(folder / "ca"), TestCA(folder / "other", name="Other CA")
    root = (ca._key, ca._cert.subject)          # TestCA's own key, to sign what it does not make
    _, middle_key, middle = signed(folder, "intermediate", *root, cn="Intermediate CA", eku=(), is_ca=True)
    bundle = folder / "bundle.crt"
    bundle.write_bytes(pathlib.Path(ca.ca).read_bytes() + pathlib.Path(other.ca).read_bytes())
    return {
        "ca": ca.ca, "bundle": str(bundle), "server": ca.issue("server"),
        "nameless": signed(folder, "nameless", *root, ips=("10.9.8.7",))[0],
        "expired": ca.issue("expired", not_before_days=-3, days=1),
        "not-yet-valid": ca.issue("not-yet-valid", not_before_days=1),
        "server-usage-only": signed(folder, "server-only", *root, cn="server-only",
                                    eku=(ExtendedKeyUsageOID.SERVER_AUTH,))[0],
        "via-intermediate": signed(folder, "via", middle_key, middle.subject, cn="via", chain=(middle,))[0],
        "intermediate-not-sent": signed(folder, "via-alone", middle_key, middle.subject, cn="via-alone")[0],
        "other-ca": other.issue("other-ca", dns=["other-ca"]),
    }


async def check(channel, metadata=(), method: str = "Check"):
    """Health Check (or the first answer of Watch): the status name, or the error's (code, details)."""
    stub = health_pb2_grpc.HealthStub(channel)
    try:
        if method == "Check":
            answer = await stub.Check(health_pb2.HealthCheckRequest(), metadata=metadata, timeout=5)
        else:
            call = stub.Watch(health_pb2.HealthCheckRequest(), metadata=metadata, timeout=5)
            answer = await call.read()
            call.cancel()
    except grpc.aio.AioRpcError as exc:
        return exc.code(), exc.details()
    return health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)


# -- guards on streaming methods --------------------------------------------------------------

async def test_a_guard_runs_before_a_streaming_method_that_writes_with_context_write():
    """grpc_health's Watch answers with `await context.write(...)` (a coroutine, not an async
    generator): a guard must let it through, and refuse it, like any other method."""
    seen = []

    async def allow(method, context):
        seen.append(method)

    async def refuse(method, context):
        await context.abort(grpc.StatusCode.PERMISSION_DENIED, "not you")
    for guard, expected in ((allow, "SERVING"), (refuse, (grpc.StatusCode.PERMISSION_DENIED, "not you"))):
        async with GrpcServer("127.0.0.1:0", guards={HEALTH: guard}) as server, \
                grpc.aio.insecure_channel(server.address) as channel:
            assert await check(channel, method="Watch") == expected
            assert await check(channel) == expected
    assert seen == ["Watch", "Check"]


async def test_a_guard_keeps_async_generator_and_request_streaming_methods_working():
    identity = {"request_deserializer": bytes, "response_serializer": bytes}

    async def numbers(request, context):                 # unary-stream, an async generator
        for i in range(3):
            yield b"%d" % i

    async def echo_all(requests, context):               # stream-stream, context.write
        async for request in requests:
            await context.write(request.upper())

    async def joined(requests, context):                 # stream-unary
        return b"+".join([r async for r in requests])
    handlers = {"Numbers": grpc.unary_stream_rpc_method_handler(numbers, **identity),
                "Echo": grpc.stream_stream_rpc_method_handler(echo_all, **identity),
                "Join": grpc.stream_unary_rpc_method_handler(joined, **identity)}
    calls = []

    async def guard(method, context):
        calls.append(method)
    async with GrpcServer("127.0.0.1:0", guards={"t.Streams": guard}) as server:
        server.server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("t.Streams", handlers),))
        async with grpc.aio.insecure_channel(server.address) as channel:
            raw = {"request_serializer": bytes, "response_deserializer": bytes}
            assert [r async for r in channel.unary_stream("/t.Streams/Numbers", **raw)(b"")] == [b"0", b"1", b"2"]
            assert [r async for r in channel.stream_stream("/t.Streams/Echo", **raw)(iter([b"a", b"b"]))] \
                == [b"A", b"B"]
            assert await channel.stream_unary("/t.Streams/Join", **raw)(iter([b"x", b"y"])) == b"x+y"
    assert calls == ["Numbers", "Echo", "Join"]


# -- who a certificate names ------------------------------------------------------------------

async def test_a_certificate_naming_nobody_has_no_identity(pki):
    """A certificate of the right CA with neither a DNS name nor a common name is nobody: not
    the caller "" (which an `allowed_callers: [""]` left in a YAML list would admit)."""
    seen = []

    async def record(method, context):
        seen.append(caller(context))
    server_tls = TlsSettings(cert=pki["server"].cert, key=pki["server"].key, ca=pki["ca"])
    client_tls = TlsSettings(cert=pki["nameless"].cert, key=pki["nameless"].key, ca=pki["ca"])
    for guard in (record, callers_guard([""], "Health")):
        async with GrpcServer("127.0.0.1:0", tls=server_tls, guards={HEALTH: guard}) as server, \
                open_channel(server.address, client_tls) as channel:
            answer = await check(channel)
            if guard is record:
                assert answer == "SERVING" and seen == [None]
            else:
                assert answer == (grpc.StatusCode.PERMISSION_DENIED,
                                  "a caller without a client certificate naming it may not call Health")


@pytest.mark.parametrize("who, ca, identity", [
    ("expired", "ca", None), ("not-yet-valid", "ca", None),
    ("server-usage-only", "ca", None),                  # extendedKeyUsage serverAuth only: not a client's
    ("intermediate-not-sent", "ca", None),              # no chain to the root
    ("via-intermediate", "ca", "via"),                  # the chain sent with it
    ("other-ca", "ca", None), ("other-ca", "bundle", "other-ca"),   # a bundle trusts each of its CAs
])
async def test_which_client_certificates_the_handshake_admits(pki, who, ca, identity):
    """Checked by the TLS library, not by us: pinned here so a change of it (or of how we hand it
    the CA) shows. A refused certificate never reaches a guard."""
    seen = []

    async def record(method, context):
        seen.append(caller(context))
    server_tls = TlsSettings(cert=pki["server"].cert, key=pki["server"].key, ca=pki[ca])
    client_tls = TlsSettings(cert=pki[who].cert, key=pki[who].key, ca=pki["ca"])
    async with GrpcServer("127.0.0.1:0", tls=server_tls, guards={HEALTH: record}) as server, \
            open_channel(server.address, client_tls) as channel:
        answer = await check(channel)
    if identity is None:
        assert answer[0] is grpc.StatusCode.UNAVAILABLE and seen == []
    else:
        assert answer == "SERVING" and seen == [identity]
