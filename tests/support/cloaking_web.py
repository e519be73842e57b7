"""A test web of cloaking techniques and honest pages (issue 43, preview honesty), on LocalWeb:
`CloakingWeb(web).build()` (or `build(web)`; `web` started) -> [Case]. Pages answer by who seems to ask:
the User-Agent, headers only a browser's navigation sends (Sec-Fetch-*, Upgrade-Insecure-Requests, its
Accept), a cookie set on an earlier answer, or how often they were asked (the crawler asks first). A
cloaked Case names the differences (honesty.DIFFERENCES) a comparison must find, at least; an honest
one, the near-misses among them, must be consistent. No two cases share a submitted or final URL, no
host serves a cloaked and an honest case; `.test` hosts (fetcher.dns_overrides), robots.txt a 404 (all
allowed), real PNG/JPEG images; every request to a case's routes is in `visits` with its headers."""
from __future__ import annotations

import io
import re
from dataclasses import dataclass
from functools import lru_cache
from html import escape
from typing import Callable
from urllib.parse import quote, urlsplit

from aiohttp import web as aio
from PIL import Image as PILImage

from support.localweb import LocalWeb

CRAWLER_TOKEN = "SpiderDuck"          # in fetcher.user_agent's default
_BOT = re.compile(r"bot|crawl|spider|preview|facebookexternalhit|" + CRAWLER_TOKEN, re.I)


@dataclass(frozen=True)
class Case:
    name: str
    url: str                                          # what is submitted
    cloaked: bool
    expect_differences: frozenset[str] = frozenset()  # at least these (cloaked); none (honest)
    technique: str = ""                               # one line: the trick, or the near-miss
    browser_host: str = ""                            # where a browser's look ends, when asserted


@dataclass(frozen=True)
class Visit:
    host: str
    path: str                                         # with its query
    user_agent: str
    browser: bool                                     # a browser's User-Agent (Mozilla, no bot's word)
    headers: dict


# --- who asks: (request, n-th GET of this route) -> the cloaker's "a person" ----------------------
def is_bot(r: aio.Request, n: int = 0) -> bool:
    ua = r.headers.get("User-Agent", "")
    return bool(_BOT.search(ua)) or "Mozilla/" not in ua


def by_ua(r, n):        return not is_bot(r)                                                # noqa: E704
def by_sec_fetch(r, n): return r.headers.get("Sec-Fetch-Mode") == "navigate"                # noqa: E704
def by_accept(r, n):    return "image/avif" in r.headers.get("Accept", "")                  # noqa: E704
def by_upgrade(r, n):   return r.headers.get("Upgrade-Insecure-Requests") == "1"           # noqa: E704
def by_click(r, n):     return r.headers.get("Sec-Fetch-User") == "?1" and by_document(r)   # noqa: E704
def by_document(r):     return r.headers.get("Sec-Fetch-Dest") == "document"                # noqa: E704
def by_visit(r, n):     return n > 1                                                        # noqa: E704


# --- pages ---------------------------------------------------------------------------------------
_WORDS = ("The council met on Tuesday to weigh the proposal, which drew a larger crowd than any meeting this year. "
          "Residents spoke for two hours about traffic, noise and the cost; figures follow next month. ")


def page(title: str, description: str = "", *, image: str = "", og_url: str = "", canonical: str = "",
         site_name: str = "", head: str = "", body: str = "", og: bool = True) -> str:
    """An article with a card: <title>, meta description, and the og: tags given (og=False: none)."""
    tags = [f"<title>{escape(title)}</title>", '<meta charset="utf-8">']
    tags += [f'<meta name="description" content="{escape(description)}">'] if description else []
    stated = {"og:title": title, "og:description": description, "og:image": image, "og:url": og_url,
              "og:site_name": site_name} if og else {}
    tags += [f'<meta property="{k}" content="{escape(v)}">' for k, v in stated.items() if v]
    tags += [f'<link rel="canonical" href="{escape(canonical)}">'] if canonical else []
    return (f"<!DOCTYPE html><html><head>{''.join(tags)}{head}</head><body><article><h1>{escape(title)}</h1>"
            f"<p>{_WORDS}</p><p>{_WORDS}</p><p>{_WORDS}</p>{body}</article></body></html>")


def bare(head: str = "", body: str = "Redirecting…") -> str:
    """A page with no card of its own (what a refresh or script hop serves)."""
    return f"<!DOCTYPE html><html><head><title>Redirecting</title>{head}</head><body>{body}</body></html>"


def meta_refresh(url: str) -> str:
    return f'<meta http-equiv="refresh" content="0;url={url}">'


@lru_cache(maxsize=None)
def picture(kind: str, color: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", (1200, 630), color).save(out, kind)
    return out.getvalue()


def html(text: str, status: int = 200, headers: dict | None = None) -> aio.Response:
    return aio.Response(text=text, status=status, content_type="text/html", charset="utf-8", headers=headers)


def redirect(location: str, status: int = 302, headers: dict | None = None) -> aio.Response:
    return aio.Response(status=status, headers={"Location": location, **(headers or {})})


class CloakingWeb:
    def __init__(self, web: LocalWeb):
        self.web = web
        self.visits: list[Visit] = []
        self.cases: list[Case] = []
        self._counts: dict[tuple[str, str], int] = {}

    def visits_to(self, host: str) -> list[Visit]:
        return [v for v in self.visits if v.host == host]

    def url(self, host: str, path: str = "/") -> str:
        return self.web.url(host, path)

    def route(self, host: str, path: str, answer: Callable[[aio.Request, int], aio.StreamResponse]) -> str:
        """`answer(request, n)` answers host+path (any query); n: how many GETs of it so far, this one in."""
        async def handler(request: aio.Request) -> aio.StreamResponse:
            self.visits.append(Visit(host, request.path_qs, request.headers.get("User-Agent", ""), by_ua(request, 0),
                                     dict(request.headers)))
            self._counts[host, path] = self._counts.get((host, path), 0) + (request.method == "GET")
            return answer(request, self._counts[host, path])
        return self.web.route(host, path, handler)

    def static(self, host: str, path: str, text: str, headers: dict | None = None) -> str:
        return self.route(host, path, lambda r, n: html(text, headers=headers))

    def img(self, where: str, color: tuple[int, int, int] = (40, 90, 160)) -> str:
        """A real image at `where` ("host/path", any query): a JPEG for .jpg, else a PNG; its URL."""
        host, path = where.split("/", 1)
        kind = "JPEG" if path.endswith(".jpg") else "PNG"
        data = picture(kind, color)

        async def handler(request):
            return aio.Response(body=data, content_type=f"image/{kind.lower()}")
        self.web.route(host, "/" + path, handler)
        return self.url(host, "/" + path)

    def card(self, host: str, path: str, title: str, description: str, **kw) -> str:
        """An article page of host+path's site, with an image on its cdn. unless given."""
        site = host.split(".", 1)[1] if host.startswith(("www.", "m.")) else host
        kw.setdefault("image", self.img(f"cdn.{site}{path.rstrip('/')}.png"))
        kw.setdefault("site_name", site.split(".")[0].replace("-", " ").title())
        return page(title, description, **kw)

    def scam(self, host: str) -> str:
        return self.static(host, "/go", page("Confirm your details to continue",
                                             "Act within 24 hours to keep your account open.", site_name="Security"))

    def two_faced(self, host: str, path: str, crawler: str, browser: str, who=by_ua, headers=None) -> str:
        """host+path answers `browser` to whom `who` says is a person, `crawler` to the rest."""
        return self.route(host, path, lambda r, n: html(browser if who(r, n) else crawler, headers=headers))

    def add(self, name: str, url: str, cloaked: bool, technique: str, differences=(), browser_host="") -> None:
        assert bool(cloaked) == bool(differences), name
        self.cases.append(Case(name, url, cloaked, frozenset(differences), technique, browser_host))

    def build(self) -> list[Case]:
        for part in (self._elsewhere, self._other_cards, self._special_cloaks, self._near_misses, self._articles):
            part()
        assert len({c.name for c in self.cases}) == len({c.url for c in self.cases}) == len(self.cases)
        hosts = [{urlsplit(c.url).hostname for c in self.cases if c.cloaked == side} for side in (True, False)]
        assert not hosts[0] & hosts[1], hosts[0] & hosts[1]
        return list(self.cases)

    def _elsewhere(self) -> None:
        says = {by_ua: "User-Agent: browsers get", by_sec_fetch: "Sec-Fetch-Mode: navigate gets", by_accept: "a "
                "browser's Accept gets", by_visit: "every visit but the first gets", None: "everyone gets", by_click:
                "Sec-Fetch-Dest: document, Sec-Fetch-User: ?1 get"}
        goes = {"302": "a 302", "meta": "a card-less meta refresh", "header": "a Refresh header", "href": "a card-less "
                "page with a location.href script", "card+meta": "a meta refresh on the card page", "card+replace":
                "location.replace() in the card page", "card+assign": "location.assign() in the card page"}
        for name, host, path, who, how, to in [
            ("ua_302_phishing", "www.daily-courier.test", "/2026/05/markets", by_ua, "302", "secure-login-verify.test"),
            ("sec_fetch_redirect", "www.travel-notes.test", "/lisbon", by_sec_fetch, "302", "cheap-flights-win.test"),
            ("accept_redirect", "www.weather-now.test", "/oslo", by_accept, "302", "update-your-browser.test"),
            ("nth_visit", "www.city-gazette.test", "/council/vote", by_visit, "302", "crypto-double.test"),
            ("meta_refresh_browsers_only", "www.science-news.test", "/mars", by_ua, "meta", "mars-giveaway.test"),
            ("script_href_browsers_only", "www.football-live.test", "/m/412", by_ua, "href", "stream-free-hd.test"),
            ("refresh_header_browsers_only", "www.dev-blog.test", "/v2", by_ua, "header", "fake-download.test"),
            ("sec_fetch_user_refresh", "www.arts-review.test", "/museum", by_click, "meta", "lottery-notice.test"),
            ("meta_refresh_on_card", "www.holiday-homes.test", "/villa-17", None, "card+meta", "deposit-pay.test"),
            ("script_replace_always", "www.job-board.test", "/offer/88", None, "card+replace", "job-fee-pay.test"),
            ("script_assign_always", "www.photo-contest.test", "/entry/5", None, "card+assign", "vote-verify.test")]:
            self.add(name, self.cloak_away(host, path, who, how, to), True,
                     f"{says[who]} {goes[how]} to another registrable domain", ("final_domain",), to)

    def cloak_away(self, host: str, path: str, who, how: str, to: str) -> str:
        scam = self.scam(to)
        extra = {"card+meta": {"head": meta_refresh(scam)},
                 "card+replace": {"body": f'<script>window.location.replace("{scam}");</script>'},
                 "card+assign": {"head": "<script>var started = Date.now();\nif (window.top) { started += 1; }\n"
                                         f"location.assign('{scam}');</script>"}}.get(how, {})
        card = self.card(host, path, f"News from {host.split('.')[1]}: the week in review",
                         "What happened this week, and what comes next.", **extra)
        away = {"302": lambda: redirect(scam), "meta": lambda: html(bare(meta_refresh(scam))),
                "href": lambda: html(bare(body=f'<script>location.href = "{scam}";</script>')),
                "header": lambda: html(bare(), headers={"Refresh": f"0; url={scam}"})}.get(how)
        return self.route(host, path, lambda r, n: away() if away and who(r, n) else html(card))

    def _other_cards(self) -> None:
        scam_img = self.img("cdn.promo-deals.test/casino.png", (200, 30, 30))
        for name, host, crawler, browser, headers, differences in [
            ("ua_title", "www.gadgetzone.test", ("Phone X review",), ("You won a free Phone X!",), None, ("title",)),
            ("ua_image", "www.petfriends.test", (), ("", "", scam_img), None, ("image",)),
            ("ua_description", "www.recipehub.test", (), ("", "Earn 5000 a week from home."), None, ("description",)),
            ("ua_whole_card", "www.globe-wire.test", (), ("Celebrity reveals bitcoin secret", "Banks tried to ban it.",
                                                          scam_img), None, ("title", "description", "image")),
            ("upgrade_insecure_card", "www.garden-weekly.test", (), ("Miracle pill melts fat overnight",
             "Doctors hate this simple cure."), None, ("title", "description")),
            ("vary_ua_title", "www.music-charts.test", (), ("Free tickets now",), {"Vary": "User-Agent"}, ("title",))]:
            who = by_upgrade if name.startswith("upgrade") else by_ua
            technique = (f"{'Upgrade-Insecure-Requests: 1' if who is by_upgrade else 'User-Agent'}: another "
                         f"{', '.join(differences)} for browsers" + (", with Vary: User-Agent" if headers else ""))
            path = f"/story/{name}"
            first = ("Leaders meet for the climate summit", "Delegates from forty countries gathered in Oslo.",
                     self.img(f"cdn.{host[4:]}/photo.png"))
            first = tuple(c or f for c, f in zip(crawler + ("", "", ""), first))
            second = tuple(b or f for b, f in zip(browser + ("", "", ""), first))
            url = self.two_faced(host, path, self.card(host, path, *first[:2], image=first[2]),
                                 self.card(host, path, *second[:2], image=second[2]), who, headers)
            self.add(name, url, True, technique, differences)

    def _special_cloaks(self) -> None:
        u = self.url
        # A cookie set on a first 302; when it comes back (a browser keeps it), a 302 elsewhere.
        gift, sale = self.scam("giftcard-claim.test"), self.card("www.shop-outlet.test", "/sale", "Spring sale", "")
        self.route("www.shop-outlet.test", "/sale/go",
                   lambda r, n: redirect(gift) if r.cookies.get("sid") == "7f3a" else html(sale))
        url = self.route("www.shop-outlet.test", "/sale", lambda r, n: redirect(
            u("www.shop-outlet.test", "/sale/go?from=sale"), headers={"Set-Cookie": "sid=7f3a; Path=/"}))
        self.add("cookie_gate", url, True, "a cookie set on a 302 and sent back (by a browser) gets a 302 to another "
                 "registrable domain", ("final_domain",), "giftcard-claim.test")
        # A shortener whose target depends on who asks.
        pills = self.scam("miracle-pills.test")
        vitamins = self.static("www.health-journal.test", "/vitamin-d", self.card(
            "www.health-journal.test", "/vitamin-d", "Vitamin D in winter", "What the latest trials say."))
        url = self.route("tiny-go.test", "/x9Q", lambda r, n: redirect(pills if by_ua(r, n) else vitamins, 301))
        self.add("shortener_by_asker", url, True, "a shortener (tiny-go.test) sends crawlers to an article, browsers "
                 "to a scam", ("final_domain",), "miracle-pills.test")
        # A shortener (the same for all) to a page that cloaks by User-Agent: triggered mode's case.
        target = self.cloak_away("www.charity-news.test", "/appeal", by_ua, "302", "donate-verify.test")
        self.add("shortener_to_ua_cloak", self.route("go-link.test", "/k3", lambda r, n: redirect(target, 301)),
                 True, "a shortener to a page that 302s browsers (by User-Agent) to another registrable domain",
                 ("final_domain",), "donate-verify.test")
        # A chain through a tracker domain only browsers pass through; the same final domain.
        deal = u("www.bookshop-corner.test", "/deal/42")
        deal_page = self.card("www.bookshop-corner.test", "/deal/42", "Classic novels, forty per cent off", "")
        self.route("click-tracker.test", "/t", lambda r, n: redirect(r.query.get("u", deal)))
        back = u("click-tracker.test", "/t?u=" + quote(deal + "?ref=trk", safe=""))
        url = self.route("www.bookshop-corner.test", "/deal/42", lambda r, n: html(deal_page)
                         if is_bot(r) or r.query.get("ref") == "trk" else redirect(back))
        self.add("tracker_chain", url, True, "browsers only pass through a tracker domain (the same final domain)",
                 ("redirects",), "www.bookshop-corner.test")
        # Status: 200 for the crawler, 451 or 404 for browsers.
        gone = "<!DOCTYPE html><html><head><title>Unavailable</title></head><body>Unavailable.</body></html>"
        for status, host in ((451, "www.world-report.test"), (404, "www.fan-club.test")):
            text = self.card(host, "/leak", "Leaked memo shows budget cuts", "The memo lists three departments.")
            url = self.route(host, "/leak", lambda r, n, text=text, status=status:
                             html(text) if is_bot(r) else html(gone, status))
            self.add(f"status_{status}", url, True, f"status: 200 for crawlers, {status} for browsers", ("status",))
        # A card claiming a bank's domain (both looks agree): og:url, og:site_name, canonical URL.
        bank = "http://www.mybank.test/account"
        for name, host, claim in [("og_url_claim", "secure-mybank-login.test", {"og_url": bank}),
                                  ("site_name_claim", "www.account-update.test", {"site_name": "mybank.test"}),
                                  ("canonical_claim", "www.resolution-desk.test", {"canonical": bank})]:
            url = self.static(host, "/verify", self.card(host, "/verify", "MyBank: verify your account",
                                                         "Confirm your details to avoid suspension.", **claim))
            self.add(name, url, True, f"the card's {', '.join(claim)} ({', '.join(claim.values())}) claims another "
                     "registrable domain; both looks agree", ("claimed_domain",))

    def _near_misses(self) -> None:
        u = self.url
        for name, host, to_host, to_path, technique in [    # within the registrable domain, browsers only
            ("mobile_redirect", "www.metro-times.test", "m.metro-times.test", "/tram", "www. -> m."),
            ("desktop_redirect", "m.river-post.test", "www.river-post.test", "/tram", "m. -> www. (desktop)"),
            ("locale_redirect", "www.alpine-guide.test", "www.alpine-guide.test", "/en/tram", "/x -> /en/x")]:
            text = self.card(host, "/tram", "New tram line opens", "It links the station and the university.",
                             og_url=u(host, "/tram"))
            self.static(to_host, to_path, text)
            url = self.route(host, "/tram", lambda r, n, to=u(to_host, to_path), text=text:
                             redirect(to) if by_ua(r, n) else html(text))
            self.add(name, url, False, f"browsers redirected {technique} within the registrable domain")
        # Consent hops that bring the browser back: a cookie, or a marker (as Yahoo's guccounter).
        for name, host, consent, everyone, technique in [
            ("consent_same_host", "www.town-events.test", "www.town-events.test/consent", False, "/consent, same host"),
            ("consent_subdomain", "www.island-herald.test", "consent.island-herald.test/c", False, "consent.<site>"),
            ("consent_everyone", "www.village-voice.test", "consent.village-voice.test/v2", True, "everyone, consent."),
            ("consent_other_domain", "www.vidtube.test", "consent.vidgroup.test/m", False, "consent.<other site>")]:
            here = u(host, "/news")
            text = self.card(host, "/news", "Quiz night at the library", "Teams of four, every second Thursday.")
            c_host, c_path = consent.split("/", 1)
            domain = f"; Domain={host[4:]}" if c_host.endswith(host[4:]) else ""    # none for another site
            self.route(c_host, "/" + c_path, lambda r, n, here=here, domain=domain: redirect(
                r.query.get("continue", here), headers={"Set-Cookie": f"cc=yes; Path=/{domain}"}))
            marker = "?guccounter=1" if c_host != host else ""     # back with a marker, where a cookie may not do
            back = u(c_host, f"/{c_path}?continue=" + quote(here + marker, safe=""))
            url = self.route(host, "/news", lambda r, n, text=text, back=back, everyone=everyone: html(text)
                             if (is_bot(r) and not everyone) or r.cookies.get("cc") == "yes" or "guccounter" in r.query
                             else redirect(back))
            self.add(name, url, False, f"consent hop ({technique}) that sets a cookie and brings the browser back")
        # The same card, written or served otherwise per User-Agent.
        i = self.img
        for name, host, crawler, browser, headers, technique in [
            ("vary_ua_same_card", "www.tech-daily.test", {"body": "<nav>Menu</nav>"}, {"body": "<nav>Desktop</nav>"},
             {"Vary": "User-Agent, Accept-Encoding"}, "Vary: User-Agent, another layout, the same card"),
            ("image_size_query", "www.food-magazine.test", {"image": i("img.food-magazine.test/tart.png") + "?w=1200"},
             {"image": i("img.food-magazine.test/tart.png") + "?w=600&v=3"}, None, "og:image ?w=1200 vs ?w=600&v=3"),
            ("image_size_suffix", "www.cycling-today.test", {"image": i("www.cycling-today.test/up/col.jpg")},
             {"image": i("www.cycling-today.test/up/col-300x200.jpg")}, None, "og:image col.jpg vs col-300x200.jpg"),
            ("image_cdn_shard_and_size", "www.birdwatch.test", {"image": i("i0.pixcdn.test/w_1200,h_630/heron.png")},
             {"image": i("i2.pixcdn.test/w_600,h_315/heron.png")}, None, "og:image on i0./i2. of a CDN, other sizes"),
            ("image_relative_vs_absolute", "www.model-trains.test", {"image": "/img/loco.png"},
             {"image": i("www.model-trains.test/img/loco.png")}, None, "og:image relative vs absolute: the same URL"),
            ("sec_fetch_markup", "www.science-kids.test", {}, {"head": '<script src="/stats.js" async></script>'},
             None, "browsers get an analytics script, the same card"),
            ("title_entities_spaces", "www.kitchen-table.test", {"title": "Salt & Pepper", "description":
             "Two  seasonings,   one table."}, {"title": "Salt &#38; Pepper"}, None,
             "the same title and description with other entities and white space")]:
            looks = [self.card(host, "/s", **{"title": "Salt and Pepper", "description": "Two seasonings, one table.",
                                              **kw}).replace("&amp;#38;", "&#38;") for kw in (crawler, browser)]
            self.add(name, self.two_faced(host, "/s", *looks, headers=headers), False, technique)
        # Pages that change a digit run per visit: a reader counter, a date and time.
        for name, host, answer, technique in [
            ("counter_in_headline", "www.storm-live.test", lambda n: (f"Live: {1040 + 7 * n} readers follow the storm",
             f"{12 + n} updates so far."), "a reader counter in the title and description changes every visit"),
            ("date_in_description", "www.market-daily.test", lambda n: ("Oil prices steady", f"Updated 2026-05-"
             f"{10 + n:02d} 09:{n * 7 % 60:02d} UTC: Brent at 81."), "the description's date changes every visit")]:
            image, site = self.img(f"cdn.{host[4:]}/live.png"), host[4:]
            url = self.route(host, "/live", lambda r, n, answer=answer, image=image, site=site: html(
                page(*answer(n), image=image, site_name=site)))
            self.add(name, url, False, technique)
        # Static pages with something that looks like a hop or a claim, and is none.
        flour = "http://flour-shop.test/buy"
        for name, host, kw, technique in [
            ("script_reads_location", "www.code-corner.test", {"body": "<script>var here = window.location.href;\n"
             'if (location.href.indexOf("debug") > 0) { console.log(here, location.hostname); }</script>'},
             "an inline script only reads location.href and location.hostname"),
            ("script_click_handler", "www.recipe-box.test", {"body": '<button id="b">Buy</button><script>document.'
             'getElementById("b").addEventListener("click", function () {\n  location.href = "' + flour + '";\n'
             "});</script>"}, "location.href = literal inside a click handler (not run on load)"),
            ("script_in_function", "www.astro-notes.test", {"body": "<script>function leave() { window.location."
             f'replace("{flour}"); }}\nvar go = function () {{ location.assign("{flour}"); }};</script>'
             f"<a href=\"#\" onclick=\"location.href='{flour}'\">Shop</a>"},
             "location.replace/assign in functions nothing calls, and in an onclick attribute"),
            ("brand_site_name", "newsroom.boa-community.test", {"site_name": "Bank of America"},
             "og:site_name is a brand (Bank of America): it claims no domain"),
            ("same_site_og_url_canonical", "m.lake-gazette.test", {"og_url": "http://www.lake-gazette.test/swans",
             "canonical": "http://www.lake-gazette.test/swans"}, "og:url and canonical on www. of the same site"),
            ("self_refresh", "www.election-live.test", {"head": '<meta http-equiv="refresh" content="300">'},
             "a meta refresh with no URL (the page reloads itself)"),
            ("jsonld_location", "www.concert-hall.test", {"head": '<script type="application/ld+json">{"@type": '
             '"Event", "location": {"url": "http://tickets.test/hall"}, "url": "http://tickets.test/s"}</script>'},
             'JSON-LD naming a "location" and URLs on another domain'),
            ("vary_cookie_same_card", "www.hill-walks.test", {}, "Vary: Cookie and a session cookie, the same card")]:
            headers = {"Vary": "Cookie", "Set-Cookie": "session=s1; Path=/"} if "cookie" in name else None
            url = self.static(host, "/p", self.card(host, "/p", "Swans return to the lake", "Twelve pairs nest.", **kw),
                              headers)
            self.add(name, url, False, technique)
        # Redirects that are the same for everyone, or whose cookie changes nothing; a same-site refresh.
        for name, first, last, status, cookie, technique in [
            ("same_site_redirect", "harbour-news.test/old", "www.harbour-news.test/2026/boats", 301, "",
             "a 301 to www. of the same site, for everyone"),
            ("honest_shortener", "lnk-short.test/b33", "www.open-science.test/bees", 301, "",
             "a shortener on another domain, the same target for everyone"),
            ("cookie_on_redirect", "www.film-reviews.test/r/x", "www.film-reviews.test/lighthouse", 302,
             "visitor=v1; Path=/", "a 302 sets a visitor cookie; the page is the same with or without it"),
            ("refresh_same_site", "www.garden-centre.test/go/ferns", "www.garden-centre.test/ferns", 0, "",
             "a card-less page with a meta refresh within the site, for everyone")]:
            (h1, p1), (h2, p2) = (f"/{w}".split("/", 2)[1:] for w in (first, last))
            target = self.static(h2, f"/{p2}", self.card(h2, f"/{p2}", "Fishing boats return early", "High winds."))
            self.add(name, self.route(h1, f"/{p1}", lambda r, n, t=target, s=status, c=cookie: redirect(
                t, s, {"Set-Cookie": c} if c else None) if s else html(bare(meta_refresh(t)))), False, technique)

    def _articles(self) -> None:
        sites = ["www.northern-echo.test", "www.valley-times.test", "blog.quiet-reader.test", "www.sport-daily.test",
                 "www.home-garden.test", "docs.tool-makers.test", "www.history-mag.test", "www.local-radio.test"]
        for i, title in enumerate(" | ".join([
                "Library extends opening hours | New cycle lanes on the high street | School wins robotics prize",
                "How to repot an orchid | Review: a small hatchback | The oldest pub in town | Bakery opens",
                "Marathon route announced | A guide to winter tyres | Hospital gets a new scanner",
                "Five walks under five miles | Getting started with the CLI | Castle restoration finished",
                "Choir seeks new tenors | Farmers market moves indoors | A short history of the canal",
                "Cup final tickets on sale | Painting a small room | Release notes for version 4",
                "Radio play competition | The tide tables explained | Knitting circle turns ten",
                "Allotment waiting list shrinks | Meet the new head teacher"]).split(" | ")):
            host, path = sites[i % len(sites)], f"/a/{i:02d}-{'-'.join(title.lower().split()[:3])}"
            description = f"{title}: what happened, who it affects, and what comes next ({i + 2} min read)."
            image = self.img(f"{host}/pics/{i:02d}.png", (i * 9 % 255, 120, 200 - i * 5))
            kw = [{"image": image, "og_url": self.url(host, path)}, {"image": image, "canonical": self.url(host, path)},
                  {"og": False}, {"image": f"/pics/{i:02d}.png", "site_name": ""}][i % 4]
            self.add(f"article_{i:02d}", self.static(host, path, self.card(host, path, title, description, **kw)),
                     False, "a plain static article" + ("" if kw.get("og", True) else ", no og: tags"))


def build(web: LocalWeb) -> list[Case]:
    """The cases on `web` (started), without keeping the CloakingWeb (its visits)."""
    return CloakingWeb(web).build()
