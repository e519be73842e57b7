"""The web UI's Host check (DNS rebinding, src/spiderduck/web/security.py host_check) against forged requests
written byte for byte on a real socket: names that only start or end like ours, IPv6 forms,
trailing dots, case, a Host that is not host[:port], absolute-form request targets, no Host,
two Hosts."""
from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from spiderduck.web import security


async def ok(request: web.Request) -> web.Response:
    return web.Response(text="ok")


@pytest.fixture(params=["127.0.0.1", "::1"])
async def ui(request):
    """A UI whose check is that of a loopback listen address (the param) with one allowed name;
    the socket itself is on 127.0.0.1 whatever the param, so no IPv6 is needed here."""
    app = web.Application(middlewares=[security.security_headers,
                                       security.host_check(request.param, ["ui.example"])])
    app.router.add_get("/healthz", ok)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield request.param, site._server.sockets[0].getsockname()[1]
    await runner.cleanup()


async def status(port: int, head: str) -> int:
    """The status of the raw request `head` (its request line and headers)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head.encode("utf-8") + b"Connection: close\r\n\r\n")
        await writer.drain()
        line = await reader.readline()
    finally:
        writer.close()
    return int(line.split()[1])


def get(host: str, target: str = "/healthz") -> str:
    return f"GET {target} HTTP/1.1\r\nHost: {host}\r\n"


@pytest.mark.parametrize("host", [
    "localhost", "LocalHost.", "localhost:8080", "localhost:", "ui.example", "UI.Example.:443",
])
async def test_our_names_are_answered(ui, host):
    _, port = ui
    assert await status(port, get(host)) == 200


async def test_the_listen_address_is_answered_in_its_own_form(ui):
    listen, port = ui
    ours = f"[{listen}]:{port}" if ":" in listen else f"{listen}:{port}"
    assert await status(port, get(ours)) == 200


@pytest.mark.parametrize("host", [
    "localhost.evil.com", "127.0.0.1.nip.io", "evil.com", "evil.com:80", "ui.example.evil.com",
    "localhost@evil.com", "evil.com@localhost", "127.1", "2130706433", "local%68ost", "lоcalhost",
])
async def test_other_names_get_421(ui, host):
    _, port = ui
    assert await status(port, get(host)) == 421


@pytest.mark.parametrize("host", [
    "localhost:evil.com", "localhost:80:80", "localhost:８０", "[::1]evil.com", "[::1].evil.com",
    "[::1]:evil", "[::1", "[localhost]", "[ui.example]:80",
])
async def test_a_host_that_is_not_host_colon_port_gets_421(ui, host):
    """Only host[:port] (an IPv6 address in brackets) is a Host: what is around a name of ours
    does not make the request ours."""
    _, port = ui
    assert await status(port, get(host)) == 421


async def test_an_absolute_form_target_is_judged_by_its_own_host(ui):
    """In absolute form the target's host is the request's (RFC 9112 3.2.2; aiohttp's
    request.host and request.url say so), whatever the Host header says."""
    _, port = ui
    assert await status(port, get("localhost", "http://evil.com/healthz")) == 421
    assert await status(port, get("localhost", "http://user@localhost/healthz")) == 421
    assert await status(port, get("evil.com", "http://localhost/healthz")) == 421
    assert await status(port, get("localhost", "http://localhost:8080/healthz")) == 200
    assert await status(port, get("ui.example", "http://UI.example./healthz")) == 200


async def test_no_host_or_two_hosts_are_refused(ui):
    _, port = ui
    assert await status(port, "GET /healthz HTTP/1.0\r\n") == 421
    assert await status(port, "GET /healthz HTTP/1.1\r\n") == 400                  # aiohttp's own
    assert await status(port, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nHost: evil.com\r\n") == 400
    assert await status(port, "GET /healthz HTTP/1.1\r\nHost: evil.com\r\nHost: localhost\r\n") == 400


@pytest.mark.parametrize("host, shown", [("x" * 300 + ".evil", "x" * 100), ("localhost:evil.com", "localhost:evil.com")])
async def test_the_refusal_shows_what_was_sent_quoted_and_short(ui, host, shown):
    _, port = ui
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(get(host).encode() + b"Connection: close\r\n\r\n")
    await writer.drain()
    answer = await reader.read()
    writer.close()
    body = answer.partition(b"\r\n\r\n")[2].decode()
    assert answer.startswith(b"HTTP/1.1 421")
    assert body == f"421: this server does not answer for the host {shown!r} (web.allowed_hosts)\n"
