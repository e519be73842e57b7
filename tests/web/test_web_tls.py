"""The web UI's trust on the wire: HTTPS (web.tls_cert, web.tls_key), DNS rebinding refused
with 421 (a Host that is not ours), and the admin client reaching FetcherAdmin over mutual TLS."""
from __future__ import annotations

import logging
import os
import shutil
import ssl

import aiohttp
import pytest

from spiderduck.cli.nats_server import free_port
from spiderduck.cli.roles import run_metadata_api_and_web
from spiderduck.core.errors import ConfigError
from support.certs import TestCA
from support.service import RunningService, service_settings, wait_port, wait_until
from spiderduck.web.security import host_name

TOKEN = "w3b-admin"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    ca = TestCA(tmp_path_factory.mktemp("pki"))
    local = {"dns": ["localhost"], "ips": ["127.0.0.1"]}
    return {"ca": ca.ca, "web": ca.issue("web", **local),
            "service": ca.issue("service", dns=["spiderduck", "localhost"], ips=["127.0.0.1"]),
            "ops": ca.issue("ops", dns=["ops"], ips=["127.0.0.1"])}


async def status_for(url: str, host: str | None = None, **options) -> int:
    headers = {"Host": host} if host is not None else {}
    async with aiohttp.ClientSession() as http, http.get(url, headers=headers, **options) as response:
        return response.status


async def test_the_web_ui_serves_https_only_with_its_certificate(tmp_path, pki):
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, "", **{"web.listen": listen, "web.tls_cert": pki["web"].cert,
                                                 "web.tls_key": pki["web"].key})
    verified = ssl.create_default_context(cafile=pki["ca"])
    async with RunningService(settings, roles=(run_metadata_api_and_web,)):
        await wait_port(listen)
        assert await status_for(f"https://{listen}/healthz", ssl=verified) == 200
        with pytest.raises(aiohttp.ClientError):          # plain HTTP to the TLS port
            await status_for(f"http://{listen}/healthz")
        with pytest.raises(aiohttp.ClientConnectorCertificateError):   # not our CA: refused by the client
            await status_for(f"https://{listen}/healthz", ssl=ssl.create_default_context())


async def test_the_web_certificate_rotates_on_disk_without_a_restart(tmp_path, pki, caplog):
    listen = f"127.0.0.1:{free_port()}"
    live, new_ca = tmp_path / "live", TestCA(tmp_path / "new", name="New web CA")
    rotated = new_ca.issue("web")
    live.mkdir()

    def install(issued) -> None:
        for source, name in ((issued.key, "web.key"), (issued.cert, "web.crt")):
            shutil.copyfile(source, live / f".{name}.new")
            os.replace(live / f".{name}.new", live / name)
    install(pki["web"])
    settings = service_settings(tmp_path, "", **{"web.listen": listen, "web.tls_cert": str(live / "web.crt"),
                                                 "web.tls_key": str(live / "web.key"), "tls.reload_interval": 0.1})
    trusts_old = ssl.create_default_context(cafile=pki["ca"])
    trusts_new = ssl.create_default_context(cafile=new_ca.ca)
    async with RunningService(settings, roles=(run_metadata_api_and_web,)):
        await wait_port(listen)
        assert await status_for(f"https://{listen}/healthz", ssl=trusts_old) == 200
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await status_for(f"https://{listen}/healthz", ssl=trusts_new)
        install(rotated)

        async def served_the_new_one():
            try:
                async with aiohttp.ClientSession() as http, \
                        http.get(f"https://{listen}/healthz", ssl=trusts_new) as response:
                    return response.status == 200
            except aiohttp.ClientConnectorCertificateError:
                return False
        await wait_until(served_the_new_one, 10, "the web UI to serve the rotated certificate")
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await status_for(f"https://{listen}/healthz", ssl=trusts_old)
        caplog.set_level(logging.ERROR, logger="spiderduck.rpc.tls")
        (live / "web.crt").write_text("not a certificate")      # a broken rotation keeps the last pair

        async def logged():
            return "web.tls_cert and web.tls_key changed but cannot be used" in caplog.text
        await wait_until(logged, 10, "the broken rotation to be logged")
        assert await status_for(f"https://{listen}/healthz", ssl=trusts_new) == 200
        assert "PRIVATE KEY" not in caplog.text
        assert len([r for r in caplog.records if r.levelno >= logging.ERROR]) == 1


async def test_a_bad_web_certificate_fails_the_role_naming_the_keys(tmp_path, pki):
    settings = service_settings(tmp_path, "", **{"web.listen": f"127.0.0.1:{free_port()}",
                                                 "web.tls_cert": pki["web"].cert, "web.tls_key": pki["ops"].key})
    with pytest.raises(ConfigError, match="web.tls_cert / web.tls_key"):
        async with RunningService(settings, roles=(run_metadata_api_and_web,)):
            pass


async def test_dns_rebinding_gets_421_on_a_loopback_listen(tmp_path):
    port = free_port()
    listen = f"127.0.0.1:{port}"
    settings = service_settings(tmp_path, "", **{"web.listen": listen,
                                                 "web.allowed_hosts": ["spiderduck.internal"]})
    async with RunningService(settings, roles=(run_metadata_api_and_web,)):
        await wait_port(listen)
        base = f"http://{listen}/healthz"
        assert await status_for(base) == 200                                     # 127.0.0.1:port
        assert await status_for(base, host=f"localhost:{port}") == 200
        assert await status_for(base, host="spiderduck.internal") == 200
        assert await status_for(base, host="SpiderDuck.Internal.:8080") == 200
        assert await status_for(base, host=f"evil.example:{port}") == 421           # rebinding
        assert await status_for(f"http://{listen}/url?u=http://a.test/", host="evil.example") == 421
        assert await status_for(base, host="") == 421


async def test_a_wildcard_listen_checks_hosts_only_once_allowed_hosts_is_set(tmp_path):
    port = free_port()
    open_settings = service_settings(tmp_path, "", **{"web.listen": f"0.0.0.0:{port}"})
    async with RunningService(open_settings, roles=(run_metadata_api_and_web,)):
        await wait_port(f"127.0.0.1:{port}")
        assert await status_for(f"http://127.0.0.1:{port}/healthz", host="anything.example") == 200
    port = free_port()
    checked = service_settings(tmp_path, "", **{"web.listen": f"0.0.0.0:{port}",
                                                "web.allowed_hosts": ["ui.example"]})
    async with RunningService(checked, roles=(run_metadata_api_and_web,)):
        await wait_port(f"127.0.0.1:{port}")
        assert await status_for(f"http://127.0.0.1:{port}/healthz", host="ui.example") == 200
        assert await status_for(f"http://127.0.0.1:{port}/healthz", host="anything.example") == 421


@pytest.mark.parametrize("header, name", [("127.0.0.1:8080", "127.0.0.1"), ("[::1]:8080", "::1"),
                                          ("Example.COM", "example.com"), ("::1", "::1"), ("", "")])
def test_host_names_are_read_without_their_port(header, name):
    assert host_name(header) == name


async def test_the_domain_table_reaches_the_fetchers_over_mutual_tls(tmp_path, nats_server, pki):
    """The web UI's admin client dials each fetcher with this process's certificate; a fetcher
    whose admin_callers leave it out answers PERMISSION_DENIED, and the page says so."""
    from spiderduck.fetcher.main import run_fetcher
    listen = f"127.0.0.1:{free_port()}"
    tls = {"tls.cert": pki["service"].cert, "tls.key": pki["service"].key, "tls.ca": pki["ca"]}
    settings = service_settings(tmp_path, nats_server.url, **{"web.listen": listen, "web.admin_token": TOKEN,
                                                              "fetcher.shards": 4, **tls})
    async with RunningService(settings, roles=(run_fetcher, run_metadata_api_and_web)):
        await wait_port(listen)
        async with aiohttp.ClientSession() as http:
            async with http.post(f"http://{listen}/admin/set-rate", data={"domain": "example.org", "rate": "3"},
                                 headers={"Authorization": f"Bearer {TOKEN}"}) as response:
                assert response.status == 200, await response.text()
            async with http.get(f"http://{listen}/domains") as response:
                page = await response.text()
                assert response.status == 200 and "example.org" in page and "UNAVAILABLE" not in page
    fenced = service_settings(tmp_path, nats_server.url, **{"web.listen": listen, "fetcher.shards": 4,
                                                            "fetcher.admin_callers": ["ops"], **tls})
    async with RunningService(fenced, roles=(run_fetcher, run_metadata_api_and_web)):
        await wait_port(listen)
        async with aiohttp.ClientSession() as http, http.get(f"http://{listen}/domains") as response:
            assert "PERMISSION_DENIED" in await response.text()
