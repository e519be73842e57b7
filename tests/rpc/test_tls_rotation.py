"""Certificates rotated on disk and client certificates revoked (tls.crl), for real: TLS
handshakes on loopback against files replaced while the server runs (issue 38). The servers
look at their files every RELOAD seconds (tls.reload_interval), so the tests wait for the change."""
from __future__ import annotations

import asyncio
import logging
import os
import pathlib
import shutil
import ssl

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from grpc_health.v1 import health_pb2, health_pb2_grpc

from spiderduck.core.config import TlsSettings
from spiderduck.core.errors import ConfigError
from spiderduck.rpc.server import GrpcServer
from spiderduck.rpc.tls import open_channel
from support.certs import TestCA
from support.service import wait_until

RELOAD = 0.1          # tls.reload_interval of the servers here


@pytest.fixture()
def pki(tmp_path):
    old, new = TestCA(tmp_path / "old"), TestCA(tmp_path / "new", name="New CA")
    return {"old": old, "new": new, "old-server": old.issue("server"), "new-server": new.issue("server"),
            "old-alice": old.issue("alice"), "old-bob": old.issue("bob"), "new-alice": new.issue("alice")}


def install(folder: pathlib.Path, cert: str, key: str, ca: str) -> TlsSettings:
    """The server's files at fixed paths in `folder`, each replaced whole (as a Secret rotates)."""
    folder.mkdir(exist_ok=True)
    for source, name in ((key, "server.key"), (cert, "server.crt"), (ca, "ca.crt")):
        shutil.copyfile(source, folder / f".{name}.new")
        os.replace(folder / f".{name}.new", folder / name)
    return TlsSettings(cert=str(folder / "server.crt"), key=str(folder / "server.key"), ca=str(folder / "ca.crt"),
                       reload_interval=RELOAD)


def client(ca: TestCA, issued=None) -> TlsSettings:
    return TlsSettings(cert=issued.cert if issued else "", key=issued.key if issued else "", ca=ca.ca)


async def check(address: str, tls: TlsSettings) -> grpc.StatusCode | str:
    """The health answer's status name, or the call's error code; a new channel each time."""
    async with open_channel(address, tls) as channel:
        try:
            answer = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        except grpc.aio.AioRpcError as exc:
            return exc.code()
    return health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)


async def test_a_new_connection_gets_the_rotated_certificate_and_ca(tmp_path, pki):
    old, new = pki["old"], pki["new"]
    tls = install(tmp_path / "live", pki["old-server"].cert, pki["old-server"].key, old.ca)
    async with GrpcServer("127.0.0.1:0", tls=tls) as server:
        assert await check(server.address, client(old, pki["old-alice"])) == "SERVING"
        assert await check(server.address, client(new, pki["new-alice"])) is grpc.StatusCode.UNAVAILABLE
        install(tmp_path / "live", pki["new-server"].cert, pki["new-server"].key, new.ca)

        async def new_ones_pass():
            return await check(server.address, client(new, pki["new-alice"])) == "SERVING"
        await wait_until(new_ones_pass, 10, "a client of the new CA to be served")
        # The old CA is trusted no more, and the server's certificate is the new CA's.
        assert await check(server.address, client(old, pki["old-alice"])) is grpc.StatusCode.UNAVAILABLE
        assert await check(server.address, TlsSettings(cert=pki["new-alice"].cert, key=pki["new-alice"].key,
                                                       ca=old.ca)) is grpc.StatusCode.UNAVAILABLE


async def served_certificate(address: str, pki) -> bytes:
    """The DER certificate a new TLS connection to `address` is shown (as alice of the old CA)."""
    context = ssl.create_default_context(cafile=pki["old"].ca)
    context.load_cert_chain(pki["old-alice"].cert, pki["old-alice"].key)
    context.set_alpn_protocols(["h2"])
    host, port = address.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port), ssl=context, server_hostname="localhost")
    try:
        return writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    finally:
        writer.close()


def der(path: str) -> bytes:
    return x509.load_pem_x509_certificate(pathlib.Path(path).read_bytes()).public_bytes(serialization.Encoding.DER)


async def test_a_new_connection_sees_the_new_certificate_and_an_open_channel_goes_on(tmp_path, pki):
    old = pki["old"]
    renewed = old.issue("server-renewed")                    # the same CA's, another key
    tls = install(tmp_path / "live", pki["old-server"].cert, pki["old-server"].key, old.ca)
    async with GrpcServer("127.0.0.1:0", tls=tls) as server, open_channel(server.address, client(old, pki["old-alice"])) as open_before:
        health_check = health_pb2_grpc.HealthStub(open_before).Check
        assert (await health_check(health_pb2.HealthCheckRequest(), timeout=5)).status == health_pb2.HealthCheckResponse.SERVING
        assert await served_certificate(server.address, pki) == der(pki["old-server"].cert)
        install(tmp_path / "live", renewed.cert, renewed.key, old.ca)

        async def renewed_served():
            return await served_certificate(server.address, pki) == der(renewed.cert)
        await wait_until(renewed_served, 10, "a new connection to be shown the renewed certificate")
        # A channel opened before goes on: told to go away by the old server, it dials the new one.
        answer = await health_check(health_pb2.HealthCheckRequest(), timeout=10, wait_for_ready=True)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING


async def test_files_that_do_not_load_keep_the_previous_certificate(tmp_path, pki, caplog):
    old = pki["old"]
    tls = install(tmp_path / "live", pki["old-server"].cert, pki["old-server"].key, old.ca)
    caplog.set_level(logging.ERROR, logger="spiderduck.rpc.tls")

    def errors() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]

    async def logged(count: int) -> bool:
        return len(errors()) >= count
    async with GrpcServer("127.0.0.1:0", tls=tls) as server:
        secret = pathlib.Path(pki["new-server"].key).read_text()
        pathlib.Path(tls.cert).write_text(secret)         # a key where the certificate goes
        await wait_until(lambda: logged(1), 10, "the broken rotation to be logged")
        assert await check(server.address, client(old, pki["old-alice"])) == "SERVING"
        assert await served_certificate(server.address, pki) == der(pki["old-server"].cert)
        [error] = errors()                                 # one line for one change, however long
        assert "tls.cert, tls.key and tls.ca changed but cannot be used" in error
        assert "holds no PEM certificate" in error and "PRIVATE KEY" not in caplog.text
        shutil.copyfile(pki["new-server"].cert, tls.cert)   # the new certificate, the old key: refused
        await wait_until(lambda: logged(2), 10, "the mismatched key to be logged")
        assert await check(server.address, client(old, pki["old-alice"])) == "SERVING"
        assert "is not the key of the certificate" in errors()[1] and secret not in caplog.text
        assert len(errors()) == 2


def revoking(tmp_path, pki, listed) -> TlsSettings:
    return TlsSettings(cert=pki["old-server"].cert, key=pki["old-server"].key, ca=pki["old"].ca,
                       crl=pki["old"].revoke(listed, tmp_path / "revoked.crl"), reload_interval=RELOAD)


async def test_a_listed_client_certificate_is_refused_and_the_list_is_read_again(tmp_path, pki, caplog):
    old = pki["old"]
    tls = revoking(tmp_path, pki, [pki["old-alice"]])
    async with GrpcServer("127.0.0.1:0", tls=tls) as server:
        assert await check(server.address, client(old, pki["old-alice"])) is grpc.StatusCode.UNAUTHENTICATED
        assert await check(server.address, client(old, pki["old-bob"])) == "SERVING"
        revoking(tmp_path, pki, [pki["old-bob"]])            # alice reinstated, bob revoked

        async def rotated():
            return (await check(server.address, client(old, pki["old-bob"])) is grpc.StatusCode.UNAUTHENTICATED
                    and await check(server.address, client(old, pki["old-alice"])) == "SERVING")
        await wait_until(rotated, 10, "the new revocation list to be enforced")
        # A list signed by an impostor of the CA (same name, another key) is not taken: bob stays refused.
        forged = TestCA(tmp_path / "impostor").revoke([], tmp_path / "forged.crl")
        caplog.set_level(logging.ERROR, logger="spiderduck.rpc.tls")
        os.replace(forged, tls.crl)
        async def refused():
            return "tls.crl and tls.ca changed but cannot be used" in caplog.text
        await wait_until(refused, 10, "the forged list to be refused")
        assert await check(server.address, client(old, pki["old-bob"])) is grpc.StatusCode.UNAUTHENTICATED


async def test_the_list_guards_every_service_beside_their_own_guards(tmp_path, pki):
    seen = []

    async def guard(method, context):
        seen.append(method)
    tls = revoking(tmp_path, pki, [pki["old-alice"]])
    async with GrpcServer("127.0.0.1:0", tls=tls, guards={"grpc.health.v1.Health": guard}) as server:
        assert await check(server.address, client(pki["old"], pki["old-alice"])) is grpc.StatusCode.UNAUTHENTICATED
        assert seen == []                                      # refused before the service's own guard
        assert await check(server.address, client(pki["old"], pki["old-bob"])) == "SERVING"
        assert seen == ["Check"]


def test_a_list_another_ca_signed_fails_at_start(tmp_path, pki):
    tls = TlsSettings(cert=pki["old-server"].cert, key=pki["old-server"].key, ca=pki["old"].ca,
                      crl=pki["new"].revoke([pki["new-alice"]], tmp_path / "foreign.crl"))
    with pytest.raises(ConfigError, match="tls.crl: .* not signed by a CA of tls.ca"):
        GrpcServer("127.0.0.1:0", tls=tls)
    impostor = TestCA(tmp_path / "impostor")                 # the old CA's name, another key
    forged = impostor.revoke([pki["old-alice"]], tmp_path / "forged.crl")
    with pytest.raises(ConfigError, match="not signed by a CA of tls.ca"):
        GrpcServer("127.0.0.1:0", tls=TlsSettings(**{**tls.__dict__, "crl": forged}))
    (tmp_path / "empty.crl").write_text(pathlib.Path(pki["old-server"].cert).read_text())
    with pytest.raises(ConfigError, match="holds no PEM certificate revocation list"):
        GrpcServer("127.0.0.1:0", tls=TlsSettings(**{**tls.__dict__, "crl": str(tmp_path / "empty.crl")}))
    with pytest.raises(ConfigError, match="tls.crl: cannot read"):
        GrpcServer("127.0.0.1:0", tls=TlsSettings(**{**tls.__dict__, "crl": str(tmp_path / "missing.crl")}))


def test_a_crl_needs_client_certificates():
    from spiderduck.core import config
    with pytest.raises(ConfigError, match="tls.crl needs"):
        config.load(env={}, overrides={"tls.crl": "r.crl"})
    with pytest.raises(ConfigError, match="tls.crl needs"):
        config.load(env={}, overrides={"tls.crl": "r.crl", "tls.cert": "a", "tls.key": "b", "tls.ca": "c",
                                       "tls.client_auth": "none"})
