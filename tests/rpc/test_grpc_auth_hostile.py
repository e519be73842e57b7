"""The gRPC guards against a hostile caller and a hostile tokens file, over real sockets: streaming
methods under a guard, several or odd authorization headers, a certificate naming nobody, a
tokens file that is a FIFO, huge, starts with a BOM, or is rotated keeping its size and mtime."""
from __future__ import annotations

import datetime
import ipaddress
import os
import pathlib
import threading

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc

from spiderduck.core.config import MetadataApiSettings, TlsSettings
from spiderduck.core.errors import ConfigError
from spiderduck.metadata_api.auth import RELOAD_EVERY, TokenFile, metadata_guard
from spiderduck.rpc.guard import callers_guard
from spiderduck.rpc.server import GrpcServer
from spiderduck.rpc.tls import caller, open_channel
from support.certs import Issued, TestCA

HEALTH = "grpc.health.v1.Health"
TOKEN = "s3cret-frontend-token"


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


# -- the bearer token on the wire -------------------------------------------------------------

@pytest.fixture
async def token_server(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text(f"frontend:{TOKEN}\nspaced:tok with spaces\n")
    guard = metadata_guard(MetadataApiSettings(tokens_file=str(tokens), resolve_rate=0), TlsSettings())
    async with GrpcServer("127.0.0.1:0", guards={HEALTH: guard}) as server, \
            grpc.aio.insecure_channel(server.address) as channel:
        yield channel


@pytest.mark.parametrize("metadata", [
    [("authorization", f"Bearer {TOKEN}"), ("authorization", "Bearer wrong")],
    [("authorization", "Bearer wrong"), ("authorization", f"Bearer {TOKEN}")],
    [("authorization", f"Bearer {TOKEN}"), ("authorization", f"Bearer {TOKEN}")],
], ids=["good-then-bad", "bad-then-good", "twice"])
async def test_several_authorization_headers_are_refused(token_server, metadata):
    """Which one a proxy in front checked is anyone's guess: a call carrying several is refused."""
    answer = await check(token_server, metadata)
    assert answer != "SERVING", "a call with several authorization headers was let through"
    code, details = answer
    assert code is grpc.StatusCode.UNAUTHENTICATED and "several" in details and TOKEN not in details


@pytest.mark.parametrize("metadata, admitted", [
    ([("authorization", f"Bearer {TOKEN}")], True),
    ([("authorization", f"bEaReR   {TOKEN}  ")], True),             # the scheme is case-blind
    ([("authorization", "Bearer tok with spaces")], True),
    ([("authorization-bin", f"Bearer {TOKEN}".encode())], False),  # not the header asked for
    ([("authorization", TOKEN)], False),
    ([("authorization", f"Basic {TOKEN}")], False),
    ([("authorization", "Bearer ")], False),
    ([("authorization", "Bearer " + "x" * 7000)], False),
], ids=["plain", "odd-case-and-spaces", "spaces-inside", "bin", "no-scheme", "basic", "empty", "long"])
async def test_odd_authorization_headers(token_server, metadata, admitted):
    answer = await check(token_server, metadata)
    if admitted:
        assert answer == "SERVING"
    else:
        assert answer[0] is grpc.StatusCode.UNAUTHENTICATED and TOKEN not in answer[1]


def test_nothing_to_check_installs_no_guard(tmp_path):
    """Without tokens and without a rate to hold callers to, MetadataService has no guard (so the
    server no interceptor), with or without client certificates."""
    mutual = TlsSettings(cert="c.crt", key="c.key", ca="ca.crt")
    assert metadata_guard(MetadataApiSettings(), TlsSettings()) is None
    assert metadata_guard(MetadataApiSettings(resolve_rate=0), mutual) is None
    assert metadata_guard(MetadataApiSettings(resolve_rate=5), mutual) is not None


# -- the tokens file --------------------------------------------------------------------------

class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def in_thread(fn, timeout: float = 10.0, unblock: pathlib.Path | None = None):
    """fn() run in a thread: (returned or raised, whether it was still blocked after `timeout`).
    A FIFO at `unblock` is opened for writing once, so a reader stuck on it ends and the test
    fails rather than hangs."""
    outcome: list = []

    def run():
        try:
            outcome.append(fn())
        except Exception as exc:  # noqa: BLE001 -- handed to the test
            outcome.append(exc)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    blocked = thread.is_alive()
    if blocked and unblock is not None:
        os.close(os.open(unblock, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(timeout)
    return (outcome[0] if outcome else None), blocked


def test_a_fifo_as_tokens_file_fails_at_start_without_blocking(tmp_path):
    fifo = tmp_path / "tokens"
    os.mkfifo(fifo)
    outcome, blocked = in_thread(lambda: TokenFile(str(fifo)), unblock=fifo)
    assert not blocked, "reading the tokens file waited for a writer to the FIFO"
    assert isinstance(outcome, ConfigError) and "not a regular file" in str(outcome)


def test_a_tokens_file_turned_fifo_refuses_its_tokens_without_blocking(tmp_path, caplog):
    path = tmp_path / "tokens"
    path.write_text(f"frontend:{TOKEN}\n")
    clock = Clock()
    tokens = TokenFile(str(path), clock=clock)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    os.replace(fifo, path)
    clock.now += RELOAD_EVERY
    outcome, blocked = in_thread(lambda: tokens.name_of(TOKEN), unblock=path)
    assert not blocked, "the re-read waited for a writer to the FIFO (the event loop would hang)"
    assert outcome is None                     # fail closed: revocation by a file no one can read
    assert "not a regular file" in caplog.text and TOKEN not in caplog.text


@pytest.mark.parametrize("special", ["/dev/null", "DIRECTORY"])
def test_a_device_or_a_directory_is_refused_at_once(tmp_path, special):
    path = tmp_path if special == "DIRECTORY" else special
    outcome, blocked = in_thread(lambda: TokenFile(str(path)))
    assert not blocked and isinstance(outcome, ConfigError)
    assert str(outcome).startswith("metadata_api.tokens_file:")


def test_a_huge_tokens_file_is_refused_unread(tmp_path):
    path = tmp_path / "tokens"
    with open(path, "wb") as fh:
        fh.write(f"frontend:{TOKEN}\n".encode())
        fh.truncate(64 * 1024 * 1024)          # sparse: costs nothing to make
    with pytest.raises(ConfigError, match="larger than") as refused:
        TokenFile(str(path))
    assert TOKEN not in str(refused.value)


def test_a_bom_and_crlf_lines_are_read_as_names(tmp_path):
    path = tmp_path / "tokens"
    path.write_bytes(f"\ufefffrontend:{TOKEN}\r\nbatch:tok-b\r\n".encode("utf-8"))
    tokens = TokenFile(str(path))
    assert tokens.name_of(TOKEN) == "frontend" and tokens.name_of("tok-b") == "batch"


def test_a_rotation_keeping_size_and_mtime_is_still_seen(tmp_path):
    """A new file moved in place (rsync -t, tar, cp -p then mv) with the old one's size and
    mtime: the revoked token must stop working all the same."""
    path = tmp_path / "tokens"
    path.write_text("frontend:old-token-1\n")
    before = os.stat(path)
    clock = Clock()
    tokens = TokenFile(str(path), clock=clock)
    assert tokens.name_of("old-token-1") == "frontend"
    new = tmp_path / "tokens.new"
    new.write_text("frontend:new-token-2\n")
    os.utime(new, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(new, path)
    assert os.stat(path).st_size == before.st_size and os.stat(path).st_mtime_ns == before.st_mtime_ns
    clock.now += RELOAD_EVERY
    assert tokens.name_of("old-token-1") is None
    assert tokens.name_of("new-token-2") == "frontend"
