"""oEmbed discovery and parsing (the related fetch itself is in tests/e2e/test_related_fetches.py)."""
import json

from spiderduck.core.record import Image
from spiderduck.extract import extract_page
from spiderduck.extract.embeds import HTML_MAX
from spiderduck.extract.oembed import OEmbed, parse
from support.extraction import EXTRACTION

URL = "https://video.test/watch/1"


def test_discovery_finds_the_json_oembed_link_and_makes_it_absolute():
    html = (b'<html><head><link rel="alternate" type="text/xml+oembed" href="/oembed.xml">'
            b'<link rel="alternate" type="application/json+oembed" href="/oembed?url=1&amp;format=json">'
            b'</head></html>')
    assert extract_page(html, URL, **EXTRACTION).oembed_url == "https://video.test/oembed?url=1&format=json"
    assert extract_page(b"<title>none</title>", URL, **EXTRACTION).oembed_url == ""


def test_parse_reads_title_author_provider_and_thumbnail():
    doc = {"type": "video", "version": "1.0", "title": "A \"quoted\" talk", "author_name": "Jane Doe",
           "provider_name": "VideoSite", "thumbnail_url": "/t/1.jpg", "thumbnail_width": 480,
           "thumbnail_height": 360.0}
    assert parse(json.dumps(doc).encode(), URL) == OEmbed(
        "A “quoted” talk", "Jane Doe", "VideoSite", Image("https://video.test/t/1.jpg", 480, 360))


def test_a_photo_is_its_own_thumbnail():
    doc = {"type": "photo", "url": "https://img.test/p.png", "width": "640", "height": 480}
    assert parse(json.dumps(doc).encode(), URL).thumbnail == Image("https://img.test/p.png", 640, 480)


def test_broken_documents_give_nothing_or_empty_fields():
    assert parse(b"{not json", URL) is None
    assert parse(b"[1, 2]", URL) is None
    assert parse(b"\xff\xfe", URL) is None
    assert parse(b'{"title": 5, "author_name": {"name": "x"}, "thumbnail_url": "javascript:alert(1)"}', URL) == \
        OEmbed("", "", "", None)


def test_a_video_or_rich_document_keeps_its_html_as_sent():
    html = '<iframe src="https://player.video.test/e/1" width="640" height="360"></iframe>'
    for kind in ("video", "rich"):
        assert parse(json.dumps({"type": kind, "html": html}).encode(), URL).html == html
    assert parse(json.dumps({"type": "link", "html": html}).encode(), URL).html == ""
    assert parse(json.dumps({"type": "photo", "url": "https://img.test/p.png", "html": html}).encode(),
                 URL).html == ""
    assert parse(json.dumps({"html": html}).encode(), URL).html == ""                 # no type
    assert parse(json.dumps({"type": "video", "html": ["<iframe>"]}).encode(), URL).html == ""
    too_long = html + " " * HTML_MAX
    assert parse(json.dumps({"type": "video", "html": too_long}).encode(), URL).html == ""
    assert OEmbed("t", "a", "s", None).html == ""                                     # the default
