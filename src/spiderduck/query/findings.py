"""What each platform will show of a URL's card (issue 30): findings from a stored record.

    findings(UrlMetadata) -> [Finding{platform, code, severity, field, message}]

Every threshold is in PLATFORMS, once, with the page that states it; README.md's table
("Why a preview looks as it does") is readme_table() of it, and a test keeps the two equal.
A platform that publishes no threshold of a kind gets no finding of that kind: Discord
publishes nothing on its embeds, so only a wall in front of the page (which no platform can
see past) and a cloaked card (below) are found for it. Severity: error (that platform shows no card, or a broken one),
warning (it shows less than the page meant), info (worth knowing, not a fault).
An image of unknown size (width or height 0) gets no size or aspect finding.
A record whose browser's look differs from its card (issue 43, `metadata.honesty.verdict`
`differs`) is `cloaked` on every platform, whatever else is found: each shows the card, a person
who clicks sees something else.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from spiderduck.extract.honesty import DIFFERS
from spiderduck.v1 import metadata_pb2

FACEBOOK_IMAGES = "https://developers.facebook.com/docs/sharing/webmasters/images"
FACEBOOK_PRACTICES = "https://developers.facebook.com/docs/sharing/best-practices"
FACEBOOK_CRAWLER = "https://developers.facebook.com/docs/sharing/webmasters/web-crawlers"
X_MARKUP = "https://developer.x.com/en/docs/x-for-websites/cards/overview/markup"
X_SUMMARY = "https://developer.x.com/en/docs/x-for-websites/cards/overview/summary"
X_LARGE = "https://developer.x.com/en/docs/x-for-websites/cards/overview/summary-card-with-large-image"
X_GUIDE = "https://developer.x.com/en/docs/x-for-websites/cards/guides/getting-started"
LINKEDIN_INSPECTOR = "https://www.linkedin.com/post-inspector/"
SLACK_ROBOTS = "https://api.slack.com/robots"
MASTODON_CARD = "https://docs.joinmastodon.org/entities/PreviewCard/"
BLUESKY_EXTERNAL = "https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/embed/external.json"
WALLS = "README.md#what-a-preview-holds-when-the-page-is-odd"
HONESTY = "README.md#preview-honesty"

PLATFORM_NAMES = ("facebook", "x", "linkedin", "slack", "discord", "mastodon", "bluesky")


@dataclass(frozen=True)
class Rule:
    """One thing a platform's documentation states, and what breaking it costs there.

    code: the Finding's code; value: the threshold (pixels (w, h), a ratio, characters, tag
    prefixes, content types) or None; states: the rule in words, as the README shows it."""
    code: str
    severity: str
    value: object
    states: str
    source: str


ALL = Rule("interstitial", "error", None,
           "a wall (consent, login, bot challenge) in front of the page: its card is the wall's", WALLS)
CLOAKED = Rule("cloaked", "error", None,
               "a browser's look at the link differs from the card: the card shows what a person who clicks "
               "will not see", HONESTY)

PLATFORMS: dict[str, tuple[Rule, ...]] = {
    "facebook": (
        ALL,
        CLOAKED,
        Rule("image_too_small", "error", (200, 200), "og:image at least 200×200 px (the minimum allowed)",
             FACEBOOK_IMAGES),
        Rule("image_too_small", "warning", (600, 315),
             "under 600×315 px a link post shows a much smaller image", FACEBOOK_IMAGES),
        Rule("image_too_small", "info", (1200, 630), "1200×630 px for the best display on high resolution devices",
             FACEBOOK_IMAGES),
        Rule("image_aspect", "info", 1.91, "close to 1.91:1 to show the full image in Feed without cropping",
             FACEBOOK_IMAGES),
        Rule("image_missing", "warning", None, "og:image: the preview image", FACEBOOK_PRACTICES),
        Rule("title_missing", "warning", None, "og:title: the title", FACEBOOK_PRACTICES),
        Rule("description_missing", "info", None, "og:description: the description", FACEBOOK_PRACTICES),
        Rule("no_card_tags", "warning", ("og:",), "Open Graph tags, for the crawler to scrape title, description "
             "and image", FACEBOOK_PRACTICES),
        Rule("image_unreachable", "warning", None, "the crawler must be able to fetch the content it shows",
             FACEBOOK_CRAWLER),
    ),
    "x": (
        ALL,
        CLOAKED,
        Rule("blocked_by_robots", "warning", None, "Twitterbot follows robots.txt; a page it may not fetch shows no card",
             X_GUIDE),
        Rule("no_card_tags", "error", ("twitter:", "og:title+og:description"),
             "twitter: tags, or og:title and og:description (then a summary card may be rendered)", X_MARKUP),
        Rule("image_too_small", "warning", (144, 144), "summary card image at least 144×144 px", X_SUMMARY),
        Rule("image_too_small", "info", (300, 157), "summary_large_image at least 300×157 px", X_LARGE),
        Rule("image_aspect", "info", 2.0, "summary_large_image images have an aspect ratio of 2:1", X_LARGE),
        Rule("image_format", "warning", ("image/svg+xml",), "JPG, PNG, WEBP and GIF; SVG is not supported", X_MARKUP),
        Rule("image_unreachable", "warning", None, "an image URL Twitterbot cannot fetch shows no image", X_GUIDE),
        Rule("title_missing", "warning", None, "twitter:title (else og:title): the card's title", X_MARKUP),
        Rule("title_too_long", "warning", 70, "twitter:title at most 70 characters", X_MARKUP),
        Rule("description_too_long", "warning", 200, "twitter:description at most 200 characters", X_MARKUP),
    ),
    "linkedin": (
        ALL,
        CLOAKED,
        Rule("image_missing", "info", None, "og:image: the post's image", LINKEDIN_INSPECTOR),
        Rule("title_missing", "info", None, "og:title: the post's title", LINKEDIN_INSPECTOR),
        Rule("no_card_tags", "info", ("og:",), "Open Graph tags: what Post Inspector reads", LINKEDIN_INSPECTOR),
    ),
    "slack": (
        ALL,
        CLOAKED,
        Rule("no_card_tags", "warning", ("og:", "twitter:", "oembed:"),
             "oEmbed, Twitter Card or Open Graph tags: what the unfurler looks for", SLACK_ROBOTS),
        Rule("image_unreachable", "warning", None, "an image the tags name is fetched to check it is valid",
             SLACK_ROBOTS),
    ),
    "discord": (ALL, CLOAKED),
    "mastodon": (
        ALL,
        CLOAKED,
        Rule("no_card_tags", "info", ("og:", "oembed:"), "a preview card is generated from OpenGraph tags",
             MASTODON_CARD),
    ),
    "bluesky": (
        ALL,
        CLOAKED,
        Rule("title_missing", "info", None, "a link card has a title, a description and an optional thumb",
             BLUESKY_EXTERNAL),
        Rule("description_missing", "info", None, "a link card has a title, a description and an optional thumb",
             BLUESKY_EXTERNAL),
    ),
}

ASPECT_TOLERANCE = 0.10    # an image within 10% of the stated ratio is taken as that ratio


def readme_table() -> str:
    """The README's table of PLATFORMS: one row per rule, in order."""
    rows = ["| Platform | Finding | Severity | What the platform states | Source |", "|---|---|---|---|---|"]
    for platform, rules in PLATFORMS.items():
        for rule in rules:
            rows.append(f"| {platform} | `{rule.code}` | {rule.severity} | {rule.states} | {rule.source} |")
    return "\n".join(rows) + "\n"


def findings(metadata: metadata_pb2.UrlMetadata) -> list[metadata_pb2.Finding]:
    found: list[metadata_pb2.Finding] = []
    for platform, rules in PLATFORMS.items():
        found.extend(metadata_pb2.Finding(platform=platform, code=rule.code, severity=rule.severity,
                                          field=field, message=message)
                     for rule, field, message in _platform(metadata, rules))
    return found


# A difference between the two looks, in words (spiderduck.extract.honesty.DIFFERENCES).
DIFFERENCE_WORDS = {
    "final_domain": "it ends on another domain",
    "redirects": "its redirects pass through other domains",
    "status": "another HTTP status",
    "title": "another title",
    "description": "another description",
    "image": "another image",
    "claimed_domain": "the card claims a domain the page is not on",
}


def differences_text(differences: Iterable[str]) -> str:
    """A `differs` verdict's differences in words, each with its name: `another title (title)`."""
    words = ", ".join(f"{DIFFERENCE_WORDS.get(name, name)} ({name})" for name in differences)
    return words or "differences not named"


def _platform(metadata: metadata_pb2.UrlMetadata, rules: tuple[Rule, ...]):
    by_code: dict[str, list[Rule]] = {}
    for rule in rules:
        by_code.setdefault(rule.code, []).append(rule)

    def first(code: str) -> Rule | None:
        return by_code.get(code, [None])[0]

    rule = first("cloaked")
    if rule is not None and metadata.HasField("honesty") and metadata.honesty.verdict == DIFFERS:
        ended = metadata.honesty.browser_final_url
        where = f"; a browser ended at {ended}" if ended else ""
        yield rule, "", f"a browser that follows this link sees something other than its card: " \
                        f"{differences_text(metadata.honesty.differences)}{where}"
    if metadata.status == metadata_pb2.INTERSTITIAL:
        rule = first("interstitial")
        yield rule, "", f"the page is a wall, not the content ({metadata.error or 'interstitial'}): {rule.states}"
        return
    if metadata.status == metadata_pb2.ROBOTS_DISALLOWED:
        rule = first("blocked_by_robots")
        if rule is not None:
            yield rule, "", f"robots.txt refused SpiderDuck's crawler; {rule.states}"
        return
    if metadata.status != metadata_pb2.OK:
        return      # nothing was read: a platform's view of the page is unknown

    sources = {entry.field: entry.source for entry in metadata.provenance}
    directives = set(metadata.robots_directives)
    rule = first("no_card_tags")
    if rule is not None and not _has_card_tags(rule.value, sources):
        yield rule, "", f"no field was read from {' or '.join(rule.value)} tags: {rule.states}"
    rule = first("title_missing")
    if rule is not None and not metadata.title:
        yield rule, "title", f"no title: {rule.states}"
    rule = first("title_too_long")
    if rule is not None and len(metadata.title) > rule.value:
        yield rule, "title", f"the title has {len(metadata.title)} characters: {rule.states}"
    rule = first("description_missing")
    if rule is not None and not metadata.description:
        why = " (withheld: the page's robots directives say nosnippet)" if "nosnippet" in directives else ""
        yield rule, "description", f"no description{why}: {rule.states}"
    rule = first("description_too_long")
    if rule is not None and len(metadata.description) > rule.value:
        yield rule, "description", f"the description has {len(metadata.description)} characters: {rule.states}"
    yield from _image(metadata.image, by_code, directives)


def _has_card_tags(prefixes, sources: dict[str, str]) -> bool:
    for prefix in prefixes:
        if "+" in prefix:       # every one of these tags
            if all(tag in sources.values() for tag in prefix.split("+")):
                return True
        elif any(source.startswith(prefix) for source in sources.values()):
            return True
    return False


def _image(image: metadata_pb2.Image, by_code: dict[str, list[Rule]], directives: set[str]):
    if not image.url:
        for rule in by_code.get("image_missing", []):
            why = (" (withheld: the page's robots directives say max-image-preview:none)"
                   if "max-image-preview:none" in directives else "")
            yield rule, "image", f"no image{why}: {rule.states}"
        return
    content_type = image.content_type.split(";")[0].strip().lower()
    for rule in by_code.get("image_unreachable", [])[:1]:
        if not image.url.startswith(("http://", "https://")) or (content_type and not content_type.startswith("image/")):
            yield rule, "image", f"the image {image.url} is not a fetchable image ({content_type or 'no http(s) URL'}): " \
                                 f"{rule.states}"
    for rule in by_code.get("image_format", [])[:1]:
        if content_type in rule.value:
            yield rule, "image", f"the image is {content_type}: {rule.states}"
    if image.width <= 0 or image.height <= 0:
        return      # size unknown: no size finding
    for rule in by_code.get("image_too_small", []):     # the strictest it falls under, only
        width, height = rule.value
        if image.width < width or image.height < height:
            yield rule, "image", f"the image is {image.width}×{image.height} px: {rule.states}"
            break
    for rule in by_code.get("image_aspect", [])[:1]:
        ratio = image.width / image.height
        if abs(ratio - rule.value) > rule.value * ASPECT_TOLERANCE:
            yield rule, "image", f"the image is {ratio:.2f}:1: {rule.states}"
