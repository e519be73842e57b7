"""The service with TLS on, for real: its roles as a deployment runs them (a fetcher holding
leases, a scheduler reaching it over mutual TLS, the metadata-api behind bearer tokens), and
every caller refused the way an operator's review would try: plaintext, no certificate,
another CA, an identity not allowed, no token, a wrong token, too many ResolveUrl calls."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import grpc
import pytest

from spiderduck.client import AsyncClient, ServiceError
from spiderduck.core.config import TlsSettings
from spiderduck.rpc.tls import open_channel
from spiderduck.v1 import fetcher_pb2 as fpb, fetcher_pb2_grpc, metadata_pb2, metadata_pb2_grpc
from support.certs import TestCA
from spiderduck.cli.nats_server import free_port
from support.service import RunningService, service_settings, wait_port

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPIDERDUCK = os.path.join(ROOT, ".venv", "bin", "spiderduck")


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pki")
    ca, other = TestCA(folder / "ca"), TestCA(folder / "other", name="Another CA")
    tokens = folder / "tokens"
    tokens.write_text("# callers of MetadataService\nweb-frontend:tok-frontend-1\nbatch:tok-batch-2\n")
    tokens.chmod(0o600)
    token_file = folder / "frontend.token"
    token_file.write_text("tok-frontend-1\n")
    local = {"ips": ["127.0.0.1"]}
    return {"ca": ca.ca, "service": ca.issue("service", dns=["spiderduck-scheduler", "localhost"], **local),
            "ops": ca.issue("ops", dns=["ops"], **local),
            "stranger": other.issue("spiderduck-scheduler"), "tokens": str(tokens),
            "token_file": str(token_file)}


def tls_of(pki, who: str | None) -> TlsSettings:
    issued = pki[who] if who else None
    return TlsSettings(cert=issued.cert if issued else "", key=issued.key if issued else "", ca=pki["ca"])


@pytest.fixture
async def service(tmp_path, nats_server, pki):
    settings = service_settings(tmp_path, nats_server.url, **{
        "tls.cert": pki["service"].cert, "tls.key": pki["service"].key, "tls.ca": pki["ca"],
        "fetcher.allowed_callers": ["spiderduck-scheduler"], "fetcher.admin_callers": ["ops"],
        "fetcher.shards": 8, "fetcher.max_rate": 20.0, "scheduler.listen": f"127.0.0.1:{free_port()}",
        "metadata_api.tokens_file": pki["tokens"], "metadata_api.resolve_rate": 0.01})
    async with RunningService(settings) as running:
        yield running.settings


def client(settings, pki, who: str | None = "ops", **options) -> AsyncClient:
    issued = pki[who] if who else None
    return AsyncClient(settings.metadata_api.listen, tls_ca=pki["ca"],
                       tls_cert=issued.cert if issued else None, tls_key=issued.key if issued else None,
                       **options)


async def fetch_code(settings, tls: TlsSettings | None) -> grpc.StatusCode:
    async with open_channel(settings.fetcher.listen, tls) as channel:
        try:
            await fetcher_pb2_grpc.FetcherServiceStub(channel).Fetch(
                fpb.FetchRequest(url="http://10.0.0.1/", deadline_seconds=5), timeout=10)
        except grpc.aio.AioRpcError as exc:
            return exc.code()
    return grpc.StatusCode.OK


async def set_rate_code(settings, tls: TlsSettings | None, rate: float) -> grpc.StatusCode:
    async with open_channel(settings.fetcher.listen, tls) as channel:
        try:
            await fetcher_pb2_grpc.FetcherAdminStub(channel).SetDomainRate(
                fpb.SetDomainRateRequest(domain="example.org", rate=rate), timeout=10)
        except grpc.aio.AioRpcError as exc:
            return exc.code()
    return grpc.StatusCode.OK


async def test_a_url_is_resolved_over_mutual_tls_and_read_with_a_token(service, pki, localweb):
    url = localweb.page("tls.test", "/story", "<title>Over TLS</title>")
    async with client(service, pki, token="tok-frontend-1") as api:
        answer = await api.resolve(url, timeout=60)     # the scheduler's hops go to the fetcher over mTLS
        assert (answer.status, answer.record.title) == ("OK", "Over TLS")
        [lookup] = await api.get([url])
        assert lookup.found and lookup.record.title == "Over TLS"


async def test_the_fetcher_admits_only_its_allowed_callers(service, pki):
    assert await fetch_code(service, tls_of(pki, "service")) is grpc.StatusCode.OK
    assert await fetch_code(service, tls_of(pki, "ops")) is grpc.StatusCode.PERMISSION_DENIED
    assert await fetch_code(service, None) is grpc.StatusCode.UNAVAILABLE              # plaintext
    assert await fetch_code(service, tls_of(pki, None)) is grpc.StatusCode.UNAVAILABLE  # no certificate
    stranger = TlsSettings(cert=pki["stranger"].cert, key=pki["stranger"].key, ca=pki["ca"])
    assert await fetch_code(service, stranger) is grpc.StatusCode.UNAVAILABLE          # another CA


async def test_fetcher_admin_is_for_admin_callers_and_bounded_by_max_rate(service, pki):
    assert await set_rate_code(service, tls_of(pki, "service"), 5) is grpc.StatusCode.PERMISSION_DENIED
    assert await set_rate_code(service, tls_of(pki, "ops"), 1000) is grpc.StatusCode.INVALID_ARGUMENT
    assert await set_rate_code(service, tls_of(pki, "ops"), 5) is grpc.StatusCode.OK


async def test_metadata_service_needs_a_known_token(service, pki):
    async with client(service, pki) as api:                              # no token
        with pytest.raises(ServiceError) as refused:
            await api.get(["http://tls.test/"])
        assert refused.value.code == "UNAUTHENTICATED"
    async with client(service, pki, token="tok-frontend-2") as api:      # not in the file
        with pytest.raises(ServiceError) as refused:
            await api.get(["http://tls.test/"])
        assert refused.value.code == "UNAUTHENTICATED" and "tok-frontend-2" not in str(refused.value)
    async with client(service, pki, token="tok-batch-2") as api:
        [lookup] = await api.get(["http://tls.test/never"])
        assert not lookup.found


async def test_resolve_url_is_rate_limited_per_token(service, pki):
    async def resolve_code(token: str) -> grpc.StatusCode:
        async with open_channel(service.metadata_api.listen, tls_of(pki, "ops")) as channel:
            try:
                await metadata_pb2_grpc.MetadataServiceStub(channel).ResolveUrl(
                    metadata_pb2.ResolveUrlRequest(url="not a url"), timeout=10,
                    metadata=(("authorization", f"Bearer {token}"),))
            except grpc.aio.AioRpcError as exc:
                return exc.code()
        return grpc.StatusCode.OK
    # resolve_rate 0.01/s: one call, then none for 100 s; each token has its own allowance.
    assert await resolve_code("tok-batch-2") is grpc.StatusCode.INVALID_ARGUMENT
    assert await resolve_code("tok-batch-2") is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert await resolve_code("tok-frontend-1") is grpc.StatusCode.INVALID_ARGUMENT


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([SPIDERDUCK, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})


def cli_tls(settings, pki, who: str = "ops") -> list[str]:
    return ["--set", f"metadata_api.listen={settings.metadata_api.listen}",
            "--set", f"tls.cert={pki[who].cert}", "--set", f"tls.key={pki[who].key}",
            "--set", f"tls.ca={pki['ca']}"]


async def test_the_cli_gets_with_its_certificate_and_token(service, pki):
    url = "http://tls.test/never-seen"
    base = ["get", url, *cli_tls(service, pki)]
    by_file = await asyncio.to_thread(run_cli, *base, "--token-file", pki["token_file"])
    assert by_file.returncode == 1 and json.loads(by_file.stdout)["found"] is False, by_file.stderr
    by_env = await asyncio.to_thread(run_cli, *base, env={"SPIDERDUCK_TOKEN": "tok-batch-2"})
    assert by_env.returncode == 1 and json.loads(by_env.stdout)["found"] is False, by_env.stderr
    no_token = await asyncio.to_thread(run_cli, *base)
    assert no_token.returncode == 2 and "UNAUTHENTICATED" in no_token.stderr
    plaintext = await asyncio.to_thread(run_cli, "get", url, "--set",
                                        f"metadata_api.listen={service.metadata_api.listen}",
                                        env={"SPIDERDUCK_TOKEN": "tok-batch-2"})
    assert plaintext.returncode == 2 and "UNAVAILABLE" in plaintext.stderr
    assert "tok-batch-2" not in plaintext.stderr + no_token.stderr + by_env.stderr


async def test_spiderduck_health_probes_each_tls_server(service, pki):
    await wait_port(service.scheduler.listen)
    for address in (service.metadata_api.listen, service.fetcher.listen, service.scheduler.listen):
        ok = await asyncio.to_thread(run_cli, "health", "--address", address, *cli_tls(service, pki))
        assert ok.returncode == 0, ok.stderr
        plain = await asyncio.to_thread(run_cli, "health", "--address", address)
        assert plain.returncode == 1 and "UNAVAILABLE" in plain.stderr


async def test_the_cli_domains_command_reaches_fetcher_admin_over_tls(service, pki):
    listed = await asyncio.to_thread(
        run_cli, "domains", "set-rate", "example.org", "3", "--json",
        "--set", f"scheduler.fetchers=[{service.fetcher.listen}]", *cli_tls(service, pki)[2:])
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout.splitlines()[0])["rate"] == 3
    refused = await asyncio.to_thread(
        run_cli, "domains", "set-rate", "example.org", "3",
        "--set", f"scheduler.fetchers=[{service.fetcher.listen}]", *cli_tls(service, pki, "service")[2:])
    assert refused.returncode == 2 and "PERMISSION_DENIED" in refused.stderr
