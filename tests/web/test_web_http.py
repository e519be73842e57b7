"""The web UI over plain HTTP: its headers, its admin gate, and hostile requests.

The browser tests (test_web_browser.py) show what a person sees; these pin what any client
gets: the CSP naming exactly a card's image origins, 403/401/200 for admin actions, and a
clear status (never a crash, never a hang) for the huge, the malformed and the many."""
from __future__ import annotations

import asyncio

import aiohttp
import pytest

from spiderduck.cli.nats_server import free_port
from spiderduck.cli.roles import run_metadata_api_and_web
from support.service import Client, RunningService, service_settings, wait_port

TOKEN = "t0ken"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
async def web(tmp_path, nats_server):
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, nats_server.url, **{
        "web.listen": listen, "web.admin_token": TOKEN, "web.max_live_clients": 2,
        "web.max_url_chars": 2000, "min_refresh_interval": 0})
    async with RunningService(settings), Client(settings) as client, aiohttp.ClientSession() as http:
        await wait_port(listen)
        yield type("Web", (), {"base": f"http://{listen}", "client": client, "http": http})


async def test_a_card_allows_images_only_from_its_own_origins(web, localweb):
    image = localweb.page("img.test", "/i.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, content_type="image/png")
    url = localweb.page("card.test", "/", f'<title>t</title><meta property="og:image" content="{image}">')
    await web.client.submit_url(url)
    await web.client.events.wait_for(1, timeout=30)
    async with web.http.get(f"{web.base}/url", params={"u": url}) as response:
        assert response.status == 200
        policy = response.headers["Content-Security-Policy"]
        assert response.headers["X-Frame-Options"] == "DENY"
        assert response.headers["Referrer-Policy"] == "no-referrer"
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["script-src"] == "'self'" and directives["default-src"] == "'none'"
    assert directives["img-src"].split() == ["'self'", f"http://img.test:{localweb.port}"]
    assert directives["frame-src"] == "'none'"
    async with web.http.get(f"{web.base}/url", params={"u": "http://never.test/"}) as response:
        assert response.status == 404
        assert "Not seen" in await response.text()
        assert "img.test" not in response.headers["Content-Security-Policy"]


async def test_admin_actions_need_the_bearer_token(web):
    form = {"u": "http://queued.test/a"}
    async with web.http.post(f"{web.base}/admin/submit", data=form) as response:
        assert response.status == 401 and response.headers["WWW-Authenticate"] == "Bearer"
    async with web.http.post(f"{web.base}/admin/submit", data=form,
                             headers={"Authorization": "Bearer wrong"}) as response:
        assert response.status == 401
    async with web.http.post(f"{web.base}/admin/submit", data={"u": "http://al:PASSW0RD@queued.test/a"},
                             headers=BEARER) as response:
        answer = await response.json()
        assert response.status == 200 and answer["ok"]
        assert "PASSW0RD" not in answer["message"]            # the password is not shown back
    [event] = await web.client.events.wait_for(1, timeout=30)
    assert event["url"] == "http://queued.test/a" and event["source"] == "web"


async def test_refresh_fetches_a_fresh_record_again(web, localweb):
    url = localweb.page("again.test", "/", "<title>again</title>")
    await web.client.submit_url(url)
    await web.client.events.wait_for(1, timeout=30)
    async with web.http.post(f"{web.base}/admin/refresh", data={"u": url}, headers=BEARER) as response:
        assert response.status == 200
    events = await web.client.events.wait_for(2, timeout=30)
    assert [e["resolution"] for e in events] == ["CRAWLED", "REVALIDATED"]   # fetched again: the same page
    assert len(localweb.hits_for("again.test", "/")) == 2


async def test_admin_actions_are_off_without_a_token(tmp_path, nats_server):
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, nats_server.url, **{"web.listen": listen})
    async with RunningService(settings, roles=(run_metadata_api_and_web,)), aiohttp.ClientSession() as http:
        await wait_port(listen)
        for action, form in (("submit", {"u": "http://a.test/"}), ("pause", {"domain": "a.test"})):
            async with http.post(f"http://{listen}/admin/{action}", data=form,
                                 headers={"Authorization": "Bearer "}) as response:
                assert response.status == 403
                assert "web.admin_token" in (await response.json())["message"]


@pytest.mark.parametrize("action, form, status, said", [
    ("submit", {"u": "javascript:alert(1)"}, 400, "not a fetchable URL"),
    ("submit", {"u": ""}, 400, "not a fetchable URL"),
    ("pause", {"domain": "com"}, 400, "registrable"),
    ("pause", {"domain": "a.test", "for": "forever"}, 400, "for must be a positive"),
    ("set-rate", {"domain": "a.test", "rate": "-1"}, 400, "rate must be a positive"),
    ("set-rate", {"domain": "a.test", "rate": "nan"}, 400, "rate must be a positive"),
])
async def test_bad_admin_input_gets_a_clear_refusal(web, action, form, status, said):
    async with web.http.post(f"{web.base}/admin/{action}", data=form, headers=BEARER) as response:
        assert response.status == status
        assert said in (await response.json())["message"]


async def test_hostile_requests_get_a_status_not_a_crash(web):
    cases = [
        ("GET", "/url", {"u": "http://x.test/" + "a" * 5000}, None, 400),   # over web.max_url_chars
        ("GET", "/url", {"u": "\x00\x1b[2J\u202e"}, None, 404),             # odd, and simply not seen
        ("GET", "/url", {"u": "http://x.test/%ff%fe"}, None, 404),
        ("POST", "/admin/submit", None, b"u=" + b"x" * 200_000, 413),       # form over 64 KiB
        ("POST", "/admin/reboot", None, b"", 404),
        ("GET", "/static/../../common/config.py", None, None, 404),
    ]
    form = {**BEARER, "Content-Type": "application/x-www-form-urlencoded"}
    for method, path, params, body, status in cases:
        async with web.http.request(method, f"{web.base}{path}", params=params, data=body,
                                    headers=form) as response:
            assert response.status == status, (path, params and str(params)[:40])
    async with web.http.get(f"{web.base}/healthz") as response:       # and it still serves
        assert response.status == 200 and await response.json() == {"status": "ok"}


async def test_live_lists_are_bounded_and_stream_each_processed_url(web, localweb):
    url = localweb.page("live.test", "/", "<title>streamed</title>")
    first = await web.http.get(f"{web.base}/events")
    second = await web.http.get(f"{web.base}/events")
    try:
        assert first.headers["Content-Type"] == "text/event-stream"
        assert await first.content.readline() == b": live\n"
        async with web.http.get(f"{web.base}/events") as third:     # web.max_live_clients is 2
            assert third.status == 503
        await web.client.submit_url(url)

        async def data_line():
            while True:
                line = await first.content.readline()
                if line.startswith(b"data: "):
                    return line
        line = await asyncio.wait_for(data_line(), 30)
        assert b'"title": "streamed"' in line and b'"status": "OK"' in line
    finally:
        first.close()
        second.close()


async def test_without_nats_there_is_no_live_list_and_no_submit(tmp_path):
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, "", **{"web.listen": listen, "web.admin_token": TOKEN})
    async with RunningService(settings, roles=(run_metadata_api_and_web,)), aiohttp.ClientSession() as http:
        await wait_port(listen)
        async with http.get(f"http://{listen}/") as response:
            assert "no NATS" in await response.text()
        async with http.get(f"http://{listen}/events") as response:
            assert response.status == 404
        async with http.post(f"http://{listen}/admin/submit", data={"u": "http://a.test/"},
                             headers=BEARER) as response:
            assert response.status == 503 and "needs NATS" in (await response.json())["message"]
        async with http.get(f"http://{listen}/domains") as response:   # no fetcher runs: it says so
            assert response.status == 200
            assert f"fetcher at {settings.fetcher.listen}: UNAVAILABLE" in await response.text()


async def test_an_embed_from_an_allowed_host_is_framed_sandboxed(tmp_path, nats_server, localweb):
    url = localweb.page("pub.test", "/player", '<title>Clip</title>'
                        '<meta property="og:video:url" content="https://player.video.test/e/2">')
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, nats_server.url, **{
        "web.listen": listen, "process.embed_allow_hosts": ["*.video.test"]})
    async with RunningService(settings), Client(settings) as client, aiohttp.ClientSession() as http:
        await wait_port(listen)
        await client.submit_url(url)
        await client.events.wait_for(1, timeout=30)
        async with http.get(f"http://{listen}/url", params={"u": url}) as response:
            page = await response.text()
            policy = response.headers["Content-Security-Policy"]
    assert '<div class="card-embed"><iframe src="https://player.video.test/e/2"' in page
    assert 'sandbox="allow-scripts allow-same-origin' in page
    assert "frame-src https://player.video.test;" in policy + ";"


async def test_a_web_listen_address_in_use_stops_the_role_with_the_key_named(tmp_path):
    import socket
    from spiderduck.core.errors import ConfigError
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        listen = f"127.0.0.1:{taken.getsockname()[1]}"
        settings = service_settings(tmp_path, "", **{"web.listen": listen})
        with pytest.raises(ConfigError, match=f"web.listen '{listen}'"):
            await asyncio.wait_for(run_metadata_api_and_web(settings, asyncio.Event()), 20)
    finally:
        taken.close()


async def test_a_live_list_that_stops_reading_is_closed(web, nats_server, monkeypatch):
    """It would hold a socket and its buffers for ever: once one write waits past
    WRITE_TIMEOUT, the server closes it (and HEAD never opens a live list at all)."""
    import socket
    import nats
    from spiderduck.bus import streams as bus
    from spiderduck.v1 import events_pb2
    from spiderduck.web import app as web_app
    monkeypatch.setattr(web_app, "WRITE_TIMEOUT", 1.0)
    async with web.http.head(f"{web.base}/events") as response:
        assert response.status == 405
    host, port = web.base.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)    # a reader that takes little
    sock.connect((host, int(port)))
    reader, writer = await asyncio.open_connection(sock=sock, limit=4096)
    writer.write(f"GET /events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    await writer.drain()
    assert (await asyncio.wait_for(reader.readline(), 10)).startswith(b"HTTP/1.1 200")
    nc = await nats.connect(nats_server.url)
    try:
        event = events_pb2.UrlProcessed(url="http://big.test/" + "x" * 8000)
        for _ in range(1500):                                 # 12 MB: more than any socket buffer
            await nc.publish(bus.PROCESSED_SUBJECT, event.SerializeToString())
        await nc.flush()
        # Not read until now: the server has given up on it, so the stream ends.
        rest = await asyncio.wait_for(reader.read(-1), 60)
        assert len(rest) < 1500 * 8000
    finally:
        writer.close()
        await nc.close()


async def test_web_listen_takes_a_bracketed_ipv6_address(tmp_path):
    import socket
    try:
        probe = socket.socket(socket.AF_INET6)
        probe.bind(("::1", 0))
        port = probe.getsockname()[1]
        probe.close()
    except OSError:
        pytest.skip("no IPv6 loopback here")
    settings = service_settings(tmp_path, "", **{"web.listen": f"[::1]:{port}"})
    async with RunningService(settings, roles=(run_metadata_api_and_web,)), aiohttp.ClientSession() as http:
        await wait_port(f"[::1]:{port}")
        async with http.get(f"http://[::1]:{port}/healthz") as response:
            assert response.status == 200


async def test_pages_built_at_once_are_bounded(tmp_path):
    """With web.max_concurrent_pages 1 and a fetcher that never answers, a second page is
    answered 503 at once while the first waits."""
    asked = asyncio.Event()
    held = []

    async def silent(reader, writer):          # accepts, then says nothing
        held.append(writer)
        asked.set()
        await reader.read()
    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    fetcher = f"127.0.0.1:{server.sockets[0].getsockname()[1]}"
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, "", **{"web.listen": listen, "web.max_concurrent_pages": 1,
                                                 "scheduler.fetchers": [fetcher]})
    async with server, RunningService(settings, roles=(run_metadata_api_and_web,)), aiohttp.ClientSession() as http:
        await wait_port(listen)
        first = asyncio.create_task(http.get(f"http://{listen}/domains"))
        await asyncio.wait_for(asked.wait(), 10)
        async with http.get(f"http://{listen}/url", params={"u": "http://a.test/"}) as response:
            assert response.status == 503
        for writer in held:                    # now the fetcher hangs up: the first page ends
            writer.close()
        async with await first as response:
            assert response.status == 200 and "UNAVAILABLE" in await response.text()
        async with http.get(f"http://{listen}/healthz") as response:    # not a page: never bounded
            assert response.status == 200
