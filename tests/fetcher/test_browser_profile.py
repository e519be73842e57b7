"""FetchRequest.profile "browser" and .cookie (issue 43's second look, as a person's browser): the
hop goes out with fetcher.browser_user_agent and the headers Chrome sends on a navigation from a
link on another site, and the given Cookie; and it is in all else the crawler's page hop: robots.txt
read and obeyed for our crawler's token, the address guard, the caps, rendering. Over gRPC the
profile and cookie arrive; an unknown profile or a cookie that could split the header is
INVALID_ARGUMENT, and nothing is sent. Real origins on loopback (tests/support/localweb.py)."""
from __future__ import annotations

import grpc
import pytest
from aiohttp import web
from prometheus_client import REGISTRY

from spiderduck.core import config
from spiderduck.core.errors import ConfigError, FetcherUnavailable
from spiderduck.core.status import Status
from spiderduck.fetcher import browser_profile, server
from spiderduck.fetcher.browser_profile import BROWSER, BROWSER_ACCEPT, MAX_COOKIE_CHARS
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.ownership import AllShards
from spiderduck.fetcher.render.renderer import Rendered
from spiderduck.rpc.server import REQUEST_HEADROOM, GrpcServer
from spiderduck.scheduler.fetcher_client import FetcherClient, GrpcTransport, hop_backoff
from spiderduck.scheduler.routing import StaticRouter
from spiderduck.cli.nats_server import free_port
from spiderduck.v1 import fetcher_pb2 as pb, fetcher_pb2_grpc
from spiderduck.wire.record_limits import MAX_URL_CHARS
from support.fetcher_grpc import served
from support.fetcher_settings import local_settings as settings

CHROME = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/143.0.0.0 Safari/537.36")
BROWSER_ONLY = ("sec-fetch-dest", "sec-fetch-mode", "sec-fetch-site", "sec-fetch-user",
                "upgrade-insecure-requests", "sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform", "cookie")
COOKIE = "session=abc123; consent=yes"


class Origin:
    """A site recording every request's headers (lower-cased names), by path."""

    def __init__(self, localweb, host: str, robots: str = "User-agent: *\nAllow: /\n",
                 body: str = "<title>t</title>"):
        self.seen: list[tuple[str, dict[str, str]]] = []

        async def answer(request):
            self.seen.append((request.path, {k.lower(): v for k, v in request.headers.items()}))
            if request.path == "/robots.txt":
                return web.Response(text=robots, content_type="text/plain")
            return web.Response(text=body, content_type="text/html")
        self.robots_url = localweb.route(host, "/robots.txt", answer)
        self.url = localweb.route(host, "/page", answer)

    def headers(self, path: str) -> list[dict[str, str]]:
        return [headers for seen, headers in self.seen if seen == path]


def requests_counted(purpose: str) -> float:
    return REGISTRY.get_sample_value("spiderduck_fetcher_requests_total",
                                     {"status": "OK", "purpose": purpose, "http": "2xx"}) or 0.0


# --- (a) what goes out -----------------------------------------------------------------------

async def test_a_browser_fetch_sends_a_browsers_navigation_headers_and_the_crawler_none(localweb):
    origin = Origin(localweb, "look.test")
    honesty_before = requests_counted("honesty")
    async with Fetcher(settings(), ownership=AllShards()) as f:
        crawler = await f.fetch(origin.url, purpose="page")
        browser = await f.fetch(origin.url, purpose="page", profile=BROWSER, cookie=COOKIE)
    assert (crawler.status, crawler.http_status) == (browser.status, browser.http_status) == (Status.OK, 200)
    ours, theirs = origin.headers("/page")
    assert ours["user-agent"] == f.settings.user_agent and ours["user-agent"].startswith("SpiderDuck/")
    assert ours["accept"] != BROWSER_ACCEPT and ours["accept-language"] == "en-US,en;q=0.9"
    assert [name for name in BROWSER_ONLY if name in ours] == []
    assert theirs["user-agent"] == CHROME == f.settings.browser_user_agent
    assert theirs["accept"] == BROWSER_ACCEPT
    assert theirs["accept-language"] == "en-US,en;q=0.9"
    assert (theirs["sec-fetch-dest"], theirs["sec-fetch-mode"], theirs["sec-fetch-site"],
            theirs["sec-fetch-user"]) == ("document", "navigate", "cross-site", "?1")
    assert theirs["upgrade-insecure-requests"] == "1"
    assert theirs["cookie"] == COOKIE
    assert theirs["sec-ch-ua"] == '"Google Chrome";v="143", "Chromium";v="143", "Not A(Brand";v="24"'
    assert (theirs["sec-ch-ua-mobile"], theirs["sec-ch-ua-platform"]) == ("?0", '"Windows"')
    # robots.txt was read once, by our crawler; the browser's hop is counted apart.
    [robots] = origin.headers("/robots.txt")
    assert robots["user-agent"] == f.settings.user_agent and "cookie" not in robots
    assert requests_counted("honesty") == honesty_before + 1


async def test_the_client_hints_follow_the_user_agents_chrome_version_and_are_none_for_another_browser(localweb):
    origin = Origin(localweb, "hints.test")
    firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"
    chrome_120 = CHROME.replace("143", "120")
    for agent in (chrome_120, firefox):
        async with Fetcher(settings(**{"fetcher.browser_user_agent": agent, "fetcher.accept_language": ""}),
                           ownership=AllShards()) as f:
            await f.fetch(origin.url, profile=BROWSER)
    old, other = origin.headers("/page")
    assert old["user-agent"] == chrome_120
    assert old["sec-ch-ua"] == '"Not_A Brand";v="8", "Chromium";v="120", "Google Chrome";v="120"'
    assert other["user-agent"] == firefox and other["sec-fetch-mode"] == "navigate"
    assert [name for name in other if name.startswith("sec-ch-")] == []
    assert "accept-language" not in old and "accept-language" not in other     # '' sends none
    assert "cookie" not in old                                                # none given, none sent


@pytest.mark.parametrize("cookie", ["a=1\r\nX-Injected: yes", "a=1\nb=2", "a=1\rb", "a=\x00",
                                    "a=" + "x" * (MAX_COOKIE_CHARS - 1)])
async def test_a_cookie_that_cannot_be_sent_is_refused_before_anything_is_sent(localweb, cookie):
    origin = Origin(localweb, "crumbs.test")
    async with Fetcher(settings(), ownership=AllShards()) as f:
        for profile in (BROWSER, ""):
            with pytest.raises(browser_profile.InvalidCookie) as refused:
                await f.fetch(origin.url, profile=profile, cookie=cookie)
            assert isinstance(refused.value, ValueError)
    assert localweb.hits == []


async def test_an_unknown_profile_is_refused_before_anything_is_sent(localweb):
    origin = Origin(localweb, "who.test")
    async with Fetcher(settings(), ownership=AllShards()) as f:
        for profile in ("Browser", "chrome", "crawler", " browser"):
            with pytest.raises(browser_profile.UnknownProfile) as refused:
                await f.fetch(origin.url, profile=profile)
            assert isinstance(refused.value, ValueError)
        long = "a=" + "x" * 8000            # about the longest header line an aiohttp origin reads
        answered = await f.fetch(origin.url, profile=BROWSER, cookie=long)
    assert answered.http_status == 200 and origin.headers("/page")[0]["cookie"] == long
    browser_profile.check(BROWSER, "x" * MAX_COOKIE_CHARS)     # the longest allowed is not refused


# --- (b) robots.txt is our crawler's -----------------------------------------------------------

async def test_robots_disallowing_our_crawler_refuses_the_browser_look_too(localweb):
    robots = "User-agent: SpiderDuck\nDisallow: /\n\nUser-agent: *\nAllow: /\n"
    origin = Origin(localweb, "private.test", robots=robots)
    async with Fetcher(settings(), ownership=AllShards()) as f:
        browser = await f.fetch(origin.url, purpose="page", profile=BROWSER, cookie=COOKIE)
        crawler = await f.fetch(origin.url, purpose="page")
    assert browser.status is crawler.status is Status.ROBOTS_DISALLOWED
    assert origin.headers("/page") == []                             # the page was never asked for
    [asked] = origin.headers("/robots.txt")
    assert asked["user-agent"] == f.settings.user_agent != CHROME
    assert "cookie" not in asked and "sec-fetch-mode" not in asked


async def test_robots_disallowing_a_browser_does_not_refuse_it_for_our_crawlers_sake(localweb):
    # robots.txt is obeyed for our crawler's token, never read for the browser's user agent.
    origin = Origin(localweb, "chrome-no.test", robots="User-agent: Chrome\nUser-agent: Mozilla\nDisallow: /\n")
    async with Fetcher(settings(), ownership=AllShards()) as f:
        browser = await f.fetch(origin.url, profile=BROWSER)
    assert (browser.status, browser.http_status) == (Status.OK, 200)


# --- (c) the guard -----------------------------------------------------------------------------

async def test_a_private_address_is_refused_to_the_browser_look_as_to_the_crawler(localweb):
    origin = Origin(localweb, "inside.test")
    async with Fetcher(settings(**{"fetcher.allowed_networks": []}), ownership=AllShards()) as f:
        by_name = await f.fetch(origin.url, profile=BROWSER, cookie=COOKIE)
        by_ip = await f.fetch(f"http://127.0.0.1:{localweb.port}/page", profile=BROWSER)
        crawler = await f.fetch(origin.url)
    assert by_name.status is by_ip.status is crawler.status is Status.BLOCKED_ADDRESS
    assert localweb.hits == []                            # nothing reached the origin, robots.txt included


# --- rendering: as a page hop ------------------------------------------------------------------

class FakeRenderer:
    def __init__(self):
        self.rendered: list[str] = []

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        pass

    async def render(self, url, body, headers, status):
        self.rendered.append(url)
        return Rendered(outcome="ok", html="<title>built</title>")


async def test_a_browser_look_at_a_shell_renders_as_a_page_hop_does(localweb):
    shell = ('<!doctype html><html><head><title></title></head><body><div id="root"></div>'
             '<script src="/app.js"></script></body></html>')
    origin = Origin(localweb, "shell.test", body=shell)
    renderer = FakeRenderer()
    async with Fetcher(settings(), ownership=AllShards(), renderer=renderer) as f:
        looked = await f.fetch(origin.url, purpose="page", profile=BROWSER, render=True)
        unasked = await f.fetch(origin.url, purpose="page", profile=BROWSER)
    assert (looked.render_outcome, looked.rendered) == ("ok", b"<title>built</title>")
    assert unasked.render_outcome == "" and renderer.rendered == [origin.url]


# --- (d) over gRPC -----------------------------------------------------------------------------

def router_to(address: str) -> StaticRouter:
    return StaticRouter([address], 16)


async def test_profile_and_cookie_arrive_over_grpc_and_bad_ones_are_invalid_argument(localweb):
    origin = Origin(localweb, "wire.test")
    async with Fetcher(settings(), ownership=AllShards()) as fetcher:
        grpc_server = GrpcServer("127.0.0.1:0")
        server.register(grpc_server, fetcher)
        address = grpc_server.bind()
        client = FetcherClient(router_to(address), hop_timeout=10, max_hops_per_domain=4,
                               backoff=hop_backoff(config.SchedulerSettings()), transport=GrpcTransport())
        async with grpc_server:
            try:
                looked = await client.fetch(origin.url, purpose="page", profile=BROWSER, cookie=COOKIE)
                plain = await client.fetch(origin.url, purpose="page")
                with pytest.raises(FetcherUnavailable, match="INVALID_ARGUMENT"):
                    await client.fetch(origin.url, profile="netscape")
            finally:
                await client.close()
    assert looked.url == origin.url and (looked.status, looked.http_status) == (Status.OK, 200)
    theirs, ours = origin.headers("/page")
    assert (theirs["user-agent"], theirs["cookie"], theirs["sec-fetch-site"]) == (CHROME, COOKIE, "cross-site")
    assert ours["user-agent"] == fetcher.settings.user_agent and "cookie" not in ours
    assert plain.http_status == 200


@pytest.mark.parametrize("profile, cookie", [("netscape", ""), ("BROWSER", ""), (BROWSER, "a=1\r\nX-Injected: 1"),
                                             ("", "a=1\r\nb=2"), (BROWSER, "a=\x00"),
                                             (BROWSER, "x" * (MAX_COOKIE_CHARS + 1))])
async def test_an_unknown_profile_or_a_bad_cookie_is_invalid_argument(localweb, profile, cookie):
    origin = Origin(localweb, "refused.test")
    async with Fetcher(settings(), ownership=AllShards()) as fetcher, served(fetcher) as stub:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.Fetch(pb.FetchRequest(url=origin.url, purpose="page", profile=profile, cookie=cookie),
                             timeout=10)
        assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT, refused.value.details()
        assert localweb.hits == []                          # nothing was sent, robots.txt included
        good = await stub.Fetch(pb.FetchRequest(url=origin.url, purpose="page", profile=BROWSER, cookie="a=1"),
                                timeout=10)
    assert good.http_status == 200 and origin.headers("/page")[0]["cookie"] == "a=1"


async def test_the_largest_legitimate_request_fits_the_cap_without_its_headroom(localweb):
    origin = Origin(localweb, "big.test")
    s = config.load(env={}, overrides={"fetcher.allowed_networks": ["127.0.0.0/8"],
                                       "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
                                       "fetcher.listen": f"127.0.0.1:{free_port()}"})
    longest = pb.FetchRequest(url=origin.url + "\U0001F986" * (MAX_URL_CHARS - len(origin.url)), purpose="page",
                              if_none_match='"' + "e" * 8000 + '"', if_modified_since="d" * 8000,
                              range="bytes=0-1", profile=BROWSER, cookie="\U0001F986" * MAX_COOKIE_CHARS)
    assert longest.ByteSize() <= server.FETCH_REQUEST_CAP - REQUEST_HEADROOM
    async with Fetcher(s.fetcher, ownership=AllShards()) as fetcher:
        grpc_server = server.grpc_server(s)                # the role's server, with its request caps
        server.register(grpc_server, fetcher)
        async with grpc_server, grpc.aio.insecure_channel(grpc_server.address) as channel:
            answer = await fetcher_pb2_grpc.FetcherServiceStub(channel).Fetch(longest, timeout=20)
    assert answer.status                                    # answered, whatever the origin said of it


# --- (e) fetcher.browser_user_agent ------------------------------------------------------------

def test_the_default_is_a_current_desktop_chrome():
    assert config.FetcherSettings().browser_user_agent == CHROME
    assert browser_profile.client_hints(CHROME)["sec-ch-ua-platform"] == '"Windows"'


@pytest.mark.parametrize("value", ["", "Chrome\r\nX-Injected: yes", "Chrome\n", "Chrome\tTab", "Chrómé/1",
                                   "x" * 513])
def test_a_browser_user_agent_that_is_not_one_header_value_is_refused(value):
    with pytest.raises(ConfigError, match=r"^fetcher\.browser_user_agent: .* is not a User-Agent value"):
        settings(**{"fetcher.browser_user_agent": value})


def test_a_browser_user_agent_of_512_printable_characters_is_taken():
    assert settings(**{"fetcher.browser_user_agent": "M" * 512}).browser_user_agent == "M" * 512
