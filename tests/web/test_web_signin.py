"""The web UI behind metadata_api.tokens_file (web.signin), over a real socket, with real token
files: each route without a token, with a wrong one, with the bearer header and with the session
cookie /signin sets; the cookie's attributes; a token removed from the file ending its sessions;
and cross-site requests refused before they start a crawl or change anything, with or without
tokens."""
from __future__ import annotations

import json
import logging

import aiohttp
import pytest

from spiderduck.cli.nats_server import free_port
from spiderduck.cli.roles import run_metadata_api_and_web
from spiderduck.metadata_api import auth
from spiderduck.web.signin import SESSION_COOKIE
from support.certs import TestCA
from support.service import Client, RunningService, service_settings, wait_port, wait_until

TOKEN = "s3cret-alice-token"
OTHER = "s3cret-bob-token"
ADMIN = "admin-t0ken"
API_ROUTES = ["/api/v1/preview?url=http://never.test/", "/api/v1/explain?url=http://never.test/",
              "/oembed?url=http://never.test/"]
PAGES = ["/", "/url?u=http://never.test/", "/domains"]
JSON_ROUTES = ["/events", "/healthz"]


def _service(tmp_path, nats_url, tokens: str | None, **more):
    listen = f"127.0.0.1:{free_port()}"
    values = {"web.listen": listen, "web.admin_token": ADMIN, "metadata_api.resolve_timeout": 5.0, **more}
    if tokens is not None:
        path = tmp_path / "tokens"
        path.write_text(tokens)
        values["metadata_api.tokens_file"] = str(path)
    return listen, service_settings(tmp_path, nats_url, **values)


@pytest.fixture
async def locked(tmp_path, nats_server, monkeypatch):
    monkeypatch.setattr(auth, "RELOAD_EVERY", 0.05)        # a removed token is seen at once
    listen, settings = _service(tmp_path, nats_server.url, f"alice:{TOKEN}\nbob:{OTHER}\n")
    async with RunningService(settings, roles=(run_metadata_api_and_web,)), \
            aiohttp.ClientSession() as http:
        await wait_port(listen)
        yield type("Web", (), {"base": f"http://{listen}", "http": http, "tokens": tmp_path / "tokens",
                               "settings": settings})


async def _status(http, method, url, **kw) -> tuple[int, str, dict]:
    async with http.request(method, url, allow_redirects=False, **kw) as response:
        body = await response.text() if response.status != 200 or "events" not in url else ""
        return response.status, body, dict(response.headers)


async def _sign_in(web, token: str) -> aiohttp.ClientSession:
    jar = aiohttp.CookieJar(unsafe=True)                   # an IP address host keeps its cookies
    session = aiohttp.ClientSession(cookie_jar=jar)
    async with session.post(f"{web.base}/signin", data={"token": token, "next": "/domains"},
                            allow_redirects=False) as response:
        assert response.status == 303 and response.headers["Location"] == "/domains"
    return session


async def test_every_route_needs_a_token_of_the_file(locked):
    wrong = {"Authorization": "Bearer not-a-token"}
    for route in API_ROUTES + JSON_ROUTES:
        for headers in ({}, wrong):
            status, body, answer = await _status(locked.http, "GET", locked.base + route, headers=headers)
            assert status == 401, route
            assert "error" in json.loads(body) and answer["WWW-Authenticate"] == "Bearer"
            assert "not-a-token" not in body
    for route in PAGES:
        for headers in ({}, wrong):
            status, _, answer = await _status(locked.http, "GET", locked.base + route, headers=headers)
            assert status == 303 and answer["Location"].startswith("/signin?next="), route
    status, body, _ = await _status(locked.http, "GET", locked.base + "/signin")
    assert status == 200 and 'name="token"' in body
    status, _, _ = await _status(locked.http, "GET", locked.base + "/static/app.js")
    assert status == 200


async def test_the_bearer_token_opens_the_api_and_the_pages(locked):
    bearer = {"Authorization": f"Bearer {OTHER}"}
    for route in API_ROUTES:
        status, body, _ = await _status(locked.http, "GET", locked.base + route, headers=bearer)
        assert status not in (401, 403, 303) and "error" in body, route     # 404 / 503: past the gate
    for route in PAGES + ["/healthz"]:
        status, _, _ = await _status(locked.http, "GET", locked.base + route, headers=bearer)
        assert status in (200, 404), route


async def test_the_sign_in_cookie_opens_the_pages_not_the_api(locked, caplog):
    caplog.set_level(logging.DEBUG)
    status, body, _ = await _status(locked.http, "POST", locked.base + "/signin", data={"token": "nope"})
    assert status == 401 and "not known" in body
    session = await _sign_in(locked, TOKEN)
    async with session:
        [cookie] = [c for c in session.cookie_jar if c.key == SESSION_COOKIE]
        assert cookie.value != TOKEN and TOKEN not in cookie.value
        assert cookie["httponly"] and cookie["samesite"] == "Strict" and not cookie["secure"]
        for route in PAGES:
            status, _, _ = await _status(session, "GET", locked.base + route)
            assert status in (200, 404), route
        async with session.get(locked.base + "/events") as response:
            assert response.status == 200 and await response.content.readline() == b": live\n"
        for route in API_ROUTES:
            status, _, _ = await _status(session, "GET", locked.base + route)
            assert status == 401, route
        status, body, _ = await _status(session, "POST", locked.base + "/admin/pause",
                                        data={"domain": "a.test"}, headers={"Authorization": "Bearer wrong"})
        assert status == 401 and "web.admin_token" in body         # past the session, at the admin token
    status, body, _ = await _status(locked.http, "POST", locked.base + "/admin/pause", data={"domain": "a.test"},
                                    headers={"Authorization": f"Bearer {ADMIN}"})
    assert status == 401 and "sign in" in body                     # no session: the admin token alone is not enough
    assert TOKEN not in caplog.text and OTHER not in caplog.text and "'alice' signed in" in caplog.text


async def test_a_token_removed_from_the_file_ends_its_sessions(locked):
    session = await _sign_in(locked, TOKEN)
    async with session:
        assert (await _status(session, "GET", locked.base + "/domains"))[0] == 200
        locked.tokens.write_text(f"bob:{OTHER}\n")

        async def refused():
            status, _, answer = await _status(session, "GET", locked.base + "/domains")
            return status == 303 and answer["Location"].startswith("/signin")
        await wait_until(refused, 10, "alice's session to end")
        assert (await _status(locked.http, "GET", locked.base + "/healthz",
                              headers={"Authorization": f"Bearer {TOKEN}"}))[0] == 401
        assert (await _status(locked.http, "GET", locked.base + "/healthz",
                              headers={"Authorization": f"Bearer {OTHER}"}))[0] == 200


async def test_the_token_file_is_read_once_for_the_api_and_the_web_ui(tmp_path, nats_server, monkeypatch):
    reads = []
    read = auth.TokenFile._read
    monkeypatch.setattr(auth.TokenFile, "_read", lambda self: reads.append(self.path) or read(self))
    listen, settings = _service(tmp_path, nats_server.url, f"alice:{TOKEN}\n")
    async with RunningService(settings, roles=(run_metadata_api_and_web,)), aiohttp.ClientSession() as http:
        await wait_port(listen)
        status, _, _ = await _status(http, "GET", f"http://{listen}/healthz",
                                     headers={"Authorization": f"Bearer {TOKEN}"})
        assert status == 200
    assert reads == [str(tmp_path / "tokens")]


async def test_the_cookie_is_secure_when_the_ui_serves_tls(tmp_path, nats_server):
    issued = TestCA(tmp_path / "pki").issue("web", dns=["localhost"], ips=["127.0.0.1"])
    listen, settings = _service(tmp_path, nats_server.url, f"alice:{TOKEN}\n",
                                **{"web.tls_cert": issued.cert, "web.tls_key": issued.key})
    async with RunningService(settings, roles=(run_metadata_api_and_web,)), \
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False)) as http:
        await wait_port(listen)
        async with http.post(f"https://{listen}/signin", data={"token": TOKEN}, allow_redirects=False) as response:
            assert response.status == 303
            cookie = response.cookies[SESSION_COOKIE]
            assert cookie["secure"] and cookie["httponly"] and cookie["samesite"] == "Strict"


CROSS_SITE = [{"Sec-Fetch-Site": "cross-site"}, {"Origin": "http://evil.test"}, {"Origin": "null"}]


@pytest.mark.parametrize("with_tokens", [False, True])
async def test_cross_site_requests_never_crawl_nor_act(tmp_path, nats_server, localweb, with_tokens):
    url = localweb.page("cross.test", "/", "<title>t</title>")
    listen, settings = _service(tmp_path, nats_server.url, f"alice:{TOKEN}\n" if with_tokens else None)
    bearer = {"Authorization": f"Bearer {TOKEN}"} if with_tokens else {}
    admin = {"Authorization": f"Bearer {ADMIN}"}
    async with RunningService(settings), Client(settings) as client, aiohttp.ClientSession() as http:
        await wait_port(listen)
        base = f"http://{listen}"
        for marks in CROSS_SITE:
            status, body, _ = await _status(http, "GET", f"{base}/api/v1/preview", params={"url": url},
                                            headers={**bearer, **marks})
            assert status == 403 and "refused" in body, marks
            for action, form in (("submit", {"u": url}), ("pause", {"domain": "cross.test"})):
                status, _, _ = await _status(http, "POST", f"{base}/admin/{action}", data=form,
                                             headers={**admin, **marks})
                assert status == 403, (action, marks)
            status, _, _ = await _status(http, "POST", f"{base}/signin", data={"token": TOKEN}, headers=marks)
            assert status == 403
        assert localweb.hits_for("cross.test", "/") == [] and client.events.for_url(url) == []
        same = {"Sec-Fetch-Site": "same-origin", "Origin": base}      # the page's own requests still act
        status, body, answer = await _status(http, "GET", f"{base}/api/v1/preview", params={"url": url},
                                             headers={**bearer, **same})
        assert status == 200, body
        assert answer["SpiderDuck-Resolution"] == "CRAWLED" and len(localweb.hits_for("cross.test", "/")) == 1


async def test_without_a_tokens_file_the_ui_stays_open(tmp_path, nats_server):
    listen, settings = _service(tmp_path, nats_server.url, None)
    async with RunningService(settings, roles=(run_metadata_api_and_web,)), aiohttp.ClientSession() as http:
        await wait_port(listen)
        for route in PAGES + JSON_ROUTES[1:] + API_ROUTES[1:]:
            status, _, _ = await _status(http, "GET", f"http://{listen}{route}")
            assert status in (200, 404), route
        status, _, answer = await _status(http, "GET", f"http://{listen}/signin")
        assert status == 303 and answer["Location"] == "/"


async def test_preview_counts_in_the_tokens_resolve_url_bucket(tmp_path, nats_server):
    import grpc

    from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc
    listen, settings = _service(tmp_path, nats_server.url, f"alice:{TOKEN}\nbob:{OTHER}\n",
                                **{"metadata_api.resolve_rate": 0.2})      # one, then one every 5 s
    bad = {"url": "javascript:alert(1)"}       # answered at once (400) once past the bucket
    async with RunningService(settings, roles=(run_metadata_api_and_web,)), aiohttp.ClientSession() as http, \
            grpc.aio.insecure_channel(settings.metadata_api.listen) as channel:
        async def preview(token):
            return await _status(http, "GET", f"http://{listen}/api/v1/preview", params=bad,
                                 headers={"Authorization": f"Bearer {token}"})
        await wait_port(listen)
        assert (await preview(TOKEN))[0] == 400
        status, body, answer = await preview(TOKEN)
        assert status == 429 and "resolve_rate" in json.loads(body)["error"] and answer["Retry-After"] == "5"
        stub = metadata_pb2_grpc.MetadataServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as refused:     # the same bucket over gRPC
            await stub.ResolveUrl(metadata_pb2.ResolveUrlRequest(url="javascript:alert(1)"),
                                  metadata=[("authorization", f"Bearer {TOKEN}")])
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        with pytest.raises(grpc.aio.AioRpcError) as other:      # bob's bucket is his own
            await stub.ResolveUrl(metadata_pb2.ResolveUrlRequest(url="javascript:alert(1)"),
                                  metadata=[("authorization", f"Bearer {OTHER}")])
        assert other.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert (await preview(OTHER))[0] == 429
