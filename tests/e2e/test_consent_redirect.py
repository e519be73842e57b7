"""Walls that state their site's metadata, through the whole service over real sockets: a link that
redirects to a consent page on another host is INTERSTITIAL consent_wall whatever that page states,
a login wall stating only its site's name and tagline is a login_wall, and an article with a cookie
banner and its own title stays OK (spiderduck.extract.walls)."""
from __future__ import annotations

from urllib.parse import quote

from support.service import Client, RunningService, service_settings

SITE = '<meta property="og:site_name" content="Portal">'
CONSENT = ('<title>Before you continue to Portal</title>' + SITE
           + '<meta property="og:title" content="Before you continue to Portal videos">'
           '<meta property="og:description" content="Choose how Portal and its partners use cookies.">')
CONSENT_BODY = ('<form action="/save" method="post"><p>We use cookies and data to deliver our services.</p>'
                '<button name="set_eom" value="false">Accept all</button></form>')
LOGIN = ('<title>Log in • Portal</title>' + SITE + '<meta property="og:title" content="Portal">'
         '<meta property="og:description" content="Portal is where friends share videos and photos.">')
LOGIN_BODY = '<form method="post"><input name="user"><input type="password" name="pass"><button>Log in</button></form>'
ARTICLE = ('<title>Harbour wall</title><meta property="og:site_name" content="Coast News">'
           '<meta property="og:title" content="Harbour wall to be rebuilt by spring">')
ARTICLE_BODY = ("<article><p>" + "The harbour wall will be rebuilt by spring, the council said. " * 40
                + '</p></article><div role="dialog" class="onetrust-banner"><p>We use cookies.</p>'
                '<button>Accept cookies</button></div>')


def html(head: str, body: str) -> str:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>"


async def test_site_level_metadata_and_consent_redirects_through_the_service(tmp_path, nats_server, localweb):
    web = localweb
    watch = web.url("www.portal.test", "/watch?v=1")
    consent = web.page("consent.portal.test", "/m", html(CONSENT, CONSENT_BODY))
    web.redirect("www.portal.test", "/watch", f"{consent}?continue={quote(watch, safe='')}", status=302)
    login = web.page("social.test", "/p/Cx1", html(LOGIN, LOGIN_BODY))
    article = web.page("coast.test", "/2026/11/harbour", html(ARTICLE, ARTICLE_BODY))
    urls = [watch, login, article]

    settings = service_settings(tmp_path, nats_server.url)
    async with RunningService(settings), Client(settings) as client:
        for url in urls:
            await client.submit_url(url)
        await client.events.wait_for(len(urls), timeout=60)
        redirected, walled, kept = await client.get(urls)

    assert redirected["status"] == "INTERSTITIAL", redirected
    assert redirected["error"].startswith("consent_wall: consent host consent.portal.test returning to "
                                          f"{watch!r}"), redirected["error"]
    assert redirected["final_url"].startswith(consent + "?continue=")
    assert redirected["title"] == "Before you continue to Portal videos"      # what the wall stated, kept
    assert walled["status"] == "INTERSTITIAL" and walled["error"].startswith("login_wall: a password field")
    assert kept["status"] == "OK" and kept["title"] == "Harbour wall to be rebuilt by spring"
