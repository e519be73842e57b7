"""The hard cases of issue 4, through the whole Post Processor (`extract_page`), for both parsers:
missing <head>, several og:image, protocol-relative and data: URLs, entity-encoded titles,
charset only in <meta>, a <meta charset> that lies, JSON-LD @graph and arrays, bylines, and a
10 MB page (bounded work)."""
import pytest

from spiderduck.core.config import FetcherSettings
from spiderduck.core.record import Image
from spiderduck.extract import extract_page
from spiderduck.extract.page import MAX_HTML_BYTES
from spiderduck.extract.shell import SCAN_BYTES
from support.extraction import EXTRACTION, ROBOTS_TOKEN

URL = "https://example.test/news/story.html"


@pytest.fixture(params=("selectolax", "html5lib"))
def parser(request):
    return request.param


def ld(obj: str) -> str:
    return f'<script type="application/ld+json">{obj}</script>'


def test_missing_head_html_and_body_tags(parser):
    html = (b'<meta property="og:title" content="No head"><link rel="canonical" href="/c">'
            b'<meta name="author" content="Ann Author"><p>First paragraph.</p>')
    meta = extract_page(html, URL, parser=parser, robots_token=ROBOTS_TOKEN)
    assert (meta.title, meta.description, meta.canonical_url, meta.author) == (
        "No head", "First paragraph.", "https://example.test/c", "Ann Author")


def test_several_og_images_first_usable_one_wins(parser):
    html = (b'<meta property="og:image" content="data:image/png;base64,AAAA">'
            b'<meta property="og:image" content="//cdn.test/second.jpg">'
            b'<meta property="og:image:width" content="800">'
            b'<meta property="og:image" content="https://cdn.test/third.jpg">')
    meta = extract_page(html, URL, parser=parser, robots_token=ROBOTS_TOKEN)
    assert meta.image == Image("https://cdn.test/second.jpg", 800)


def test_data_and_protocol_relative_urls_in_body_fallbacks(parser):
    body = (b'<body><img src="data:image/gif;base64,R0lGOD"><img src="//cdn.test/body.png">'
            b'<link rel="icon" href="//cdn.test/fav.ico">')
    meta = extract_page(body, "http://example.test/", parser=parser, robots_token=ROBOTS_TOKEN)
    assert meta.image.url == "http://cdn.test/body.png"
    assert meta.favicon == "http://cdn.test/fav.ico"


def test_entity_encoded_meta_title_and_description(parser):
    html = (b'<meta property="og:title" content="Tom &amp; Jerry&#8217;s &#x201C;Caf&eacute;&#x201D;">'
            b'<meta name="description" content="5 &lt; 6 &amp;&amp; 7 &gt; 6">')
    meta = extract_page(html, URL, parser=parser, robots_token=ROBOTS_TOKEN)
    assert meta.title == "Tom & Jerry\u2019s \u201cCaf\u00e9\u201d"
    assert meta.description == "5 < 6 && 7 > 6"


def test_charset_only_in_meta(parser):
    html = '<meta charset="windows-1251"><title>Привет, мир</title>'.encode("cp1251")
    meta = extract_page(html, URL, None, parser=parser, robots_token=ROBOTS_TOKEN)
    assert (meta.title, meta.charset) == ("Привет, мир", "windows-1251")
    http_equiv = ('<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
                  '<title>日本語</title>').encode("cp932")
    meta = extract_page(http_equiv, URL, None, parser=parser, robots_token=ROBOTS_TOKEN)
    assert (meta.title, meta.charset) == ("日本語", "shift_jis")


def test_meta_charset_that_lies(parser):
    # Says windows-1252, is UTF-8: the bytes win.
    html = '<meta charset="iso-8859-1"><title>Crème brûlée</title>'.encode("utf-8")
    meta = extract_page(html, URL, None, parser=parser, robots_token=ROBOTS_TOKEN)
    assert (meta.title, meta.charset) == ("Crème brûlée", "utf-8")
    # Says windows-1251, is UTF-8, and the HTTP header says UTF-8: the header wins.
    html = '<meta charset="windows-1251"><title>Привет</title>'.encode("utf-8")
    meta = extract_page(html, URL, "text/html; charset=utf-8", parser=parser, robots_token=ROBOTS_TOKEN)
    assert (meta.title, meta.charset) == ("Привет", "utf-8")
    # Says UTF-8, is windows-1252: the bytes are not UTF-8, and read as windows-1252 (issue 29).
    html = '<meta charset="utf-8"><title>Café</title>'.encode("cp1252")
    meta = extract_page(html, URL, None, parser=parser, robots_token=ROBOTS_TOKEN)
    assert (meta.title, meta.charset) == ("Café", "windows-1252")
    # Bytes no encoding reads cleanly: decoded as declared, bad bytes U+FFFD, never a failure.
    html = b'<meta charset="utf-8"><title>Caf\xe9\x00\x81\xff\xfe</title>'
    meta = extract_page(html, URL, None, parser=parser, robots_token=ROBOTS_TOKEN)
    assert meta.charset and isinstance(meta.title, str)


def test_json_ld_graph_arrays_and_id_references(parser):
    html = (ld('[{"@context": "https://schema.org", "@graph": ['
               '{"@type": ["NewsArticle", "Article"], "headline": "Arrays",'
               ' "author": [{"@id": "#ann"}, {"@type": "Person", "name": "Bob"}, {"@id": "#ann"}],'
               ' "publisher": {"@id": "#org"}, "image": ["/1.jpg", "/2.jpg"]},'
               '{"@type": "Person", "@id": "#ann", "name": "Ann"},'
               '{"@type": "Organization", "@id": "#org", "name": "Org"}]}]')).encode()
    meta = extract_page(html, URL, parser=parser, robots_token=ROBOTS_TOKEN)
    assert (meta.title, meta.author, meta.site_name, meta.image.url) == (
        "Arrays", "Ann and Bob", "Org", "https://example.test/1.jpg")


def test_author_urls_are_not_names(parser):
    html = (b'<meta property="article:author" content="https://www.facebook.com/someone">'
            b'<meta name="author" content="//example.test/people/x">' + ld(
                '{"author": "https://example.test/people/x"}').encode()
            + b'<div class="author-box"><a href="/people/x">Carol Writer</a></div>')
    assert extract_page(html, URL, parser=parser, robots_token=ROBOTS_TOKEN).author == "Carol Writer"


def test_byline_block_link_is_a_last_resort(parser):
    box = b'<div class="post-author"><span><a href="/p">Dana Scully</a></span></div>'
    assert extract_page(box, URL, parser=parser, robots_token=ROBOTS_TOKEN).author == "Dana Scully"
    assert extract_page(b'<meta name="author" content="Fox Mulder">' + box, URL,
                        parser=parser, robots_token=ROBOTS_TOKEN).author == "Fox Mulder"
    one_word = b'<div class="author"><a href="/p">Profile</a></div>'
    assert extract_page(one_word, URL, parser=parser, robots_token=ROBOTS_TOKEN).author == ""


def test_ten_megabyte_page_is_read_up_to_the_cap_only():
    head = (b'<!doctype html><html><head><meta charset="utf-8"><title>Huge</title>'
            b'<meta property="og:image" content="/top.jpg"></head><body>')
    filler = b"<p>" + b"x" * 1000 + b"</p>\n"
    padding = filler * (10 * 1024 * 1024 // len(filler) + 1)
    late = b'<meta property="og:description" content="beyond the cap">'
    body = head + padding + late + b"</body></html>"
    assert len(body) > 10 * 1024 * 1024 and MAX_HTML_BYTES <= 4 * 1024 * 1024
    meta = extract_page(body, URL, "text/html", **EXTRACTION)
    assert (meta.title, meta.image.url) == ("Huge", "https://example.test/top.jpg")
    assert meta.description == "x" * 1000   # the first paragraph, not what follows the cap
    # What lies past the cap is never seen: the page gives the record of its first bytes.
    assert meta == extract_page(body[:MAX_HTML_BYTES], URL, "text/html", **EXTRACTION)


def test_the_cap_is_a_constant_equal_to_the_fetchers_default_body_cap():
    """A page fetched under the default fetcher.max_body_bytes is read whole, and shell
    detection reads as much (both are hard limits, no setting)."""
    assert MAX_HTML_BYTES == SCAN_BYTES == FetcherSettings().max_body_bytes


# --- the quality rules of issue 16: publisher, author, dates, a <title>'s site part -----------------

def page(head: str, body: str = "", parser: str = "selectolax", url: str = URL):
    html = f"<!doctype html><html><head><meta charset=utf-8>{head}</head><body>{body}</body></html>"
    return extract_page(html.encode("utf-8"), url, "text/html", parser=parser, robots_token=ROBOTS_TOKEN)


OG_SITE = '<meta property="og:site_name" content="Fern Notes">'


def test_site_name_a_person_publisher_gives_way_to_the_sites_name(parser):
    person = (ld('{"@type": "Article", "publisher": {"@id": "#me"}}')
              + ld('{"@type": ["Person", "Organization"], "@id": "#me", "name": "Ann Blogger"}'))
    assert page(OG_SITE + person, parser=parser).site_name == "Fern Notes"
    assert page(person, parser=parser).site_name == "Ann Blogger"        # nothing else names the site


def test_site_name_stated_twice_beats_the_publishers_legal_name(parser):
    graph = ld('{"@graph": [{"@type": "NewsArticle", "publisher": {"@id": "#org"}},'
               ' {"@type": "WebSite", "name": "Fern Notes"},'
               ' {"@type": "Organization", "@id": "#org", "name": "Fern Media LLC"}]}')
    assert page(OG_SITE + graph, parser=parser).site_name == "Fern Notes"
    # og:site_name alone does not outrank the JSON-LD publisher
    assert page(OG_SITE + graph.replace('"name": "Fern Notes"', '"name": "Other"'),
                parser=parser).site_name == "Fern Media LLC"


def test_site_name_from_json_ld_website_organization_or_home_page_owner(parser):
    website = ld('{"@type": "WebSite", "name": "Town Council", "url": "/"}')
    assert page(website, parser=parser).site_name == "Town Council"
    org = ld('{"@type": "Organization", "name": "Quill Analytics", "url": "https://example.test/about"}')
    assert page("<title>Our team</title>" + org, parser=parser).site_name == "Quill Analytics"
    # an organisation on another site is what the page is about, not who publishes it
    other = ld('{"@type": "Organization", "name": "Someone Else", "url": "https://elsewhere.test/"}')
    assert page("<title>Our team</title>" + other, parser=parser).site_name == ""
    # whatever has the site's home page as its url owns the site: a restaurant, an event's organiser
    restaurant = ld('{"@type": "Restaurant", "name": "Osteria", "url": "https://www.example.test/"}')
    assert page(restaurant, parser=parser).site_name == "Osteria"
    event = ld('{"@type": "MusicEvent", "name": "Jazz Night",'
               ' "organizer": {"@type": "Organization", "name": "Jazz Society", "url": "https://example.test"}}')
    assert page(event, parser=parser).site_name == "Jazz Society"
    # ...but never a page, a breadcrumb or a navigation entry pointing home
    crumbs = ld('{"@type": "BreadcrumbList", "itemListElement": [{"@type": "ListItem", "name": "Home",'
                ' "url": "https://example.test/"}]}')
    assert page(crumbs, parser=parser).site_name == ""


def test_site_name_from_web_app_and_microdata(parser):
    for key in ("apple-mobile-web-app-title", "citation_journal_title", "al:android:app_name"):
        assert page(f'<meta name="{key}" content="Drift Tides">', parser=parser).site_name == "Drift Tides"
    micro = ('<div itemscope itemtype="https://schema.org/Recipe"><span itemprop="name">Cake</span>'
             '<span itemprop="publisher" itemscope itemtype="https://schema.org/Organization">'
             '<meta itemprop="name" content="Crumb &amp; Ladle"></span></div>')
    assert page("<title>Cake</title>", micro, parser=parser).site_name == "Crumb & Ladle"


def test_site_name_drops_a_trailing_parenthetical(parser):
    assert page('<meta property="og:site_name" content="Ledger (beta)">', parser=parser).site_name == "Ledger"
    assert page('<meta property="og:site_name" content="(untitled)">', parser=parser).site_name == "(untitled)"


def test_site_name_is_what_the_title_adds_to_the_headline(parser):
    og = '<meta property="og:title" content="Summer reading">'
    assert page("<title>Valley Libraries | Summer reading</title>" + og,
                parser=parser).site_name == "Valley Libraries"
    assert page("<title>Summer reading - Events | Valley Libraries</title>" + og,
                parser=parser).site_name == "Valley Libraries"
    assert page("<title>Ten habits • Aperture Lane</title>", parser=parser).site_name == "Aperture Lane"
    assert page("<title>Webhooks · Brightwave Docs</title>", parser=parser).site_name == "Brightwave Docs"
    # a colon is not a separator: `Review: the new phone` names no site
    assert page("<title>Review: the new phone</title>", parser=parser).site_name == ""


def test_title_without_the_site_name_the_page_states_elsewhere(parser):
    publisher = ld('{"publisher": {"name": "Eastmere Water"}}')
    assert page("<title>Understanding your bill | Eastmere Water</title>" + publisher,
                parser=parser).title == "Understanding your bill"
    assert page('<title>About – Ann Smith</title><meta name="application-name" content="Ann Smith">',
                parser=parser).title == "About"
    headline = ld('{"headline": "Why bread collapses"}')
    assert page("<title>Why bread collapses - Proofing Room</title>" + headline,
                parser=parser).title == "Why bread collapses"
    # a site name known only from <title> itself leaves <title> whole (which part is the site?)
    assert page("<title>Release notes - Loomwork Docs</title>",
                parser=parser).title == "Release notes - Loomwork Docs"
    assert page('<title>Release notes</title><meta property="og:site_name" content="Release notes">',
                parser=parser).title == "Release notes"


def test_author_from_a_social_posts_title_and_a_profile_url_handle(parser):
    assert page('<meta property="og:title" content="Priya Ram (@priyaram) on Chirpline">',
                parser=parser).author == "Priya Ram"
    assert page('<meta property="og:title" content="Oskar L (@oskar@fjord.social)">',
                parser=parser).author == "Oskar L"
    assert page('<meta name="twitter:creator" content="@https://twitter.com/marenvolk">',
                parser=parser).author == "marenvolk"
    assert page('<meta name="twitter:creator" content="https://x.com/marenvolk/">',
                parser=parser).author == "marenvolk"
    # an author stated as such comes first
    assert page('<meta property="og:title" content="Priya Ram (@priyaram)">'
                '<meta name="author" content="Ed Itor">', parser=parser).author == "Ed Itor"


def test_scholarly_citation_tags(parser):
    head = ('<meta name="citation_author" content="Bridget Halloran">'
            '<meta name="citation_author" content="Tomasz Oyelowo">'
            '<meta name="citation_publication_date" content="2019/04/17">')
    meta = page(head, parser=parser)
    assert (meta.author, meta.published_time) == ("Bridget Halloran and Tomasz Oyelowo", "2019-04-17T00:00:00Z")


def test_a_videos_upload_date_is_its_publication(parser):
    video = ld('{"@type": "VideoObject", "name": "Caning", "uploadDate": "2021-11-02T15:00:00Z"}')
    assert page(video, '<time datetime="2020-01-01">old</time>',
                parser=parser).published_time == "2021-11-02T15:00:00Z"


def test_dates_written_for_people_in_other_languages(parser):
    for text, expected in (("3. März 2021", "2021-03-03T12:00:00Z"),
                           ("12 de octubre de 2020", "2020-10-12T12:00:00Z"),
                           ("1er juin 2019, 14:05", "2019-06-01T14:05:00Z"),
                           ("5 dicembre 2018", "2018-12-05T12:00:00Z")):
        assert page("", f"<time>{text}</time>", parser=parser).published_time == expected, text
    # a word that merely starts like a month is none (`Mayor`); a later real date is found
    assert page("", '<p class="date">Mayor 5, 2021</p>', parser=parser).published_time == ""
    assert page("", '<p class="date">Mayor 5, 2021 / June 5, 2021</p>', parser=parser).published_time \
        == "2021-06-05T12:00:00Z"


def test_a_handle_inside_a_headline_is_no_byline(parser):
    assert page('<meta property="og:title" content="Ann Lee (@annlee) says the bridge will reopen">',
                parser=parser).author == ""
    assert page('<meta property="og:title" content="Ann Lee (@annlee) • Photos">', parser=parser).author == "Ann Lee"



@pytest.mark.parametrize("marker, found", [
    ("coo\u212aiebot".encode(), "cookiebot"),     # the Kelvin sign lower-cases to an ASCII k
    ("DIDOM\u0130".encode(), "didomi"),           # İ lower-cases to i and a combining dot
    (b"Quantcast", "quantcast"),
    ("quant\u0441ast".encode(), None),            # a Cyrillic с is no c
    (b"quant\xffcast", None),                      # nor is a byte that is no UTF-8
])
def test_wall_markers_are_found_alike_in_utf8_bytes_and_in_decoded_text(parser, marker, found):
    from spiderduck.extract.parsers import parse
    from spiderduck.extract.walls import detect
    body = (b'<html><head><meta charset="utf-8"><title>Cookies on this site</title>'
            b'<script src="https://cdn.test/' + marker + b'.js"></script></head>'
            b'<body><form><p>We use cookies.</p><button>Accept</button></form></body></html>')
    text = body.decode("utf-8", "replace")
    from_bytes, from_text = detect(body, parse(body, parser)), detect(text, parse(text, parser))
    assert from_bytes == from_text and from_bytes.kind == "consent_wall"
    expected = f"consent marker {found!r}" if found else "cookie-consent words"
    assert from_bytes.reason.startswith(expected)
    meta = extract_page(body, URL, parser=parser, robots_token=ROBOTS_TOKEN)
    assert meta.interstitial.startswith(f"consent_wall: {expected}")
