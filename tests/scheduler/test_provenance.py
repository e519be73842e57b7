"""Provenance (issue 30): each filled field of a page's record says where it was read, and that
survives the stored bytes and reaches the JSON."""
from __future__ import annotations

import dataclasses
import json

import pytest

from spiderduck.core.record import PROVENANCE_FIELDS, FieldSource, PageMetadata, UrlRecord, with_page, with_source
from spiderduck.core.status import Status
from spiderduck.extract import extract_page
from spiderduck.extract.oembed import OEmbed
from spiderduck.scheduler.stages.related import _with_oembed
from spiderduck.wire import record_proto
from support.extraction import ROBOTS_TOKEN

URL = "https://example.test/news/story.html"


def page(head: str = "", body: str = "", lang: str = "", parser: str = "selectolax") -> PageMetadata:
    html = (f"<!doctype html><html{f' lang={lang}' if lang else ''}><head><meta charset=utf-8>{head}</head>"
            f"<body>{body}</body></html>")
    return extract_page(html.encode("utf-8"), URL, "text/html", parser=parser, robots_token=ROBOTS_TOKEN)


def source(meta: PageMetadata, field: str) -> str | None:
    found = [p.source for p in meta.provenance if p.field == field]
    assert len(found) <= 1, meta.provenance
    return found[0] if found else None


@pytest.fixture(params=("selectolax", "html5lib"))
def parser(request):
    return request.param


def ld(**values) -> str:
    return f'<script type="application/ld+json">{json.dumps({"@type": "NewsArticle", **values})}</script>'


@pytest.mark.parametrize("field, head, body, expected", [
    ("title", '<meta property="og:title" content="OG"><meta name="twitter:title" content="TW"><title>T</title>',
     "", "og:title"),
    ("title", '<meta name="twitter:title" content="TW"><title>T</title>', "", "twitter:title"),
    ("title", ld(headline="Headline"), "", "json-ld:headline"),
    ("title", "<title>Plain title</title>", "", "<title>"),
    ("title", "<title>Story - Site</title>" + '<meta property="og:site_name" content="Site">', "", "<title>"),
    ("description", '<meta name="description" content="Described.">', "", "description"),
    ("description", '<meta property="og:description" content="OG described.">'
                    '<meta name="description" content="Described.">', "", "og:description"),
    ("image", '<meta property="og:image" content="/og.jpg"><meta name="twitter:image" content="/tw.jpg">',
     "", "og:image"),
    ("image", '<meta name="twitter:image" content="/tw.jpg">', "", "twitter:image"),
    ("image", "", '<img src="/photo.jpg" width="800" height="600">', "<img>"),
    ("author", ld(author={"@type": "Person", "name": "Jane Doe"}) + '<meta name="author" content="John Roe">',
     "", "json-ld:author"),
    ("author", '<meta name="author" content="John Roe">', "", "author"),
    ("author", "", '<p class="byline">By Jane Doe</p>', "byline"),
    ("author", "", '<a rel="author" href="/by/jane">Jane Doe</a>', "<a rel=author>"),
    ("site_name", '<meta property="og:site_name" content="The Site">', "", "og:site_name"),
    ("published_time", ld(datePublished="2020-01-13T10:00:00Z"), "", "json-ld:datePublished"),
    ("published_time", '<meta property="article:published_time" content="2020-01-13T10:00:00Z">', "",
     "article:published_time"),
    ("favicon", '<link rel="icon" href="/icon.png">', "", "<link rel=icon>"),
    ("canonical_url", '<meta property="og:url" content="https://example.test/news/story">'
                      '<link rel="canonical" href="https://example.test/news/other">', "", "og:url"),
    ("canonical_url", '<link rel="canonical" href="https://example.test/news/story">', "", "<link rel=canonical>"),
    ("canonical_url", "", "", "derived"),
])
def test_each_field_names_the_source_that_won(field, head, body, expected, parser):
    meta = page(head, body, parser=parser)
    assert source(meta, field) == expected, meta.provenance


def test_lang_from_html_lang(parser):
    meta = page('<meta property="og:locale" content="fr_FR">', lang="de", parser=parser)
    assert meta.lang == "de" and source(meta, "lang") == "<html lang>"
    meta = page('<meta property="og:locale" content="fr_FR">', parser=parser)
    assert source(meta, "lang") == "og:locale"


def test_one_entry_per_filled_field_in_the_issues_order(parser):
    head = ('<title>T</title><meta name="description" content="D"><meta property="og:image" content="/i.jpg">'
            '<meta property="og:site_name" content="S"><meta name="author" content="Jane Doe">'
            '<link rel="icon" href="/f.png">' + ld(datePublished="2020-01-13T10:00:00Z"))
    meta = page(head, lang="en", parser=parser)
    fields = [p.field for p in meta.provenance]
    first = PROVENANCE_FIELDS.index("favicon") + 1
    assert fields[:first] == list(PROVENANCE_FIELDS[:first])
    # and the card's fields (issue 41) after them: an article's, with its image (and no text to count)
    assert fields[first:] == ["medium", "images", "card_style"]
    bare = page(parser=parser)
    assert bare.provenance == (FieldSource("canonical_url", "derived"),)


def test_no_favicon_named_leaves_it_for_the_site_icon():
    meta = page("<title>T</title>")
    assert source(meta, "favicon") is None
    assert with_source(meta.provenance, "favicon", "/favicon.ico")[-1] == FieldSource("favicon", "/favicon.ico")


def test_the_public_value_functions_still_answer_values():
    from spiderduck.extract import rules, media, publisher, dates, authors  # noqa: F401
    meta = page('<meta property="og:title" content="OG">')
    assert meta.title == "OG"


def record_of(meta: PageMetadata) -> UrlRecord:
    bare = UrlRecord(url=URL, status=Status.OK, final_url=URL, canonical_url=URL)
    return dataclasses.replace(bare, **with_page(meta))


def test_provenance_survives_the_stored_bytes_and_is_in_the_json():
    meta = page('<meta property="og:title" content="OG"><meta name="description" content="D">'
                '<meta name="twitter:image" content="/tw.jpg">', lang="en")
    rec = record_of(meta)
    assert rec.provenance == meta.provenance
    back = record_proto.from_bytes(record_proto.to_bytes(rec))
    assert back.provenance == rec.provenance
    expected = [{"field": "title", "source": "og:title"}, {"field": "description", "source": "description"},
                {"field": "image", "source": "twitter:image"}, {"field": "canonical_url", "source": "derived"},
                {"field": "lang", "source": "<html lang>"}, {"field": "images", "source": "twitter:image"},
                {"field": "card_style", "source": "derived"}]
    assert record_proto.to_dict(back)["provenance"] == expected
    assert json.loads(record_proto.to_json(rec))["provenance"] == expected
    assert record_proto.message_to_dict(record_proto.to_proto(rec))["provenance"] == expected


def test_a_field_emptied_after_extraction_loses_its_source():
    rec = dataclasses.replace(record_of(page('<meta name="description" content="D">')), description="")
    assert "description" not in [p["field"] for p in record_proto.to_dict(rec)["provenance"]]
    assert "description" not in [p.field for p in record_proto.from_bytes(record_proto.to_bytes(rec)).provenance]


def test_oembed_fills_mark_their_source():
    rec = record_of(page('<meta property="og:title" content="OG">'))
    found = OEmbed(title="Other", author="Jane Doe", site_name="Tube", thumbnail=None, html="")
    filled = _with_oembed(rec, found)
    assert (filled.title, filled.author, filled.site_name) == ("OG", "Jane Doe", "Tube")
    sources = {p.field: p.source for p in filled.provenance}
    assert sources["title"] == "og:title"
    assert sources["author"] == "oembed:author_name" and sources["site_name"] == "oembed:provider_name"
    assert [p.field for p in filled.provenance] == [f for f in PROVENANCE_FIELDS if f in sources]


# --- the related fetches (RelatedFetcher with the fake web of test_image_candidates) -----------

async def related_record(web, candidates, sources, favicon="", card_style=("", "")):
    from spiderduck.scheduler.stages.related import RelatedFetcher
    from spiderduck.scheduler.task import CrawlTask, Outcome, Resolution
    from test_image_candidates import SITE, Counts
    meta = PageMetadata(image=candidates[0] if candidates else None, image_candidates=candidates,
                        image_sources=sources, favicon=favicon)
    provenance = (FieldSource("image", sources[0]),) if candidates else ()
    provenance += (FieldSource("card_style", card_style[1]),) if card_style[0] else ()
    record = UrlRecord(SITE, Status.OK, final_url=SITE, image=meta.image, favicon=favicon, provenance=provenance,
                       card_style=card_style[0])

    async def inner(task):
        return Outcome(task, record, Resolution.CRAWLED, key=SITE, page=meta)
    stage = RelatedFetcher(web, enabled=True, max_redirects=3, image_probe_bytes=65_536, oembed_max_bytes=65_536,
                           timeout=5.0, cache_size=100, metrics=Counts())
    return (await stage(CrawlTask(SITE, 0.0), inner)).record


async def test_the_image_probes_fallback_and_the_sites_icon_mark_their_sources():
    import io
    from PIL import Image as PILImage
    from test_image_candidates import Web, images_at, ok, png
    ico = io.BytesIO()
    PILImage.new("RGB", (32, 32)).save(ico, "ICO")
    web = Web({"http://cdn.test/good.png": ok("http://cdn.test/good.png", png(120, 60)),
               "http://site.test/favicon.ico": ok("http://site.test/favicon.ico", ico.getvalue(), "image/x-icon")})
    record = await related_record(web, images_at("missing.jpg", "good.png"), ("og:image", "<img>"))
    assert record.image.url == "http://cdn.test/good.png"
    assert record.provenance == (FieldSource("image", "<img>"), FieldSource("favicon", "/favicon.ico"),
                                 FieldSource("card_style", "derived"))
    assert record.card_style == "summary"          # 120 px wide, as probed
    none = await related_record(Web({}), images_at("missing.jpg"), ("og:image",), favicon="http://site.test/i.png")
    assert none.image is None and none.provenance == () and none.card_style == ""


async def test_a_derived_card_style_is_derived_again_from_the_probed_image_a_stated_one_kept():
    from test_image_candidates import Web, images_at, ok, png
    web = Web({"http://cdn.test/wide.png": ok("http://cdn.test/wide.png", png(640, 360))})
    record = await related_record(web, images_at("wide.png"), ("og:image",), card_style=("summary", "derived"))
    assert record.card_style == "summary_large_image"
    assert ("card_style", "derived") in [(p.field, p.source) for p in record.provenance]
    record = await related_record(web, images_at("wide.png"), ("og:image",), card_style=("summary", "twitter:card"))
    assert record.card_style == "summary"
    withheld = await related_record(web, (), (), card_style=("summary_large_image", "derived"))   # no image left
    assert withheld.card_style == "" and withheld.provenance == ()
