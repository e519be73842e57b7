"""The web app manifest (issue 41): the page's `<link rel="manifest">`, and the icon of the
manifest that is the logo: the largest by its stated sizes, one for any purpose first, resolved
against the manifest's URL. Hostile manifests give no logo and take bounded work."""
from __future__ import annotations

import json
import pickle
import time

import pytest

from spiderduck.core.record import PAGE_FIELDS, Image, PageMetadata, UrlRecord, with_page
from spiderduck.extract import extract_page, manifest
from spiderduck.extract.channel import loads
from support.extraction import EXTRACTION

PAGE = "https://news.test/a/story"
MANIFEST = "https://cdn.test/app/site.webmanifest"


def logo(doc) -> Image | None:
    body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    return manifest.logo(body, MANIFEST)


def icons(*items) -> dict:
    return {"name": "Site", "icons": list(items)}


# --- discovery ----------------------------------------------------------------------------------

def test_the_pages_manifest_link_is_absolute_and_not_part_of_the_record():
    html = b'<title>T</title><link rel="manifest" href="/site.webmanifest">'
    meta = extract_page(html, PAGE, **EXTRACTION)
    assert meta.manifest_url == "https://news.test/site.webmanifest"
    assert "manifest_url" not in PAGE_FIELDS and "manifest_url" not in with_page(meta)
    assert "manifest_url" not in UrlRecord.__dataclass_fields__
    # The extraction worker's answer crosses the pipe.
    assert loads(pickle.dumps(meta)).manifest_url == meta.manifest_url


@pytest.mark.parametrize("href", ["javascript:alert(1)", "data:application/json,{}", "",
                                  "/" + "m" * 9000, "ftp://x.test/m.json"])
def test_a_manifest_link_not_http_or_too_long_is_none(href):
    html = f'<title>T</title><link rel="manifest" href="{href}">'.encode()
    assert extract_page(html, PAGE, **EXTRACTION).manifest_url == ""


# --- the icon chosen ------------------------------------------------------------------------------

def test_the_largest_stated_size_wins_resolved_against_the_manifests_url():
    doc = icons({"src": "icon-192.png", "sizes": "192x192", "type": "image/png"},
                {"src": "/icons/icon-512.png", "sizes": "256x256 512x512", "type": "image/png"},
                {"src": "icon-48.png", "sizes": "48x48"})
    assert logo(doc) == Image("https://cdn.test/icons/icon-512.png", 512, 512, "image/png")
    assert logo(icons({"src": "i.png"})) == Image("https://cdn.test/app/i.png")   # no size: still an icon


def test_an_icon_for_any_purpose_comes_before_a_maskable_or_monochrome_one():
    doc = icons({"src": "mask.png", "sizes": "1024x1024", "purpose": "maskable"},
                {"src": "mono.png", "sizes": "1024x1024", "purpose": "monochrome"},
                {"src": "small.png", "sizes": "192x192", "purpose": "any maskable"},
                {"src": "smaller.png", "sizes": "96x96"})
    assert logo(doc).url == "https://cdn.test/app/small.png"
    assert logo(icons({"src": "mask.png", "sizes": "512x512", "purpose": "maskable monochrome"})).url \
        == "https://cdn.test/app/mask.png"                    # only a maskable one: better than none


def test_an_svgs_any_is_the_largest_a_bitmaps_any_is_no_size():
    doc = icons({"src": "big.png", "sizes": "512x512", "type": "image/png"},
                {"src": "logo.svg", "sizes": "any", "type": "image/svg+xml"})
    assert logo(doc) == Image("https://cdn.test/app/logo.svg", 0, 0, "image/svg+xml")
    doc = icons({"src": "any.png", "sizes": "any"}, {"src": "big.png", "sizes": "512x512"})
    assert logo(doc).url == "https://cdn.test/app/big.png"


@pytest.mark.parametrize("sizes", ["1e9x1e9", "999999x999999", "0x0", "-5x-5", "x", "512", "١٢x١٢",
                                   "512X512 " * 10_000, 512, None, ["512x512"]])
def test_unreadable_sizes_are_no_size(sizes):
    doc = icons({"src": "odd.png", "sizes": sizes}, {"src": "ok.png", "sizes": "64x64"})
    got = logo(doc)
    assert got.url == "https://cdn.test/app/ok.png" or (got.width, got.height) in ((0, 0), (512, 512))
    assert got.width <= 99_999


@pytest.mark.parametrize("src", ["javascript:alert(1)", "data:image/png;base64,AAAA", "ftp://x.test/i.png",
                                 "/" + "i" * 9000, 42, None, ""])
def test_an_icon_without_an_http_src_is_skipped(src):
    assert logo(icons({"src": src, "sizes": "512x512"})) is None
    assert logo(icons({"src": src, "sizes": "512x512"}, {"src": "ok.png"})).url == "https://cdn.test/app/ok.png"


@pytest.mark.parametrize("body", [b"", b"not json", b"<html></html>", b"[1, 2]", b'"icons"', b"null",
                                  b'{"icons": "a.png"}', b'{"icons": {"src": "a.png"}}', b'{"icons": [1, "a", null]}',
                                  b"[" * 100_000 + b"]" * 100_000, b'{"icons": [' + b"1" * 10_000 + b"]}",
                                  b"\xff\xfe\x00garbage", b'{"icons": [{"src": "a.png", "type": 5, "purpose": 7}]}'])
def test_a_manifest_that_is_no_json_object_with_icons_gives_no_logo_or_its_icon(body):
    got = logo(body)
    assert got is None or got == Image("https://cdn.test/app/a.png")


def test_ten_thousand_icons_are_read_only_so_far():
    items = [{"src": f"i{n}.png", "sizes": f"{n + 1}x{n + 1}"} for n in range(10_000)]
    start = time.perf_counter()
    got = logo(icons(*items))
    assert time.perf_counter() - start < 0.5
    assert got.url == f"https://cdn.test/app/i{manifest.MAX_ICONS - 1}.png"   # the last one read


def test_a_type_that_is_no_image_type_is_dropped():
    assert logo(icons({"src": "a.png", "type": "text/html"})) == Image("https://cdn.test/app/a.png")
    assert logo(icons({"src": "a.png", "type": "image/" + "x" * 500})) == Image("https://cdn.test/app/a.png")
    assert logo(icons({"src": "a.png", "type": " Image/PNG "})).content_type == "image/png"
