"""Interstitial detection (spiderduck.extract.walls) on hand-written walls and near-misses
(tests/pages/walls/cases.json), on every page of the shared corpus (none is a wall), and on
hostile markup."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from spiderduck.extract import extract_page
from spiderduck.extract.parsers import parse
from spiderduck.extract.walls import KINDS, detect
from conftest import shared_path
from support.extraction import EXTRACTION

WALLS = Path(__file__).resolve().parents[1] / "pages" / "walls"
CASES = json.loads((WALLS / "cases.json").read_text("utf-8"))


def wall_of(body: bytes, http_status: int, parser: str = "selectolax"):
    return detect(body, parse(body, parser), http_status)


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
@pytest.mark.parametrize("parser", ["selectolax", "html5lib"])
def test_walls_and_near_misses(case, parser):
    body = (WALLS / case["file"]).read_bytes()
    wall = wall_of(body, case["http_status"], parser)
    if case["expected_kind"] is None:
        assert wall is None, (case["why"], wall)
    else:
        assert wall is not None and wall.kind == case["expected_kind"], (case["why"], wall)
        assert wall.kind in KINDS and wall.reason


def test_the_corpus_has_every_kind_and_near_misses():
    kinds = {c["expected_kind"] for c in CASES}
    assert kinds - {None} == set(KINDS) and sum(c["expected_kind"] is None for c in CASES) >= 8


def test_the_reason_names_the_signals():
    wall = wall_of((WALLS / "cf-challenge.html").read_bytes(), 403)
    assert wall.reason == "HTTP 403; challenge marker 'cf_chl_opt'"
    wall = wall_of((WALLS / "akamai-denied.html").read_bytes(), 403)
    assert wall.reason.startswith("HTTP 403; title 'Access Denied Access Denied'; 'Reference #18.4f2c1b17")


def test_the_page_through_extraction_says_it_is_a_wall_and_keeps_what_it_stated():
    page = extract_page((WALLS / "login-wall.html").read_bytes(), "https://social.test/p/1", **EXTRACTION)
    assert page.interstitial.startswith("login_wall: a password field") and page.title == "Log in to continue"
    page = extract_page((WALLS / "cf-challenge.html").read_bytes(), "https://shop.test/", http_status=503,
                        **EXTRACTION)
    assert page.interstitial.startswith("bot_challenge: HTTP 503;")
    page = extract_page((WALLS / "paywall-article.html").read_bytes(), "https://coast.test/a", **EXTRACTION)
    assert page.interstitial == ""


def test_no_page_of_the_shared_corpus_is_a_wall():
    cases_path = shared_path("corpus", "metascraper", "cases.json")
    flagged = []
    for case in json.loads(cases_path.read_text("utf-8")):
        body = (cases_path.parent / case["html"]).read_bytes()
        wall = wall_of(body, 200)
        if wall is not None:
            flagged.append((case["name"], wall))
    assert flagged == []


@pytest.mark.parametrize("body", [
    b"<div>" * 200_000 + b"access denied",
    b"<title>Access denied</title>" + b"<b><i>" * 50_000,
    b"\x00\xff\xfe<title>Log in</title><input type=password>" + bytes(range(256)) * 1000,
    b'<title>Cookies</title><form><p>cookies</p><input value="' + b"x" * 5_000_000 + b'"></form>',
    "<title>Verify you are human \ud800</title><div class=g-recaptcha>".encode("utf-8", "surrogatepass"),
    b"",
], ids=["deep", "deep-inline", "binary", "huge-attribute", "lone-surrogate", "empty"])
@pytest.mark.parametrize("status", [200, 403])
def test_hostile_markup_never_raises(body, status):
    # The page's own parse is the extraction's (bounded by process.extract_timeout); what is
    # measured here is detect's own work, given a Document that makes it read the page's shape.
    doc = parse(b"<title>Access denied: log in, cookies</title><input type=password>", "selectolax")
    wall = detect(body[:4_000_000], doc, status)
    assert wall is None or wall.kind in KINDS
