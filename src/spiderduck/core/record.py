"""The metadata record, as the stages see it: plain frozen dataclasses.

Protobuf stays at the edges (spiderduck.wire.record_proto converts); JSON is
protobuf's JSON mapping with the proto field names (DESIGN "The metadata record").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spiderduck.core.status import Status
from spiderduck.core.frozen import evolve


# Redirect.kind: how a hop moved on to the next URL.
HTTP_REDIRECT, META_REFRESH, REFRESH_HEADER = "http", "meta-refresh", "refresh-header"
REDIRECT_KINDS = (HTTP_REDIRECT, META_REFRESH, REFRESH_HEADER)


@dataclass(frozen=True)
class Redirect:
    url: str
    http_status: int
    kind: str = HTTP_REDIRECT         # REDIRECT_KINDS: a 3xx Location, <meta http-equiv=refresh>, a Refresh header


@dataclass(frozen=True)
class Media:
    url: str
    width: int = 0
    height: int = 0
    content_type: str = ""


@dataclass(frozen=True)
class Image(Media):
    """The page's representative image."""


@dataclass(frozen=True)
class Video(Media):
    """The page's video (og:video), or the file's own (a video file)."""
    duration_ms: int = 0              # 0: unknown


@dataclass(frozen=True)
class Audio:
    """The page's audio (og:audio, twitter:player:stream, <audio>), or the file itself."""
    url: str
    content_type: str = ""
    duration_ms: int = 0              # 0: unknown


@dataclass(frozen=True)
class Document:
    """What a document file (a PDF) says of itself beyond the common fields."""
    pages: int = 0                    # 0: unknown


@dataclass(frozen=True)
class Label:
    """One label pair a card shows (twitter:label1 / twitter:data1): as written."""
    name: str
    value: str


@dataclass(frozen=True)
class Offer:
    """A product's offer: price as its decimal text, currency ISO 4217, availability in snake
    case of schema.org's ItemAvailability names (in_stock, out_of_stock, pre_order, ...)."""
    price: str = ""
    currency: str = ""
    availability: str = ""


@dataclass(frozen=True)
class Honesty:
    """A second look at the URL as a person's browser, against the card (issue 43):
    `verdict` consistent, differs or unchecked (spiderduck.extract.honesty.VERDICTS);
    `differences` when it differs (honesty.DIFFERENCES' order); where the browser's look ended;
    when it was made (epoch seconds; 0 when unchecked)."""
    verdict: str
    differences: tuple[str, ...] = ()
    browser_final_url: str = ""
    checked_at: float = 0.0


# UrlRecord.medium: what the link is (the page's own statements, or the file's type).
MEDIUMS = ("article", "video", "audio", "image", "document", "product", "profile", "website", "file")
# UrlRecord.card_style: the card the page asks for (twitter:card), else derived from its image.
CARD_STYLES = ("summary", "summary_large_image", "player", "app")


@dataclass(frozen=True)
class Candidate:
    """A value a page offered for a field, and why it is not the record's (ExplainUrl): `reason`
    empty while the extraction's rule would take it."""
    source: str
    value: str
    reason: str = ""


@dataclass(frozen=True)
class FieldSource:
    """Where one field of a record was read (UrlMetadata.provenance): `field` by its JSON name,
    `source` the meta name or property as written, lower-case (`og:title`), `json-ld:<property>`,
    `microdata:<itemprop>`, `<title>`, `<img>`, `<link rel=icon>`, `<html lang>`, `oembed:<field>`,
    `manifest:icons`, `/favicon.ico`, or `derived` (from the URL or another field). `rejected`: ExplainUrl's, each
    value that lost and why; empty in stored records."""
    field: str
    source: str
    rejected: tuple[Candidate, ...] = ()


# The fields provenance covers, in the order it lists them.
PROVENANCE_FIELDS = ("title", "description", "image", "site_name", "author", "published_time",
                     "canonical_url", "lang", "favicon", "medium", "images", "logo",
                     "theme_color", "theme_color_dark", "card_style", "labels", "offer", "word_count",
                     "reading_time_s", "audio", "video", "document", "file_size")


def with_source(provenance: tuple[FieldSource, ...], field: str, source: str) -> tuple[FieldSource, ...]:
    """`provenance` with `field` read from `source` (its entry replaced, or added in PROVENANCE_FIELDS'
    order; `source` '': the field is empty now, its entry dropped)."""
    kept = [p for p in provenance if p.field != field]
    if source:
        kept.append(FieldSource(field, source))
    rank = {name: n for n, name in enumerate(PROVENANCE_FIELDS)}
    return tuple(sorted(kept, key=lambda p: rank.get(p.field, len(rank))))


@dataclass(frozen=True)
class PageMetadata:
    """What the Post Processor extracts from one page."""
    title: str = ""
    description: str = ""
    site_name: str = ""
    author: str = ""
    published_time: str = ""          # RFC 3339, or empty: when the page was first published
    modified_time: str = ""           # RFC 3339, or empty: when the page says it was last modified
    lang: str = ""
    canonical_url: str = ""           # absolute, or empty when the page names none
    image: Image | None = None
    favicon: str = ""
    type: str = ""
    video: Video | None = None
    structured_data: dict[str, Any] | None = None
    charset: str = ""
    robots_directives: tuple[str, ...] = ()   # from the page's robots metas (X-Robots-Tag is added later)
    sensitive: bool = False
    fediverse_creator: str = ""
    provenance: tuple[FieldSource, ...] = ()  # one per filled field (PROVENANCE_FIELDS), canonical_url too
    medium: str = ""                  # MEDIUMS: og:type, JSON-LD @type
    images: tuple[Image, ...] = ()    # every card image the page declares, in page order, de-duplicated
    logo: Image | None = None         # the publisher's logo (not the favicon)
    theme_color: str = ""             # #rrggbb
    theme_color_dark: str = ""        # #rrggbb, for (prefers-color-scheme: dark)
    card_style: str = ""              # CARD_STYLES
    labels: tuple[Label, ...] = ()    # twitter:label1/data1 and onwards, in order
    offer: Offer | None = None        # a product's offer
    word_count: int = 0               # an article's main text, in words
    reading_time_s: int = 0           # its reading time: stated, else word_count at 230 a minute
    audio: Audio | None = None        # og:audio, twitter:player:stream, <audio>
    # Not part of the record:
    oembed_url: str = ""              # the page's oEmbed, for related fetches
    manifest_url: str = ""            # the page's web app manifest, for related fetches (its icons: logo)
    interstitial: str = ""            # "<kind>: <reason>" when the page is a wall (Status.INTERSTITIAL)
    image_candidates: tuple[Image, ...] = ()  # every usable image, best first (image is the first)
    image_sources: tuple[str, ...] = ()       # where each of image_candidates was read (provenance)
    players: tuple[Video, ...] = ()   # og:video and twitter:player, for embed_html (extraction.embeds)
    claimed_url: str = ""             # og:url, else <link rel=canonical>, absolute, believed or not (honesty)
    script_redirect: str = ""         # where an inline script sends the reader on load (extract.script_redirect)


# UrlRecord.fetch_mode: how the record was read. STATIC: from the fetched HTML; RENDERED: from the
# DOM after a headless browser ran the page's scripts; '' when no page was read (an error, a page
# that is not HTML) or for a record made before the field.
STATIC = "static"
RENDERED = "rendered"
FETCH_MODES = (STATIC, RENDERED)


@dataclass(frozen=True)
class UrlRecord:
    url: str                           # as submitted (stored: as first submitted)
    status: Status
    canonical_url: str = ""
    final_url: str = ""
    http_status: int = 0
    redirects: tuple[Redirect, ...] = ()
    content_type: str = ""
    charset: str = ""
    title: str = ""
    description: str = ""
    site_name: str = ""
    author: str = ""
    published_time: str = ""
    lang: str = ""
    image: Image | None = None
    favicon: str = ""
    type: str = ""
    video: Video | None = None
    structured_data: dict[str, Any] | None = None
    share_count: int = 0
    first_seen: float = 0.0           # epoch seconds
    fetched_at: float = 0.0           # epoch seconds
    content_ref: str = ""
    error: str = ""
    content_length: int = 0           # body bytes of the final hop as read, after decoding
    expires_at: float = 0.0           # epoch seconds the record stops being fresh (0: written before)
    etag: str = ""                    # the final response's ETag, as sent (for If-None-Match)
    last_modified: float = 0.0        # its Last-Modified, epoch seconds (for If-Modified-Since)
    robots_directives: tuple[str, ...] = ()   # lower-case: robots metas and X-Robots-Tag
    clean_url: str = ""               # the final URL without tracking parameters
    removed_params: tuple[str, ...] = ()      # the parameters clean_url left out
    sensitive: bool = False           # the page declares adult content
    embed_html: str = ""              # one iframe from an allowed host
    fediverse_creator: str = ""       # <meta name="fediverse:creator">
    truncated: bool = False           # the metadata is of the page's first part (body over the cap, or its head alone)
    modified_time: str = ""           # RFC 3339, or empty: when the page says it was last modified
    provenance: tuple[FieldSource, ...] = ()  # where each filled field was read (PROVENANCE_FIELDS' order)
    fetch_mode: str = ""              # STATIC or RENDERED: how the page was read; '' when none was
    medium: str = ""                  # MEDIUMS: what the link is
    images: tuple[Image, ...] = ()    # every card image the page declares, in page order (image: the first usable)
    logo: Image | None = None         # the publisher's logo, apart from the favicon
    theme_color: str = ""             # #rrggbb
    theme_color_dark: str = ""        # #rrggbb, for (prefers-color-scheme: dark)
    card_style: str = ""              # CARD_STYLES
    labels: tuple[Label, ...] = ()    # the label pairs a card shows, in order, as written
    offer: Offer | None = None        # a product's offer
    word_count: int = 0               # an article's main text, in words
    reading_time_s: int = 0           # its reading time in seconds
    audio: Audio | None = None        # the page's audio, or the audio file itself
    document: Document | None = None  # a document file's own facts (a PDF's pages)
    file_size: int = 0                # a file's size as its origin declares it (Content-Length, Content-Range's total)
    honesty: Honesty | None = None    # a browser's look against the card (issue 43); None: not checked

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def chain(self) -> tuple[str, ...]:
        """Every URL of the redirect chain, the final one last."""
        urls = tuple(r.url for r in self.redirects)
        return urls + ((self.final_url,) if self.final_url else ())


PAGE_FIELDS = tuple(f for f in PageMetadata.__dataclass_fields__
                    if f not in ("canonical_url", "oembed_url", "manifest_url", "interstitial", "image_candidates",
                                  "image_sources", "players", "claimed_url", "script_redirect"))


def with_page(page: PageMetadata) -> dict[str, Any]:
    """The record fields a page's metadata fills (for dataclasses.replace)."""
    values = {name: getattr(page, name) for name in PAGE_FIELDS}
    values = {k: v for k, v in values.items() if v not in ("", None, (), False)}
    if page.canonical_url:
        values["canonical_url"] = page.canonical_url
    return values


def field_text(record: UrlRecord | PageMetadata, field: str) -> str:
    """A field's value as one line of text (ExplainUrl's and the web page's "why this preview"):
    a media field's URL, a list's items joined, an offer's parts, a number as digits; '' when empty."""
    value = getattr(record, field, None)
    if value is None or value == "" or value == 0 or value == ():
        return ""
    if isinstance(value, (Media, Audio)):
        return value.url
    if isinstance(value, Document):
        return f"{value.pages} pages" if value.pages else ""
    if isinstance(value, Offer):
        return " ".join(v for v in (value.price, value.currency, value.availability) if v)
    if isinstance(value, tuple):
        return "; ".join(f"{v.name}: {v.value}" if isinstance(v, Label) else field_text_of(v) for v in value)
    return str(value)


def field_text_of(value: object) -> str:
    return value.url if isinstance(value, (Media, Audio)) else str(value)
