"""A page's image candidates and favicon (extraction), and how the related fetches choose among
them: the first that loads and is large enough; the site's /favicon.ico when it answers."""
from __future__ import annotations

import asyncio
import io

import pytest
from PIL import Image as PILImage

from spiderduck.core.errors import DomainBusy
from spiderduck.core.fetch import FetchResult
from spiderduck.core.record import Image, PageMetadata, UrlRecord
from spiderduck.core.status import Status
from spiderduck.extract import extract_page, images, media
from spiderduck.extract.parsers import parse
from spiderduck.scheduler.stages.related import RelatedFetcher
from spiderduck.scheduler.task import CrawlTask, Outcome, Resolution
from support.extraction import EXTRACTION, ROBOTS_TOKEN

URL = "https://example.test/news/story.html"


def page(head: str = "", body: str = "", parser: str = "selectolax") -> PageMetadata:
    html = f"<!doctype html><html><head><meta charset=utf-8>{head}</head><body>{body}</body></html>"
    return extract_page(html.encode("utf-8"), URL, "text/html", parser=parser, robots_token=ROBOTS_TOKEN)


def urls_of(meta: PageMetadata) -> list[str]:
    return [image.url.removeprefix("https://example.test") for image in meta.image_candidates]


@pytest.fixture(params=("selectolax", "html5lib"))
def parser(request):
    return request.param


# --- candidates -------------------------------------------------------------------------------

def test_every_source_in_order_with_stated_sizes(parser):
    head = ('<meta property="og:image" content="/og1.jpg"><meta property="og:image:width" content="1200">'
            '<meta property="og:image:height" content="630"><meta property="og:image:type" content="image/jpeg">'
            '<meta property="og:image" content="/og2.jpg">'
            '<meta name="twitter:image" content="/tw.jpg"><meta name="twitter:image:src" content="/twsrc.jpg">'
            '<script type="application/ld+json">{"@type": "Article", "image": ["/ld1.jpg", '
            '{"@type": "ImageObject", "url": "/ld2.jpg", "width": 800, "height": "450px"}]}</script>'
            '<link rel="image_src" href="/link.jpg">')
    body = ('<img src="/first.jpg"><img src="/wide.jpg" width="300" height="100">'
            '<img src="/big.jpg" width="640" height="480">')
    meta = page(head, body, parser)
    assert urls_of(meta) == ["/og1.jpg", "/og2.jpg", "/tw.jpg", "/twsrc.jpg", "/ld1.jpg", "/ld2.jpg",
                             "/link.jpg", "/big.jpg"]                         # capped at 8
    assert meta.image_candidates[0] == meta.image == Image("https://example.test/og1.jpg", 1200, 630, "image/jpeg")
    assert meta.image_candidates[5] == Image("https://example.test/ld2.jpg", 800, 450)


def test_body_images_with_a_stated_size_come_largest_first_then_the_others_then_a_poster(parser):
    body = ('<img src="/logo.png"><img src="/wide.jpg" width="300" height="100">'
            '<img src="/fluid.jpg" width="100%" height="auto"><img src="/big.jpg" width="640" height="480">'
            '<video poster="/poster.jpg"></video>')
    meta = page("", body, parser)
    assert urls_of(meta) == ["/big.jpg", "/wide.jpg", "/logo.png", "/fluid.jpg", "/poster.jpg"]
    assert meta.image == Image("https://example.test/big.jpg", 640, 480)
    assert meta.image_candidates[3] == Image("https://example.test/fluid.jpg")   # a relative size is none


def test_body_images_one_stated_size_counts_and_urls_past_the_cap_are_not_resolved(parser, monkeypatch):
    body = ('<img src="/short.jpg" height="5"><img src="/narrow.jpg" width="20%"><img src="/tall.jpg" height="900">'
            '<img src="/a.jpg" width="200" height="200"><img src="/b.jpg" width="400" height="300">'
            + "".join(f'<img src="/more{n}.jpg">' for n in range(10)))
    resolved = []
    absolute_url = media.values.absolute_url
    monkeypatch.setattr(media.values, "absolute_url", lambda ref, base: resolved.append(ref) or absolute_url(ref, base))
    meta = page("", body, parser)
    # A height alone under the minimum leaves an image out; a height alone is no stated size to rank by.
    assert urls_of(meta) == ["/b.jpg", "/a.jpg", "/narrow.jpg", "/tall.jpg", "/more0.jpg", "/more1.jpg",
                             "/more2.jpg", "/more3.jpg"]
    assert meta.image_candidates[3] == Image("https://example.test/tall.jpg", 0, 900)
    assert "/more4.jpg" not in resolved and "/more9.jpg" not in resolved   # the cap was reached before them
    assert resolved.count("/b.jpg") == 1


def test_each_url_once_as_first_named(parser):
    head = ('<meta property="og:image" content="/a.jpg"><meta property="og:image:width" content="900">'
            '<meta name="twitter:image" content="https://example.test/a.jpg">'
            '<meta name="twitter:image:src" content="/b.jpg"><link rel="image_src" href="/b.jpg">')
    meta = page(head, '<img src="/a.jpg" width="10" height="10">', parser)
    assert meta.image_candidates == (Image("https://example.test/a.jpg", 900), Image("https://example.test/b.jpg"))


def test_tiny_images_tracking_pixels_and_non_images_are_left_out(parser):
    head = ('<meta property="og:image" content="/spy.png"><meta property="og:image:width" content="1">'
            '<meta property="og:image:height" content="1">'
            '<meta property="og:image" content="/thin.png"><meta property="og:image:width" content="600">'
            '<meta property="og:image:height" content="20">'
            '<meta property="og:image" content="/clip.mp4">'
            '<meta name="twitter:image" content="https://www.facebook.com/tr?id=1&amp;ev=PageView">'
            '<meta name="twitter:image:src" content="/t/pixel.gif?u=1">'
            '<meta name="image" content="https://metrics.example.test/b/ss/suite/1/x">')
    body = ('<img src="/img/1x1.gif"><img src="/img/tracking_pixel.png"><img src="/icon.png" width="16" height="16">'
            '<img src="/pixelated-art.png"><img src="/story.jpg">')
    meta = page(head, body, parser)
    assert urls_of(meta) == ["/pixelated-art.png", "/story.jpg"]
    assert meta.image == Image("https://example.test/pixelated-art.png")
    # A URL left out for its stated size stays out when named again without one.
    again = page('<meta property="og:image" content="/s.png"><meta property="og:image:width" content="20">'
                 '<meta name="twitter:image" content="/s.png">', parser=parser)
    assert again.image is None and again.image_candidates == ()


@pytest.mark.parametrize("url", [
    "https://x.test/t/pixel.gif?u=1", "https://x.test/img/1X1.PNG", "https://WWW.facebook.com/tr?id=1",
    "https://m.test/b/ss/suite/1", "https://x.test/a/tracking_pixel.png#x", "https://x.test/pixelated-art.png",
    "https://x.test/blank.gif.jpg", "https://facebook.com/trx", "https://x.test/story.jpg",
    "https://x.test/p\u0131xel.gif", "https://x.test/\u212a/blan\u212a.gif", "https://x.test/\u017fpacer.png",
])
def test_the_tracking_pixel_test_is_the_patterns(url):
    assert media._is_pixel(url) == (media._PIXEL.search(url) is not None)


def test_json_ld_images_every_entry_and_thumbnail(parser):
    head = ('<script type="application/ld+json">{"@context": "https://schema.org", "@graph": ['
            '{"@type": "ImageObject", "@id": "#primary", "contentUrl": "/primary.jpg", "width": {"value": 1600},'
            ' "height": 900.0},'
            '{"@type": "NewsArticle", "image": [{"@id": "#primary"}, "/square.jpg", {"url": "/tiny.jpg", "width": 8}],'
            ' "thumbnailUrl": "/thumb.jpg"}]}</script>')
    meta = page(head, parser=parser)
    assert meta.image_candidates == (Image("https://example.test/primary.jpg", 1600, 900),
                                     Image("https://example.test/square.jpg"),
                                     Image("https://example.test/thumb.jpg"))


def test_no_image_at_all(parser):
    meta = page("<title>t</title>", "<p>text</p>", parser)
    assert meta.image is None and meta.image_candidates == ()


def test_both_parsers_record_img_sizes_alike():
    html = ('<html><body><img src="/a.jpg" width=" 640 " height="480"><img src="/b.jpg" width>'
            '<img src="/c.jpg" aria-hidden="true" width="900" height="900"><p><img src=/d.jpg height=5></p>'
            + "".join(f'<img src="/{n}.png" width="{n}" height="{n}">' for n in range(20)) + "</body></html>")
    fast, reference = parse(html, "selectolax"), parse(html, "html5lib")
    assert fast == reference
    assert [(i.src, i.width, i.height) for i in fast.images[:3]] == [
        ("/a.jpg", "640", "480"), ("/b.jpg", "", ""), ("/d.jpg", "", "5")]


# --- favicon ----------------------------------------------------------------------------------

@pytest.mark.parametrize("links, expected", [
    # no sizes anywhere: an icon before a touch icon (as before)
    ('<link rel="apple-touch-icon" href="/touch.png"><link rel="shortcut icon" href="/favicon.ico">', "/favicon.ico"),
    # a size that suits a preview first, whatever the kind
    ('<link rel="icon" href="/16.png" sizes="16x16"><link rel="icon" href="/32.png" sizes="32x32">', "/32.png"),
    ('<link rel="icon" href="/plain.ico"><link rel="apple-touch-icon" sizes="180x180" href="/180.png">', "/180.png"),
    ('<link rel="icon" href="/512.png" sizes="512x512"><link rel="icon" href="/any.ico">', "/any.ico"),
    ('<link rel="icon" href="/16.png" sizes="16x16"><link rel="icon" type="image/svg+xml" sizes="any" '
     'href="/icon.svg">', "/icon.svg"),
    ('<link rel="apple-touch-icon-precomposed" href="/pre.png"><link rel="apple-touch-icon" href="/touch.png">',
     "/touch.png"),
    # a pinned-tab silhouette is no favicon
    ('<link rel="mask-icon" href="/mask.svg" color="#000">', ""),
    ('<link rel="icon" href="data:image/png;base64,AAAA"><link rel="icon" href="/real.png">', "/real.png"),
    ("", ""),
])
def test_favicon_ranking(parser, links, expected):
    found = page(links, parser=parser).favicon
    assert found == (f"https://example.test{expected}" if expected else "")


def test_probe_recognises_ico():
    out = io.BytesIO()
    PILImage.new("RGB", (48, 48)).save(out, "ICO", sizes=[(16, 16), (48, 48)])
    assert images.probe(out.getvalue()) == images.ImageInfo(48, 48, "image/x-icon")


def test_the_extractions_minimum_is_the_configs_default():
    from spiderduck.core.config import ProcessSettings
    assert media.MIN_IMAGE_SIZE == ProcessSettings().min_image_size


# --- choosing among them (RelatedFetcher, with a fake fetcher) -------------------------------

def png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", (width, height)).save(out, "PNG")
    return out.getvalue()


def ok(url: str, body: bytes, content_type: str = "image/png") -> FetchResult:
    return FetchResult(url, Status.OK, 200, (("Content-Type", content_type),), body)


class Web:
    """A fake fetch hop: url -> FetchResult, a DomainBusy for `busy`, a wait on `hang`."""

    def __init__(self, answers: dict, busy=(), hang=()):
        self.answers, self.busy, self.hang = answers, set(busy), set(hang)
        self.asked: list[str] = []
        self.release = asyncio.Event()

    async def __call__(self, url, *, purpose, max_body_bytes, timeout, wait_if_busy):
        self.asked.append(url)
        if url in self.busy:
            raise DomainBusy(f"{url}: busy")
        if url in self.hang:
            await self.release.wait()
        return self.answers.get(url) or FetchResult(url, Status.OK, 404, (), b"not found")


class Counts:
    def __init__(self):
        self.seen: list[tuple[str, dict]] = []

    def count(self, name, amount=1, **labels):
        self.seen.append((name, labels))

    def observe(self, name, value, **labels):
        pass

    def choices(self) -> list[str]:
        return [labels["choice"] for name, labels in self.seen if name == "related_images"]


SITE = "http://site.test/a"


def images_at(*specs) -> tuple[Image, ...]:
    return tuple(Image(f"http://cdn.test/{s}") if isinstance(s, str) else Image(f"http://cdn.test/{s[0]}", *s[1:])
                 for s in specs)


async def related(web: Web, candidates: tuple[Image, ...], *, favicon: str = "http://site.test/icon.png",
                  timeout: float = 5.0, min_image_size: int = 50, enabled: bool = True,
                  counts: Counts | None = None) -> UrlRecord:
    meta = PageMetadata(image=candidates[0] if candidates else None, image_candidates=candidates, favicon=favicon)
    record = UrlRecord(SITE, Status.OK, final_url=SITE, image=meta.image, favicon=favicon)
    task = CrawlTask(SITE, 0.0)

    async def inner(task):
        return Outcome(task, record, Resolution.CRAWLED, key=SITE, page=meta)
    stage = RelatedFetcher(web, enabled=enabled, max_redirects=3, image_probe_bytes=65_536,
                           oembed_max_bytes=65_536, timeout=timeout, cache_size=100,
                           metrics=counts or Counts(), min_image_size=min_image_size)
    return (await stage(task, inner)).record


async def test_the_first_that_loads_and_is_large_enough_wins():
    web = Web({"http://cdn.test/tiny.gif": ok("http://cdn.test/tiny.gif", png(1, 1), "image/gif"),
               "http://cdn.test/small.png": ok("http://cdn.test/small.png", png(20, 20)),
               "http://cdn.test/page.jpg": ok("http://cdn.test/page.jpg", b"<html>hi</html>", "text/html"),
               "http://cdn.test/good.png": ok("http://cdn.test/good.png", png(120, 60)),
               "http://cdn.test/unused.png": ok("http://cdn.test/unused.png", png(300, 300))})
    counts = Counts()
    record = await related(web, images_at("missing.jpg", "tiny.gif", "small.png", "page.jpg",
                                          ("good.png", 1200, 0, ""), "unused.png"), counts=counts)
    assert record.image == Image("http://cdn.test/good.png", 1200, 60, "image/png")   # stated width kept
    assert "http://cdn.test/unused.png" not in web.asked
    assert counts.choices() == ["fallback"]


async def test_a_stated_size_under_the_minimum_is_not_fetched_and_zero_takes_any_size():
    web = Web({"http://cdn.test/s.png": ok("http://cdn.test/s.png", png(20, 20)),
               "http://cdn.test/m.png": ok("http://cdn.test/m.png", png(70, 70))})
    record = await related(web, images_at(("m.png", 60, 60, ""), "s.png"), min_image_size=100)
    assert record.image is None and web.asked == ["http://cdn.test/s.png"]
    record = await related(Web(web.answers), images_at("s.png"), min_image_size=0)
    assert record.image == Image("http://cdn.test/s.png", 20, 20, "image/png")


async def test_an_svg_loads_by_its_type_and_a_stated_size_counts():
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"/>'
    web = Web({"http://cdn.test/a.svg": ok("http://cdn.test/a.svg", svg, "image/svg+xml"),
               "http://cdn.test/b.svg": ok("http://cdn.test/b.svg", svg, "image/svg+xml")})
    record = await related(web, images_at(("a.svg", 10, 10, ""), ("b.svg", 400, 200, "")), min_image_size=0)
    assert record.image == Image("http://cdn.test/a.svg", 10, 10, "image/svg+xml")
    record = await related(web, images_at(("b.svg", 400, 200, "")))
    assert record.image == Image("http://cdn.test/b.svg", 400, 200, "image/svg+xml")


async def test_every_candidate_failing_leaves_no_image():
    web = Web({"http://cdn.test/guarded.png": FetchResult("http://cdn.test/guarded.png", Status.BLOCKED_ADDRESS),
               "http://cdn.test/tiny.png": ok("http://cdn.test/tiny.png", png(1, 1))})
    counts = Counts()
    record = await related(web, images_at("guarded.png", "tiny.png", "gone.png"), counts=counts)
    assert record.image is None and counts.choices() == ["none"]


async def test_a_candidate_that_could_not_be_probed_stands_and_no_later_one_is_promoted():
    busy, robots = "http://cdn.test/busy.png", "http://cdn.test/robots.png"
    web = Web({"http://cdn.test/later.png": ok("http://cdn.test/later.png", png(100, 100)),
               robots: FetchResult(robots, Status.ROBOTS_DISALLOWED),
               "http://cdn.test/err.png": FetchResult("http://cdn.test/err.png", Status.OK, 503)}, busy=[busy])
    counts = Counts()
    # A busy domain, a server error, robots.txt forbidding us to look: not known to fail, so the
    # page's choice stands, unverified, over a later candidate that loads.
    for unknown in ("busy.png", "err.png", "robots.png"):
        record = await related(web, images_at("gone.png", unknown, "later.png"), counts=counts)
        assert record.image == Image(f"http://cdn.test/{unknown}"), unknown
    assert "http://cdn.test/later.png" not in web.asked
    assert counts.choices() == ["unverified"] * 3


async def test_no_answer_within_the_deadline_keeps_the_pages_image():
    hang = "http://cdn.test/slow.png"
    web = Web({}, hang=[hang])
    record = await related(web, images_at("slow.png", "other.png"), timeout=0.05)
    assert record.image == Image(hang) and web.asked == [hang]
    # ... but once the first is known to fail, the next not yet probed stands for it.
    web = Web({}, hang=["http://cdn.test/other.png"])
    record = await related(web, images_at("gone.png", "other.png", "third.png"), timeout=0.05)
    assert record.image == Image("http://cdn.test/other.png")
    # Related fetches off: nothing is asked, the page's image stands.
    web = Web({})
    record = await related(web, images_at("gone.png"), enabled=False)
    assert record.image == Image("http://cdn.test/gone.png") and web.asked == []


async def test_the_sites_favicon_ico_only_when_the_page_names_none_and_it_answers():
    ico = io.BytesIO()
    PILImage.new("RGB", (32, 32)).save(ico, "ICO")
    web = Web({"http://site.test/favicon.ico": ok("http://site.test/favicon.ico", ico.getvalue(), "image/x-icon")})
    assert (await related(web, (), favicon="")).favicon == "http://site.test/favicon.ico"
    assert (await related(web, ())).favicon == "http://site.test/icon.png"
    assert web.asked == ["http://site.test/favicon.ico"]                  # not for a page naming one
    assert (await related(Web({}), (), favicon="")).favicon == ""          # 404
    soft = Web({"http://site.test/favicon.ico": ok("http://site.test/favicon.ico", b"<html>", "text/html")})
    assert (await related(soft, (), favicon="")).favicon == ""


def test_a_stated_size_padded_with_white_space_is_read_in_linear_time():
    pad = " " * 300_000
    page = extract_page(f'<img src="/a.png" width="1{pad}x" height="{pad}640{pad}">'.encode(), "http://a.test/",
                        **EXTRACTION)
    assert page.image is not None and (page.image.width, page.image.height) == (0, 640)
