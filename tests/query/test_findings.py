"""findings: what each platform will show of a URL's card, from hand-written records (issue 30)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from spiderduck.query.findings import PLATFORM_NAMES, PLATFORMS, findings, readme_table
from spiderduck.v1 import metadata_pb2

README = Path(__file__).resolve().parents[2] / "README.md"
OG = {"title": "og:title", "description": "og:description", "image": "og:image"}


def record(**changes) -> metadata_pb2.UrlMetadata:
    """A page every platform shows well: og: title, description and a 1200×630 PNG."""
    fields = dict(url="http://news.test/s", status=metadata_pb2.OK, title="A story", description="What it says.",
                  image=metadata_pb2.Image(url="http://news.test/i.png", width=1200, height=630,
                                           content_type="image/png"))
    sources = changes.pop("sources", OG)
    fields.update(changes)
    return metadata_pb2.UrlMetadata(
        **fields, provenance=[metadata_pb2.FieldSource(field=f, source=s) for f, s in sources.items()])


def found(metadata, platform=None) -> set[tuple[str, str, str]]:
    return {(f.platform, f.code, f.severity) for f in findings(metadata) if platform in (None, f.platform)}


def test_a_page_fine_everywhere_has_no_error_or_warning():
    assert {f.severity for f in findings(record())} <= {"info"}
    assert {(p, c) for p, c, _ in found(record())} == set()     # not even info: 1200×630 at 1.90:1


def test_every_platform_has_rules_and_every_rule_cites_a_source():
    assert tuple(PLATFORMS) == PLATFORM_NAMES
    for platform, rules in PLATFORMS.items():
        assert rules, platform
        for rule in rules:
            assert rule.severity in ("error", "warning", "info") and rule.states
            assert rule.source.startswith(("https://", "README.md#")), (platform, rule)


def test_the_readme_table_is_the_code_table():
    text = README.read_text()
    table = re.search(r"<!-- platforms -->\n(.*?)<!-- /platforms -->", text, re.S)
    assert table and table.group(1) == readme_table()
    assert text.index("## Why a preview looks as it does") < text.index("<!-- platforms -->") \
        < text.index("## Where to go next")


@pytest.mark.parametrize("platform", PLATFORM_NAMES)
def test_a_wall_is_an_error_everywhere_and_nothing_else(platform):
    wall = record(status=metadata_pb2.INTERSTITIAL, error="consent wall", title="", image=None)
    assert found(wall, platform) == {(platform, "interstitial", "error")}
    [finding] = [f for f in findings(wall) if f.platform == platform]
    assert "consent wall" in finding.message and finding.field == ""


@pytest.mark.parametrize("platform, expected", [
    ("x", {("x", "blocked_by_robots", "warning")}),
    ("facebook", set()), ("linkedin", set()), ("slack", set()), ("discord", set()), ("mastodon", set()),
    ("bluesky", set()),
])
def test_robots_only_where_the_platform_says_it_follows_robots_txt(platform, expected):
    assert found(record(status=metadata_pb2.ROBOTS_DISALLOWED), platform) == expected


def test_a_page_not_read_gets_no_findings():
    assert findings(record(status=metadata_pb2.HTTP_ERROR, title="", image=None)) == []


@pytest.mark.parametrize("platform, severity", [
    ("facebook", "warning"), ("linkedin", "info"), ("x", None), ("slack", None), ("discord", None),
    ("mastodon", None), ("bluesky", None),
])
def test_image_missing(platform, severity, ):
    expected = {(platform, "image_missing", severity)} if severity else set()
    assert found(record(image=None), platform) == expected


def test_a_withheld_image_says_why():
    [finding] = [f for f in findings(record(image=None, robots_directives=["max-image-preview:none"]))
                 if f.platform == "facebook"]
    assert finding.field == "image" and "max-image-preview:none" in finding.message


@pytest.mark.parametrize("width, height, expected", [
    (150, 150, {("facebook", "image_too_small", "error"), ("x", "image_too_small", "info")}),
    (100, 100, {("facebook", "image_too_small", "error"), ("x", "image_too_small", "warning")}),
    (500, 262, {("facebook", "image_too_small", "warning")}),
    (1000, 524, {("facebook", "image_too_small", "info")}),
    (1200, 630, set()),
    (0, 0, set()),          # unknown size: no size finding
    (200, 0, set()),
])
def test_image_too_small_takes_the_strictest_threshold_per_platform(width, height, expected):
    image = metadata_pb2.Image(url="http://news.test/i.png", width=width, height=height, content_type="image/png")
    assert {f for f in found(record(image=image)) if f[1] == "image_too_small"} == expected


def test_image_aspect_from_facebooks_and_xs_ratios():
    square = metadata_pb2.Image(url="http://news.test/i.png", width=1200, height=1200)
    assert {f for f in found(record(image=square)) if f[1] == "image_aspect"} == {
        ("facebook", "image_aspect", "info"), ("x", "image_aspect", "info")}
    wide = metadata_pb2.Image(url="http://news.test/i.png", width=1400, height=700)   # 2:1, 8% off 1.91
    assert {f for f in found(record(image=wide)) if f[1] == "image_aspect"} == set()


@pytest.mark.parametrize("image, expected", [
    (metadata_pb2.Image(url="http://news.test/i", content_type="text/html"),
     {("facebook", "image_unreachable", "warning"), ("x", "image_unreachable", "warning"),
      ("slack", "image_unreachable", "warning")}),
    (metadata_pb2.Image(url="data:image/png;base64,AAAA"),
     {("facebook", "image_unreachable", "warning"), ("x", "image_unreachable", "warning"),
      ("slack", "image_unreachable", "warning")}),
    (metadata_pb2.Image(url="http://news.test/i.png", content_type="image/png; q=1"), set()),
    (metadata_pb2.Image(url="http://news.test/i.png"), set()),       # not probed: no claim
])
def test_image_unreachable(image, expected):
    assert {f for f in found(record(image=image)) if f[1] == "image_unreachable"} == expected


def test_x_does_not_show_svg():
    svg = metadata_pb2.Image(url="http://news.test/i.svg", content_type="image/svg+xml")
    assert {f for f in found(record(image=svg)) if f[1] == "image_format"} == {("x", "image_format", "warning")}


@pytest.mark.parametrize("platform, severity", [
    ("facebook", "warning"), ("x", "warning"), ("linkedin", "info"), ("bluesky", "info"),
    ("slack", None), ("discord", None), ("mastodon", None),
])
def test_title_missing(platform, severity):
    expected = {(platform, "title_missing", severity)} if severity else set()
    assert {f for f in found(record(title=""), platform) if f[1] == "title_missing"} == expected


def test_title_and_description_too_long_on_x_only():
    long = record(title="t" * 71, description="d" * 201)
    assert {f for f in found(long) if f[1].endswith("too_long")} == {
        ("x", "title_too_long", "warning"), ("x", "description_too_long", "warning")}
    assert {f for f in found(record(title="t" * 70, description="d" * 200)) if f[1].endswith("too_long")} == set()


@pytest.mark.parametrize("platform, severity", [
    ("facebook", "info"), ("bluesky", "info"), ("x", None), ("linkedin", None), ("slack", None),
    ("discord", None), ("mastodon", None),
])
def test_description_missing(platform, severity):
    expected = {(platform, "description_missing", severity)} if severity else set()
    assert {f for f in found(record(description=""), platform) if f[1] == "description_missing"} == expected


def test_a_description_withheld_by_nosnippet_says_why():
    [finding] = [f for f in findings(record(description="", robots_directives=["nosnippet"]))
                 if f.platform == "facebook" and f.code == "description_missing"]
    assert "nosnippet" in finding.message and finding.field == "description"


@pytest.mark.parametrize("platform, severity", [
    ("facebook", "warning"), ("x", "error"), ("linkedin", "info"), ("slack", "warning"), ("mastodon", "info"),
    ("discord", None), ("bluesky", None),
])
def test_no_card_tags_when_nothing_came_from_og_or_twitter(platform, severity):
    plain = record(sources={"title": "<title>", "description": "description", "image": "<img>"})
    expected = {(platform, "no_card_tags", severity)} if severity else set()
    assert {f for f in found(plain, platform) if f[1] == "no_card_tags"} == expected


@pytest.mark.parametrize("sources, facebook, x, slack, mastodon", [
    ({"title": "twitter:title", "image": "twitter:image"}, True, False, False, True),
    ({"title": "og:title", "description": "og:description"}, False, False, False, False),
    ({"title": "og:title", "description": "description"}, False, True, False, False),   # X needs both
    ({"title": "oembed:title"}, True, True, False, False),
])
def test_which_tags_count_as_card_tags_per_platform(sources, facebook, x, slack, mastodon):
    got = {p for p, c, _ in found(record(sources=sources)) if c == "no_card_tags"}
    assert got == {p for p, on in [("facebook", facebook), ("x", x), ("slack", slack), ("mastodon", mastodon),
                                   ("linkedin", facebook)] if on}


def test_findings_carry_their_field_and_a_message():
    for finding in findings(record(title="", image=None, description="")):
        assert finding.message and finding.platform in PLATFORM_NAMES
        assert finding.field in ("", "title", "description", "image")


# Preview honesty (issue 43): a browser's look that differs from the card is `cloaked` everywhere.
CLOAKED = metadata_pb2.Honesty(verdict="differs", differences=["final_domain", "title"],
                               browser_final_url="http://phish.test/login")


@pytest.mark.parametrize("platform", PLATFORM_NAMES)
def test_a_card_a_browser_does_not_see_is_cloaked_on_every_platform(platform):
    [finding] = [f for f in findings(record(honesty=CLOAKED)) if f.platform == platform]
    assert (finding.code, finding.severity, finding.field) == ("cloaked", "error", "")
    assert "final_domain" in finding.message and "title" in finding.message
    assert "another domain" in finding.message and "http://phish.test/login" in finding.message


@pytest.mark.parametrize("status, error", [(metadata_pb2.INTERSTITIAL, "consent wall"),
                                           (metadata_pb2.OK, "")])
def test_cloaked_is_found_beside_the_other_findings(status, error):
    page = record(status=status, error=error, title="", honesty=CLOAKED)
    codes = {(p, c) for p, c, _ in found(page)}
    assert {("discord", "cloaked"), ("x", "cloaked")} <= codes
    other = "interstitial" if status == metadata_pb2.INTERSTITIAL else "title_missing"
    assert ("facebook", other) in codes and ("facebook", "cloaked") in codes


@pytest.mark.parametrize("honesty", [
    None,
    metadata_pb2.Honesty(verdict="consistent", browser_final_url="http://news.test/s"),
    metadata_pb2.Honesty(verdict="unchecked"),
])
def test_a_consistent_unchecked_or_unmade_check_is_no_finding(honesty):
    assert findings(record(honesty=honesty)) == []


def test_the_cloaked_rule_points_to_the_readme():
    for rules in PLATFORMS.values():
        [rule] = [r for r in rules if r.code == "cloaked"]
        assert rule.severity == "error" and rule.source == "README.md#preview-honesty"
