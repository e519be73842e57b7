"""What a publisher tells previewers: robots directives, an adult-content label, a fediverse author.

Robots directives come from `<meta name="robots">`, the meta named for our user agent's product
token (`<meta name="spiderduck">`) and the `X-Robots-Tag` response header, whose directives may be
scoped to one crawler (`X-Robots-Tag: spiderduck: noarchive`; a scope holds until the next one,
as Google reads it). They are kept lower-case, white space folded, each once, the ones honoured
first, then the others in that order, at most MAX_DIRECTIVES (every one is read, so a page's
many directives never push out a header's noarchive). Three are honoured before the record is
stored (`withheld`):

- `noarchive`: the raw content is not logged (no WARC record; `content_ref` empty);
- `nosnippet` (or `max-snippet:0`): no description;
- `max-image-preview:none`: no image.

Either of the last two also drops the record's structured data, which repeats the page's
description, body and images (og:description, JSON-LD description and articleBody, og:image).

A page is `sensitive` when it declares adult content: `<meta name="rating">` of `adult`, `mature`
or the RTA label, an `og:restrictions:age` of 18 or more, or JSON-LD `isFamilyFriendly: false`.
"""
from __future__ import annotations

import re
from typing import Iterable

from spiderduck.core.user_agent import product_token
from spiderduck.extract import values
from spiderduck.extract.document import Document
from spiderduck.extract.jsonld import Graph

NOARCHIVE = "noarchive"
NOSNIPPET = ("nosnippet", "max-snippet:0")
NO_IMAGE = "max-image-preview:none"
_HONOURED = frozenset({NOARCHIVE, *NOSNIPPET, NO_IMAGE})

MAX_DIRECTIVES = 32            # kept per page; a directive is at most MAX_DIRECTIVE_CHARS
MAX_DIRECTIVE_CHARS = 128
MAX_VALUE_CHARS = 4096         # of one meta content or header value read
MAX_PARTS = 256                # directives read from one meta content or header value
# Directives whose value follows a colon: "max-snippet: 20" is a directive, "googlebot: noindex"
# a scope for the crawler named before the colon.
_VALUED = frozenset({"max-snippet", "max-image-preview", "max-video-preview", "unavailable_after"})
_SCOPED = re.compile(r"([a-z0-9_.-]{1,64})\s*:\s*(.*)", re.S)
# A comma before a day of the month is inside a date ("unavailable_after: Friday, 25-Jun-2030"),
# not between directives.
_SEPARATOR = re.compile(r",(?!\s*\d)")
_VALUED_FORM = re.compile(r"([a-z0-9_-]{1,64})\s*:\s*(.*)", re.S)

RTA_LABEL = "rta-5042-1996-1400-1577-rta"
_ADULT_RATINGS = frozenset({"adult", "mature", RTA_LABEL})
_AGE = re.compile(r"\s*(\d{1,3})\s*\+?\s*")
_FEDIVERSE = re.compile(r"@?([a-z0-9_][a-z0-9_.-]{0,63})@((?:[a-z0-9-]{1,63}\.)+[a-z0-9-]{2,63})", re.I)


def robots_token(user_agent: str) -> str:
    """The name of the robots meta (and X-Robots-Tag scope) meant for us: the product token of
    fetcher.user_agent ("spiderduck"), or "" when it has none."""
    return product_token(user_agent) or ""


def meta_directives(doc: Document, token: str) -> tuple[str, ...]:
    """The directives of the page's robots metas (the general one, then the one for `token`),
    as `merged` keeps them."""
    groups = [_parts(content) for name in ("robots", token) if name for content in doc.meta_all(name)]
    return merged(*groups)


def header_directives(headers: Iterable[str], token: str) -> tuple[str, ...]:
    """The directives of `X-Robots-Tag` header values that apply to us: unscoped ones, and
    those scoped to `token` ("spiderduck: noarchive, nosnippet"). Other crawlers' are left out."""
    found: list[str] = []
    for value in headers:
        scope = ""
        for part in _parts(value):
            m = _SCOPED.fullmatch(part)
            if m and m[1] not in _VALUED:
                scope, part = m[1], m[2]
            if not scope or scope == token:
                found.append(part)
    return merged(found)


def _parts(value: str) -> list[str]:
    """A meta's or header's comma-separated directives, lower-case, white space folded, "key:
    value" written "key:value"; at most MAX_PARTS of them, from its first MAX_VALUE_CHARS."""
    out = []
    for part in _SEPARATOR.split(value[:MAX_VALUE_CHARS], MAX_PARTS)[:MAX_PARTS]:
        directive = values.fold(part).lower()
        m = _VALUED_FORM.fullmatch(directive)
        out.append(f"{m[1]}:{m[2]}" if m and m[1] in _VALUED else directive)
    return out


def merged(*groups: Iterable[str]) -> tuple[str, ...]:
    """Directives as the record keeps them: each once, those honoured first, then the others in
    order, at most MAX_DIRECTIVES."""
    found = dict.fromkeys(d for group in groups for d in group if d and len(d) <= MAX_DIRECTIVE_CHARS)
    honoured = [d for d in found if d in _HONOURED]
    return tuple((honoured + [d for d in found if d not in _HONOURED])[:MAX_DIRECTIVES])


def withheld(directives: tuple[str, ...]) -> dict[str, object]:
    """The record fields a publisher's directives empty: the description for nosnippet, the
    image and the card's images for max-image-preview:none, and with either the structured data
    that repeats them."""
    out: dict[str, object] = {}
    if any(d in NOSNIPPET for d in directives):
        out.update(description="", structured_data=None)
    if NO_IMAGE in directives:
        out.update(image=None, images=(), structured_data=None)
    return out


def no_archive(directives: tuple[str, ...]) -> bool:
    return NOARCHIVE in directives


def no_image(directives: tuple[str, ...]) -> bool:
    return NO_IMAGE in directives


def sensitive(doc: Document, graph: Graph | None) -> bool:
    """Whether the page declares adult content."""
    for rating in doc.meta_all("rating"):
        if values.fold(rating).lower() in _ADULT_RATINGS:
            return True
    for age in doc.meta_all("og:restrictions:age"):
        m = _AGE.fullmatch(age[:16])
        if m and int(m[1]) >= 18:
            return True
    family = graph.get("isFamilyFriendly") if graph else None
    return family is False or (isinstance(family, str) and family.strip().lower() == "false")


def fediverse_creator(doc: Document) -> str:
    """The first well-formed `<meta name="fediverse:creator">`, as "@user@host" (lower-case host)."""
    for content in doc.meta_all("fediverse:creator"):
        m = _FEDIVERSE.fullmatch(content.strip()[:200])
        if m:
            return f"@{m[1]}@{m[2].lower()}"
    return ""
