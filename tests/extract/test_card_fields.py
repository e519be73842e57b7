"""The card's fields of issue 41 from a page's markup, on both parsers: medium, images, logo,
theme_color(_dark), card_style, labels, offer, word_count, reading_time_s, audio, the video's
duration, and where each was read (provenance). Every fixture here is written for these tests."""
from __future__ import annotations

import json

import pytest

from spiderduck.core.record import Audio, Image, Label, Offer, PageMetadata
from spiderduck.extract import extract_page
from support.extraction import ROBOTS_TOKEN

URL = "https://shop.example.test/items/42"


@pytest.fixture(params=("selectolax", "html5lib"))
def parser(request):
    return request.param


def page(head: str = "", body: str = "", parser: str = "selectolax") -> PageMetadata:
    html = f"<!doctype html><html><head><meta charset=utf-8>{head}</head><body>{body}</body></html>"
    return extract_page(html.encode(), URL, "text/html", parser=parser, robots_token=ROBOTS_TOKEN)


def ld(value) -> str:
    return f'<script type="application/ld+json">{json.dumps(value)}</script>'


def source(meta: PageMetadata, field: str) -> str | None:
    found = [p.source for p in meta.provenance if p.field == field]
    assert len(found) <= 1, meta.provenance
    return found[0] if found else None


def assert_field(field: str, head: str, body: str, value, origin: str | None, parser: str) -> None:
    """The page's `field` is `value`, read from `origin` (None: the field is empty, with no source)."""
    meta = page(head, body, parser=parser)
    assert getattr(meta, field) == value and source(meta, field) == origin, meta.provenance


# --- medium -------------------------------------------------------------------------------------

@pytest.mark.parametrize("head, medium, origin", [
    ('<meta property="og:type" content="article">', "article", "og:type"),
    ('<meta property="og:type" content="video.movie">', "video", "og:type"),
    ('<meta property="og:type" content="music.song">', "audio", "og:type"),
    ('<meta property="og:type" content="product">', "product", "og:type"),
    ('<meta property="og:type" content="profile">', "profile", "og:type"),
    ('<meta property="og:type" content="website">', "website", "og:type"),
    # a shop's og:type website, and the JSON-LD Product that says more
    ('<meta property="og:type" content="website">' + ld({"@type": "Product", "name": "Mug"}), "product",
     "json-ld:@type"),
    # Yoast's graph: WebSite and WebPage beside the Article
    (ld({"@context": "https://schema.org", "@graph": [{"@type": "WebSite", "name": "S"},
                                                      {"@type": "WebPage", "name": "P"},
                                                      {"@type": "NewsArticle", "headline": "H"}]}),
     "article", "json-ld:@type"),
    (ld({"@type": "WebPage"}), "website", "json-ld:@type"),
    (ld({"@type": "VideoObject", "name": "Clip"}), "video", "json-ld:@type"),
    (ld({"@type": "PodcastEpisode", "name": "Ep"}), "audio", "json-ld:@type"),
    (ld({"@type": "ProfilePage"}), "profile", "json-ld:@type"),
    (ld({"@type": "Person", "name": "Jane"}), "", None),
    ('<meta property="og:type" content="something.else">', "", None),
])
def test_medium_from_the_pages_statements(head, medium, origin, parser):
    assert_field("medium", head, "", medium, origin, parser)


# --- images and logo ----------------------------------------------------------------------------

def test_every_declared_card_image_in_page_order_once(parser):
    head = ('<meta property="og:image" content="/a.jpg"><meta property="og:image:width" content="1200">'
            '<meta property="og:image:height" content="630"><meta property="og:image:type" content="image/JPEG">'
            '<meta name="twitter:image" content="/b.png">'
            '<meta property="og:image" content="https://cdn.example.test/c.jpg">'
            '<meta property="og:image" content="/a.jpg">'           # again: once
            '<meta property="og:image" content="/clip.mp4">'        # no image
            '<meta property="og:image" content="javascript:alert(1)">'
            + ld({"@type": "Product", "image": ["/d.jpg", {"@type": "ImageObject", "url": "/e.jpg", "width": 800}]}))
    meta = page(head, parser=parser)
    assert meta.images == (Image("https://shop.example.test/a.jpg", 1200, 630, "image/jpeg"),
                           Image("https://shop.example.test/b.png"), Image("https://cdn.example.test/c.jpg"),
                           Image("https://shop.example.test/d.jpg"), Image("https://shop.example.test/e.jpg", 800))
    assert meta.image.url == "https://shop.example.test/a.jpg"      # image stays the first usable one
    assert source(meta, "images") == "og:image"
    assert source(page('<meta name="twitter:image" content="/t.jpg">', parser=parser), "images") == "twitter:image"
    assert page(parser=parser).images == () and source(page(parser=parser), "images") is None


@pytest.mark.parametrize("head, body, logo, origin", [
    (ld({"@type": "NewsArticle", "publisher": {"@type": "Organization", "name": "Daily",
                                               "logo": {"@type": "ImageObject", "url": "/logo.png", "width": 600,
                                                        "height": 60}}}),
     "", Image("https://shop.example.test/logo.png", 600, 60), "json-ld:publisher.logo"),
    (ld({"@context": "https://schema.org", "@graph": [
        {"@type": "WebPage", "publisher": {"@id": "#org"}},
        {"@type": "Organization", "@id": "#org", "name": "Shop", "logo": "https://shop.example.test/brand.svg"}]}),
     "", Image("https://shop.example.test/brand.svg"), "json-ld:publisher.logo"),
    (ld({"@type": "Organization", "name": "Shop", "logo": "/o.png"}), "", Image("https://shop.example.test/o.png"),
     "json-ld:logo"),
    ("", '<div itemscope itemtype="https://schema.org/Organization"><img itemprop="logo" src="/m.png">'
         '<span itemprop="name">Shop</span></div>', Image("https://shop.example.test/m.png"), "microdata:logo"),
    (ld({"@type": "Organization", "logo": "javascript:alert(1)"}), "", None, None),
])
def test_the_publishers_logo(head, body, logo, origin, parser):
    assert_field("logo", head, body, logo, origin, parser)


# --- theme colours ------------------------------------------------------------------------------

@pytest.mark.parametrize("head, light, dark", [
    ('<meta name="theme-color" content="#4285f4">', "#4285f4", ""),
    ('<meta name="theme-color" content="#ABC">', "#aabbcc", ""),
    ('<meta name="theme-color" content="#11223344">', "#112233", ""),
    ('<meta name="theme-color" content="#1234">', "#112233", ""),
    ('<meta name="theme-color" content="rebeccapurple">', "#663399", ""),
    ('<meta name="theme-color" content="rgb(255, 0, 128)">', "#ff0080", ""),
    ('<meta name="theme-color" content="rgba(10 20 30 / 50%)">', "#0a141e", ""),
    ('<meta name="theme-color" content="rgb(100%, 50%, 0%)">', "#ff8000", ""),
    ('<meta name="theme-color" content="hsl(120, 100%, 50%)">', "", ""),
    ('<meta name="theme-color" content="var(--brand)">', "", ""),
    ('<meta name="theme-color" content="#ggg">', "", ""),
    ('<meta name="theme-color" media="(prefers-color-scheme: light)" content="#ffffff">'
     '<meta name="theme-color" media="(prefers-color-scheme: dark)" content="#000000">', "#ffffff", "#000000"),
    ('<meta name="theme-color" media="(prefers-color-scheme:dark)" content="black">', "", "#000000"),
])
def test_theme_colours(head, light, dark, parser):
    meta = page(head, parser=parser)
    assert (meta.theme_color, meta.theme_color_dark) == (light, dark)
    assert source(meta, "theme_color") == ("<meta name=theme-color>" if light else None)
    assert source(meta, "theme_color_dark") == ("<meta name=theme-color>" if dark else None)


# --- card style and labels ----------------------------------------------------------------------

@pytest.mark.parametrize("head, style, origin", [
    ('<meta name="twitter:card" content="summary_large_image"><meta property="og:image" content="/s.jpg">',
     "summary_large_image", "twitter:card"),
    ('<meta name="twitter:card" content="player">', "player", "twitter:card"),
    ('<meta name="twitter:card" content="app">', "app", "twitter:card"),
    ('<meta name="twitter:card" content="photo">', "summary_large_image", "twitter:card"),
    ('<meta property="og:image" content="/w.jpg"><meta property="og:image:width" content="1200">',
     "summary_large_image", "derived"),
    ('<meta property="og:image" content="/n.jpg"><meta property="og:image:width" content="200">', "summary", "derived"),
    ('<meta property="og:image" content="/u.jpg">', "summary", "derived"),     # width unknown until probed
    ('<meta name="twitter:card" content="nonsense">', "", None),
    ("", "", None),
])
def test_card_style(head, style, origin, parser):
    assert_field("card_style", head, "", style, origin, parser)


def test_labels_in_order_as_written(parser):
    head = ('<meta name="twitter:label1" content="Written by"><meta name="twitter:data1" content="Jane  Doe">'
            '<meta name="twitter:label2" content="Est. reading time"><meta name="twitter:data2" content="4 minutes">'
            '<meta name="twitter:label3" content="Lonely">'                 # no data: none
            '<meta name="twitter:label4" content="Price"><meta name="twitter:data4" content="$20">')
    meta = page(head, parser=parser)
    assert meta.labels == (Label("Written by", "Jane Doe"), Label("Est. reading time", "4 minutes"),
                           Label("Price", "$20"))
    assert source(meta, "labels") == "twitter:label1"


# --- offer --------------------------------------------------------------------------------------

@pytest.mark.parametrize("head, offer, origin", [
    (ld({"@type": "Product", "name": "Mug", "offers": {"@type": "Offer", "price": "12.50", "priceCurrency": "eur",
                                                       "availability": "https://schema.org/InStock"}}),
     Offer("12.50", "EUR", "in_stock"), "json-ld:offers"),
    (ld({"@type": "Product", "offers": [{"@type": "Offer", "availability": "OutOfStock"},
                                        {"@type": "Offer", "price": 99, "priceCurrency": "USD",
                                         "availability": "http://schema.org/PreOrder"}]}),
     Offer("99", "USD", "pre_order"), "json-ld:offers"),
    (ld({"@type": "Product", "offers": {"@type": "AggregateOffer", "lowPrice": 9.99, "highPrice": 20,
                                        "priceCurrency": "GBP"}}), Offer("9.99", "GBP", ""), "json-ld:offers"),
    (ld({"@type": "Product", "offers": {"@type": "Offer", "priceSpecification": {"price": "1.299,00",
                                                                                   "priceCurrency": "EUR"}}}),
     Offer("1299.00", "EUR", ""), "json-ld:offers"),
    (ld({"@type": "Product", "offers": {"@type": "Offer", "availability": "SoldOut"}}),
     Offer("", "", "sold_out"), "json-ld:offers"),
    ('<meta property="product:price:amount" content="19,90"><meta property="product:price:currency" content="EUR">'
     '<meta property="product:availability" content="in stock">', Offer("19.90", "EUR", "in_stock"),
     "product:price:amount"),
    ('<meta property="product:availability" content="oos">', Offer("", "", "out_of_stock"), "product:availability"),
    ('<meta property="product:price:amount" content="NaN"><meta property="product:price:currency" content="EUR">',
     None, None),
    (ld({"@type": "Product", "offers": {"price": "1e400", "priceCurrency": "US Dollars"}}), None, None),
    (ld({"@type": "Article", "offers": {"price": "3"}}), None, None),
])
def test_offer(head, offer, origin, parser):
    assert_field("offer", head, "", offer, origin, parser)


# --- words and reading time ---------------------------------------------------------------------

ARTICLE = '<meta property="og:type" content="article">'
TEXT = " ".join(["word"] * 460)


def test_an_articles_words_and_reading_time(parser):
    body = (f'<nav>Home News Sport Weather</nav><article><h1>Title here</h1><p>{TEXT}</p>'
            '<script>var a = "not words at all";</script><style>p { color: red }</style>'
            '<aside>Related: other stories</aside><p>Don\'t stop, U.S. readers — the end.</p></article>'
            '<footer>Copyright words</footer>')
    meta = page(ARTICLE, body, parser=parser)
    assert meta.word_count == 2 + 460 + 7            # Title here; TEXT; Don't stop, U.S. readers — the end.
    assert meta.reading_time_s == round(469 * 60 / 230)
    assert (source(meta, "word_count"), source(meta, "reading_time_s")) == ("text", "derived")


def test_the_main_text_is_the_article_body_else_main_else_body(parser):
    assert page(ARTICLE, '<p>one two</p><div itemscope itemtype="https://schema.org/Article">'
                         '<div itemprop="articleBody">three four five</div></div>', parser=parser).word_count == 3
    assert page(ARTICLE, "<p>one two</p><main>three four five six</main>", parser=parser).word_count == 4
    assert page(ARTICLE, "<p>one two</p><div>three</div>", parser=parser).word_count == 3


def test_a_stated_reading_time_and_word_count_win(parser):
    label = ('<meta name="twitter:label1" content="Est. reading time">'
             '<meta name="twitter:data1" content="7 minutes">')
    meta = page(ARTICLE + label, f"<p>{TEXT}</p>", parser=parser)
    assert (meta.word_count, meta.reading_time_s) == (460, 420)
    assert source(meta, "reading_time_s") == "twitter:label1"
    meta = page(ARTICLE + ld({"@type": "Article", "timeRequired": "PT12M", "wordCount": "2400"}), parser=parser)
    assert (meta.word_count, meta.reading_time_s) == (2400, 720)
    assert (source(meta, "word_count"), source(meta, "reading_time_s")) == ("json-ld:wordCount", "json-ld:timeRequired")
    meta = page(ARTICLE + '<meta name="twitter:label2" content="Reading time"><meta name="twitter:data2" '
                'content="Less than a minute">', "<p>a b c</p>", parser=parser)
    assert meta.reading_time_s == 60 and source(meta, "reading_time_s") == "twitter:label2"


def test_no_words_for_what_is_not_an_article(parser):
    meta = page('<meta property="og:type" content="product">', f"<p>{TEXT}</p>", parser=parser)
    assert (meta.word_count, meta.reading_time_s) == (0, 0)
    assert source(meta, "word_count") is None and source(meta, "reading_time_s") is None


# --- audio and the video's duration -------------------------------------------------------------

@pytest.mark.parametrize("head, body, audio, origin", [
    ('<meta property="og:audio" content="/ep1.mp3"><meta property="og:audio:type" content="audio/mpeg">', "",
     Audio("https://shop.example.test/ep1.mp3", "audio/mpeg"), "og:audio"),
    ('<meta property="og:audio" content="/s.mp3"><meta property="music:duration" content="215">', "",
     Audio("https://shop.example.test/s.mp3", "", 215_000), "og:audio"),
    ('<meta name="twitter:player:stream" content="https://cdn.example.test/ep.m4a">'
     '<meta name="twitter:player:stream:content_type" content="audio/mp4">', "",
     Audio("https://cdn.example.test/ep.m4a", "audio/mp4"), "twitter:player:stream"),
    ('<meta name="twitter:player:stream" content="https://cdn.example.test/v.mp4">'
     '<meta name="twitter:player:stream:content_type" content="video/mp4">', "", None, None),
    ("", '<audio controls src="/a.ogg"></audio>', Audio("https://shop.example.test/a.ogg"), "<audio>"),
    ("", '<audio controls><source src="/b.opus" type="audio/ogg; codecs=opus"><source src="/b.mp3"></audio>',
     Audio("https://shop.example.test/b.opus", "audio/ogg; codecs=opus"), "<audio>"),
    ("", '<audio src="javascript:alert(1)"></audio>', None, None),
    ('<meta property="og:audio" content="data:audio/mp3;base64,AAAA">', "", None, None),
])
def test_audio(head, body, audio, origin, parser):
    assert_field("audio", head, body, audio, origin, parser)


@pytest.mark.parametrize("head, duration_ms", [
    ('<meta property="og:video" content="/v.mp4"><meta property="og:video:duration" content="125">', 125_000),
    ('<meta property="og:video" content="/v.mp4"><meta property="video:duration" content="61.5">', 61_500),
    ('<meta property="og:video" content="/v.mp4">' + ld({"@type": "VideoObject", "duration": "PT1H2M3S"}),
     3_723_000),
    ('<meta property="og:video" content="/v.mp4">' + ld({"@type": "VideoObject", "duration": "PT99999999999H"}), 0),
    ('<meta property="og:video" content="/v.mp4"><meta property="og:video:duration" content="-5">', 0),
    ('<meta property="og:video" content="/v.mp4"><meta property="og:video:duration" content="1e400">', 0),
])
def test_the_videos_duration(head, duration_ms, parser):
    meta = page(head, parser=parser)
    assert meta.video.url == "https://shop.example.test/v.mp4" and meta.video.duration_ms == duration_ms
    assert source(meta, "video") == "og:video"


# --- the metascraper corpus ---------------------------------------------------------------------

def test_the_card_fields_on_the_corpus(shared_path):
    """On real pages (../shared/corpus/metascraper): each field found at least as often as last
    measured (of 60 pages), and every value within its bounds."""
    from spiderduck.core.record import CARD_STYLES, MEDIUMS
    from spiderduck.extract import cards, pictures
    cases_path = shared_path("corpus", "metascraper", "cases.json")
    found: dict[str, int] = {}
    by_name = {}
    for case in json.loads(cases_path.read_text()):
        meta = extract_page((cases_path.parent / case["html"]).read_bytes(), case["url"], parser="selectolax",
                            robots_token=ROBOTS_TOKEN)
        by_name[case["name"]] = meta
        for field in ("medium", "images", "logo", "theme_color", "labels", "word_count"):
            found[field] = found.get(field, 0) + bool(getattr(meta, field))
        assert meta.medium in MEDIUMS + ("",) and meta.card_style in CARD_STYLES + ("",)
        assert len(meta.images) <= pictures.MAX_IMAGES and len(meta.labels) <= cards.MAX_LABELS
        assert all(c == "" or len(c) == 7 for c in (meta.theme_color, meta.theme_color_dark))
        assert (meta.word_count > 0) <= (meta.medium == "article")
    floors = {"medium": 54, "images": 55, "logo": 36, "theme_color": 19, "labels": 5, "word_count": 41}
    assert all(found[field] >= floor for field, floor in floors.items()), found
    computerworld = by_name["computerworld"]
    assert computerworld.labels[1] == Label("Est. reading time", "9 minutes") and computerworld.reading_time_s == 540
    assert 1_000 < computerworld.word_count < 3_000


def test_a_stream_is_the_audio_or_the_video_by_its_type(parser):
    sound = page('<meta name="twitter:player:stream" content="https://cdn.example.test/ep.mp3">', parser=parser)
    assert sound.audio == Audio("https://cdn.example.test/ep.mp3") and sound.video is None
    clip = page('<meta name="twitter:player:stream" content="https://cdn.example.test/c.mp4">'
                '<meta name="twitter:player:stream:content_type" content="video/mp4">', parser=parser)
    assert clip.audio is None and clip.video.url == "https://cdn.example.test/c.mp4"
    assert source(clip, "video") == "twitter:player:stream"
    scripted = page('<meta property="og:video" content="javascript:x">'
                    '<meta name="twitter:player:stream" content="https://cdn.example.test/c.mp4">', parser=parser)
    assert source(scripted, "video") == "twitter:player:stream"
