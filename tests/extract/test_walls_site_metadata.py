"""Walls that state their site's metadata are still walls (spiderduck.extract.walls): og:site_name,
a title that is the site's name, a site-wide tagline and a template's og:url at the site's root are
not the page's own; a consent page a site sends its readers to is a wall by its URL."""
from __future__ import annotations

import pytest

from spiderduck.extract import extract_page
from spiderduck.extract.parsers import parse
from spiderduck.extract.walls import consent_page, consent_redirect, detect
from support.extraction import EXTRACTION

LOGIN_FORM = ('<form action="/login" method="post"><h1>Log in to continue</h1>'
              '<input name="user" placeholder="Phone number, username or email">'
              '<input type="password" name="pass"><button>Log in</button>'
              '<a href="/signup">Sign up</a></form>')
CONSENT_FORM = ('<form action="/save" method="post"><h1>Before you continue</h1>'
                '<p>We use cookies and data to deliver our services and measure engagement. If you choose'
                ' to accept all, we will also use cookies for personalised advertising.</p>'
                '<button name="consent" value="all">Accept all</button>'
                '<button name="consent" value="none">Reject all</button></form>')


def page(head: str, body: str) -> bytes:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>".encode()


def wall(markup: bytes, url: str = "", http_status: int = 200):
    return detect(markup, parse(markup, "selectolax"), http_status, url)


def og(**props: str) -> str:
    return "".join(f'<meta property="og:{k}" content="{v}">' for k, v in props.items())


@pytest.mark.parametrize("head", [
    # the site's name and a site-wide description: a tagline naming the site
    og(site_name="Portal", description="Portal is where friends share videos and photos."),
    # the title is the site's name, alone or with the wall's own words
    og(site_name="Portal", title="Portal"),
    og(site_name="Portal", title="Log in • Portal", description="Portal"),
    '<meta name="twitter:title" content="Welcome to Portal">' + og(site_name="Portal"),
    # no og:site_name: the brand of the host is the site's name
    og(title="Log in or sign up"),
    og(title="PORTAL", description="Join Portal today."),
], ids=["tagline", "title-is-name", "title-with-login-words", "twitter-welcome", "wall-words", "brand"])
def test_a_login_wall_stating_site_level_metadata_is_a_wall(head):
    found = wall(page(head, LOGIN_FORM), "https://www.portal.test/p/Cx1")
    assert found is not None and found.kind == "login_wall", found


def test_the_site_name_alone_never_makes_a_wall_content():
    head = ('<title>Cookies on Coast News</title><meta name="application-name" content="Coast News">'
            + og(site_name="Coast News", title="Coast News"))
    found = wall(page(head, CONSENT_FORM), "https://coast.test/2026/11/harbour")
    assert found is not None and found.kind == "consent_wall"


def test_a_template_naming_the_root_on_a_deeper_page_is_the_sites_metadata():
    """og:url at the site's root on a deep URL: the template's defaults, however specific they read."""
    head = og(title="Coast News: the harbour's own paper", description="Every story from the harbour.",
              url="https://coast.test/")
    assert wall(page(head, LOGIN_FORM), "https://coast.test/2026/11/harbour").kind == "login_wall"
    canonical = og(title="Coast News: the harbour's own paper") + '<link rel="canonical" href="/">'
    assert wall(page(canonical, LOGIN_FORM), "https://coast.test/a?id=3").kind == "login_wall"
    # ... while the root page's metadata is its own
    assert wall(page(head, LOGIN_FORM), "https://coast.test/") is None


@pytest.mark.parametrize("head", [
    og(site_name="Coast News", title="Harbour wall to be rebuilt by spring"),
    og(site_name="Coast News", description="The council voted on Tuesday to rebuild the harbour wall."),
    '<script type="application/ld+json">{"@type": "NewsArticle", "headline": "Harbour wall"}</script>'
    + og(site_name="Coast News", url="https://coast.test/"),
], ids=["own-title", "own-description", "json-ld-headline"])
def test_a_short_page_stating_its_own_metadata_stays_content(head):
    assert wall(page(head, LOGIN_FORM + CONSENT_FORM), "https://coast.test/2026/11/harbour") is None


def test_an_article_with_a_cookie_banner_and_its_own_title_stays_content():
    words = " ".join(["The harbour wall will be rebuilt by spring, the council said."] * 40)
    head = og(site_name="Coast News", title="Harbour wall to be rebuilt by spring")
    banner = ('<div role="dialog" class="onetrust-banner"><p>We use cookies. Accept cookies?</p>'
              '<button>Accept</button></div>')
    markup = page(head, f"<article><h1>Harbour wall</h1><p>{words}</p></article>{banner}")
    assert wall(markup, "https://coast.test/2026/11/harbour") is None
    assert extract_page(markup, "https://coast.test/2026/11/harbour", **EXTRACTION).interstitial == ""


@pytest.mark.parametrize("url, reason", [
    ("https://consent.youtube.com/m?continue=https%3A%2F%2Fwww.youtube.com%2Fwatch%3Fv%3D1&gl=DE",
     "consent page consent.youtube.com"),
    ("https://consent.google.com/ml?continue=https://www.google.com/maps&hl=de", "consent page consent.google.com"),
    ("https://guce.yahoo.com/consent?sessionId=3_cc-session", "consent page guce.yahoo.com"),
    ("https://consent.portal.test/m?continue=https://www.portal.test/watch",
     "consent host consent.portal.test returning to 'https://www.portal.test/watch'"),
    ("https://myprivacy.media.test/consent?redirectUri=x&redirect=https%3A%2F%2Fnews.test%2Fa",
     "consent host myprivacy.media.test returning to 'https://news.test/a'"),
    ("https://shop.test/privacy-gate?redirect=https://shop.test/item/7",
     "consent path '/privacy-gate' returning to 'https://shop.test/item/7'"),
    ("https://shop.test/de/cookie-consent/?return_to=http://shop.test/",
     "consent path '/de/cookie-consent/' returning to 'http://shop.test/'"),
])
def test_consent_pages_by_their_url(url, reason):
    assert consent_page(url) == reason
    assert consent_redirect(["https://start.test/a", url]) == "redirected to " + reason


@pytest.mark.parametrize("url", [
    "https://law.test/guides/consent",                                    # an article about consent
    "https://shop.test/consent?step=2",                                   # nothing to go back to
    "https://shop.test/privacy-gate?redirect=/item/7",                    # ... not a URL
    "https://accounts.portal.test/login?continue=https://www.portal.test/watch",   # a login page
    "https://consentmanager.test/pricing",
    "https://www.youtube.com/watch?v=consent",
    "mailto:consent@guce.yahoo.com",
    "https://[bad/consent?continue=https://x.test/",
])
def test_urls_that_are_not_consent_pages(url):
    assert consent_page(url) == ""
    assert consent_redirect(["https://start.test/a", url]) is None


def test_a_chain_of_one_url_is_no_redirect():
    assert consent_redirect(["https://consent.youtube.com/m?continue=https://www.youtube.com/"]) is None
    assert consent_redirect([]) is None


def test_a_consent_page_is_a_wall_whatever_it_states():
    head = og(site_name="Portal", title="Before you continue to Portal videos",
              description="Choose how Portal and its partners use cookies on this device.")
    url = "https://consent.portal.test/m?continue=https%3A%2F%2Fwww.portal.test%2Fwatch%3Fv%3D1"
    found = wall(page(head, CONSENT_FORM), url)
    assert found.kind == "consent_wall" and found.reason == (
        "consent host consent.portal.test returning to 'https://www.portal.test/watch?v=1'")
    assert wall(page(head, CONSENT_FORM), "https://www.portal.test/watch?v=1") is None
