"""The card of a URL a browser sees otherwise (issue 43, preview honesty) over the real web UI:
records stored with a verdict, each card page fetched from the metadata-api role's web server.
A `differs` card warns, naming the differences and where the browser ended (escaped, never a
link); a `consistent` one does not warn and says so in its facts; `unchecked` is a quiet fact."""
from __future__ import annotations

import time

import aiohttp
import pytest
from markupsafe import escape

from spiderduck.cli.nats_server import free_port
from spiderduck.cli.roles import run_metadata_api_and_web
from spiderduck.core.record import Honesty, UrlRecord
from spiderduck.core.status import Status
from spiderduck.stores.open import open_metadata_store
from support.service import RunningService, service_settings, wait_port

HOSTILE = 'http://evil.test/"><script>alert(1)</script>'
VERDICTS = {
    "http://bank.test/differs": Honesty("differs", ("final_domain", "title"), "http://phish.test/login", 1000.0),
    "http://bank.test/hostile": Honesty("differs", ("final_domain",), HOSTILE, 1000.0),
    "http://bank.test/consistent": Honesty("consistent", (), "http://bank.test/consistent", 1000.0),
    "http://bank.test/unchecked": Honesty("unchecked"),
    "http://bank.test/never": None,
}


@pytest.fixture
async def web(tmp_path):
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, "", **{"web.listen": listen})
    (tmp_path / "var").mkdir(exist_ok=True)
    store = await open_metadata_store(settings.metadata_store_url)
    try:
        for url, honesty in VERDICTS.items():
            record = UrlRecord(url=url, status=Status.OK, http_status=200, final_url=url, title="Your bank",
                               description="Sign in to your account.", fetched_at=time.time(), honesty=honesty)
            await store.put(url, record, [url])
    finally:
        await store.close()
    async with RunningService(settings, roles=(run_metadata_api_and_web,)), aiohttp.ClientSession() as http:
        await wait_port(listen)

        async def card(url: str) -> str:
            async with http.get(f"http://{listen}/url", params={"u": url}) as response:
                assert response.status == 200
                return await response.text()
        yield card


async def test_a_card_a_browser_does_not_see_warns(web):
    page = await web("http://bank.test/differs")
    assert 'id="card-cloaked"' in page and 'role="alert"' in page
    assert "A browser sees something else:" in page
    assert "another domain (final_domain)" in page and "another title (title)" in page
    assert 'it ended at <span class="url">http://phish.test/login</span>' in page
    assert 'href="http://phish.test/login"' not in page            # shown, never linked
    assert "<code>cloaked</code>" in page                          # and each platform's finding


async def test_a_hostile_browser_final_url_is_escaped(web):
    page = await web("http://bank.test/hostile")
    assert 'id="card-cloaked"' in page
    assert "<script>alert(1)</script>" not in page
    assert f'it ended at <span class="url">{escape(HOSTILE)}</span>' in page     # as the templates escape
    assert '"><script>' not in page


@pytest.mark.parametrize("url, fact", [
    ("http://bank.test/consistent", "<dt>Browser check</dt><dd>consistent with the card</dd>"),
    ("http://bank.test/unchecked", "<dt>Browser check</dt><dd>not made</dd>"),
    ("http://bank.test/never", None),
])
async def test_no_warning_unless_it_differs(web, url, fact):
    page = await web(url)
    assert 'id="card-cloaked"' not in page and "A browser sees something else" not in page
    assert "<code>cloaked</code>" not in page
    if fact:
        assert fact in page
    else:
        assert "Browser check" not in page
