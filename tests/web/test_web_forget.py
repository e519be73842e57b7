"""The web UI's Forget (issue 39) over a real socket, served by the metadata-api role with real
token files: only an admin of the metadata API may (a session signed in with an admin token, or a
browser on loopback when no admin is configured), only as an admin action (web.admin_token's
bearer header, which a browser never sends by itself: a form posted from elsewhere, or a
cross-site request, is refused), and only with a reason and a confirmation."""
from __future__ import annotations

import aiohttp
import pytest

from spiderduck.cli.nats_server import free_port
from spiderduck.cli.roles import run_metadata_api_and_web
from support.service import Client, RunningService, service_settings, wait_port

ORDINARY, ADMIN_TOKEN, WEB_ADMIN = "tok-frontend-s3cret", "tok-oncall-s3cret", "web-admin-s3cret"
BEARER = {"Authorization": f"Bearer {WEB_ADMIN}"}
FORM = {"urls": "http://gone.test/post\n", "reason": "GDPR art. 17 request 1234", "confirm": "yes"}


async def serve(tmp_path, nats_url: str, **more):
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, nats_url, **{"web.listen": listen, "web.admin_token": WEB_ADMIN, **more})
    return listen, settings


async def post(http, base: str, form: dict, headers: dict | None = None) -> tuple[int, dict]:
    async with http.post(f"{base}/admin/forget", data=form, headers=headers or {}) as response:
        return response.status, await response.json()


async def sign_in(base: str, token: str) -> aiohttp.ClientSession:
    session = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
    async with session.post(f"{base}/signin", data={"token": token, "next": "/forget"},
                            allow_redirects=False) as response:
        assert response.status == 303
    return session


@pytest.fixture
async def signed(tmp_path):
    """The UI behind metadata_api.tokens_file, with an admin_tokens_file; no NATS."""
    (tmp_path / "tokens").write_text(f"frontend:{ORDINARY}\n")
    (tmp_path / "admins").write_text(f"oncall:{ADMIN_TOKEN}\n")
    listen, settings = await serve(tmp_path, "", **{"metadata_api.tokens_file": str(tmp_path / "tokens"),
                                                    "metadata_api.admin_tokens_file": str(tmp_path / "admins")})
    async with RunningService(settings, roles=(run_metadata_api_and_web,)):
        await wait_port(listen)
        yield f"http://{listen}"


async def test_a_session_of_an_ordinary_token_is_refused_one_of_an_admin_token_is_let_through(signed):
    ordinary = await sign_in(signed, ORDINARY)
    admin = await sign_in(signed, ADMIN_TOKEN)             # an admin token signs in too
    try:
        status, answer = await post(ordinary, signed, FORM, BEARER)
        assert status == 403 and not answer["ok"] and "admin_tokens_file" in answer["message"]
        status, answer = await post(admin, signed, FORM, BEARER)
        assert status == 503 and "needs NATS" in answer["message"]          # past the admin check
        async with admin.get(f"{signed}/forget") as page:
            assert page.status == 200 and 'action="/admin/forget"' in await page.text()
    finally:
        await ordinary.close()
        await admin.close()


async def test_without_the_admin_header_or_from_another_site_nothing_is_forgotten(signed):
    admin = await sign_in(signed, ADMIN_TOKEN)
    try:
        status, answer = await post(admin, signed, FORM)                   # the session cookie alone
        assert status == 401 and not answer["ok"]
        status, answer = await post(admin, signed, FORM, {**BEARER, "Origin": "http://evil.example"})
        assert status == 403 and "refused" in answer["message"]
        status, answer = await post(admin, signed, FORM, {**BEARER, "Sec-Fetch-Site": "cross-site"})
        assert status == 403 and "refused" in answer["message"]
    finally:
        await admin.close()


async def test_a_reason_a_confirmation_and_a_domain_itself_are_required(signed):
    admin = await sign_in(signed, ADMIN_TOKEN)
    try:
        for change, words in (({"reason": " "}, "reason is required"), ({"confirm": ""}, "confirm first"),
                              ({"urls": "", "domain": ""}, "nothing to forget"),
                              ({"urls": "", "domain": "www.gone.test"}, "a host under the registrable domain gone.test"),
                              ({"urls": "", "domain": "com"}, "domain:")):
            status, answer = await post(admin, signed, {**FORM, **change}, BEARER)
            assert status == 400 and words in answer["message"], (change, answer)
    finally:
        await admin.close()


async def test_an_admin_on_loopback_forgets_through_the_form_and_sees_what_went(tmp_path, nats_server, localweb):
    page = localweb.page("gone.test", "/post", "<title>A person's address</title>")
    listen, settings = await serve(tmp_path, nats_server.url)      # no admin configured: loopback
    async with RunningService(settings), Client(settings) as client, aiohttp.ClientSession() as http:
        await client.submit_url(page)
        await client.events.wait_for(1, timeout=60)
        await wait_port(listen)
        async with http.get(f"http://{listen}/forget") as form_page:
            assert 'name="reason"' in await form_page.text() and 'name="confirm"' in await form_page.text()
        status, answer = await post(http, f"http://{listen}", {**FORM, "urls": page}, BEARER)
        assert status == 200 and answer["ok"], answer
        assert (answer["records"], answer["events"]) == (1, 1) and answer["content_records"] >= 1
        assert answer["message"].startswith("forgot 1 URL: removed 1 record, ")
        assert await client.get([page]) == [None]
        async with http.get(f"http://{listen}/url", params={"u": page}) as card:
            assert card.status == 404                                 # never seen
