"""Refresh hops (issue 41): `<meta http-equiv="refresh" content="0; url=...">` and the `Refresh:`
header, read as a redirect when the page has no card of its own.

    parse("0; url=/next")                          -> (0, "/next")
    next_hop(url, body, content_type=..., header=..., max_delay=5.0)
                                                   -> (META_REFRESH or REFRESH_HEADER, URL) or None

`parse` is the HTML Standard's "shared declarative refresh steps": a delay (ASCII digits; a
fraction is read and ignored), then optionally `;` or `,`, then optionally `url=` (any case,
white space around the `=`), then the URL, optionally quoted (up to the closing quote). A value
that does not start with a delay is no refresh (None); one without a URL refreshes the page itself
(URL None). The Refresh header has the same syntax.

`next_hop` is the scheduler's question about one answer (the Redirect Follower asks it of every
answer that is not a 3xx): where a refresh sends the reader, if it is to be followed. It is
followed when, in order:

- its delay is at most `max_delay` seconds (process.meta_refresh_max_delay): a page that refreshes
  later is meant to be read first;
- it names an http(s) URL other than the page's own (a self-refresh reloads; javascript:, data:
  and the like are no hop), resolved against the page's URL, and for a meta against its
  `<base href>`. The header wins over a meta, as in a browser (it is read first);
- the page has no card of its own (`has_own_card`): no og: or twitter: meta with content, and at
  most a line of visible text (MAX_TEXT_CHARS). Its title does not count: a "Redirecting…" title
  is no card. A header on an answer with an empty body follows; on a body that is not HTML (an
  image, a PDF: its own content) it does not.

Work is bounded and cheap for the pages that have no refresh, which are nearly all: a body over
SCAN_BYTES is a page of its own (a redirect page is a few KiB) and is never parsed; a smaller one
without `http-equiv="refresh"` in its bytes (any case) and without a Refresh header is not parsed
either. A
parse reads at most SCAN_BYTES, and a page of more than MAX_TAGS tags is a page of its own, so a
deep nest is never built. A content or header value longer than MAX_VALUE_CHARS is ignored.
"""
from __future__ import annotations

import re
from itertools import islice

from selectolax.lexbor import LexborHTMLParser

from spiderduck.core import urls
from spiderduck.core.fetch import HTML_TYPES, FetchResult, declared_type, looks_like_html
from spiderduck.core.record import META_REFRESH, REFRESH_HEADER
from spiderduck.core.status import Status

# The most of a body examined; a longer body is a page of its own (redirect pages are a few KiB).
SCAN_BYTES = 65_536
# "At most a line of visible text": characters of the body's text, white space folded, script,
# style, noscript and template left out ("Redirecting to https://example.com/..., click here").
MAX_TEXT_CHARS = 200
# Tags in the bytes examined: more is a page of its own (and keeps lexbor off a deep nest).
MAX_TAGS = 2_000
# http-equiv attributes looked at for "refresh" before a parse (a page has one or two).
MAX_MARKERS = 16
# A content attribute or Refresh header longer than this is ignored (a URL is at most a few KiB).
MAX_VALUE_CHARS = 8_192

_WHITE = "\t\n\f\r "                    # the HTML Standard's ASCII white space
_DELAY = re.compile(r"[\t\n\f\r ]*([0-9]*)([0-9.]*)")
_MAX_DIGITS = 9                         # a longer delay is "forever", never an int() of 1 MB
_TAG = re.compile(rb"<[A-Za-z/!?]")
_EXCLUDED_TEXT = ["script", "style", "noscript", "template"]
_CARD_PREFIXES = ("og:", "twitter:")


def parse(value: str) -> tuple[int, str | None] | None:
    """(delay in seconds, URL as written or None for the page itself) of a meta refresh's content
    or a Refresh header, by the HTML Standard's shared declarative refresh steps; None when the
    value is no refresh (or longer than MAX_VALUE_CHARS)."""
    if len(value) > MAX_VALUE_CHARS:
        return None
    found = _DELAY.match(value)
    digits, fraction = found.groups()
    if not digits and not fraction:     # no delay: neither digits nor a "." (".5" is 0)
        return None
    delay = int(digits) if 0 < len(digits) <= _MAX_DIGITS else (10 ** _MAX_DIGITS if digits else 0)
    at, end = found.end(), len(value)
    if at < end:
        if value[at] not in ";," + _WHITE:
            return None
        at = _skip_white(value, at)
        if at < end and value[at] in ";,":
            at = _skip_white(value, at + 1)
    if at >= end:
        return delay, None
    return delay, _url_string(value, at)


def _skip_white(value: str, at: int) -> int:
    while at < len(value) and value[at] in _WHITE:
        at += 1
    return at


def _url_string(value: str, at: int) -> str:
    """The steps' "URL string" from `at`: past an optional `url =`, up to a closing quote."""
    whole = value[at:]
    if value[at:at + 1] in ("U", "u"):
        if value[at + 1:at + 2].lower() != "r" or value[at + 2:at + 3].lower() != "l":
            return whole                # "Parse": the rest as it is ("urn:x", "u/x")
        at = _skip_white(value, at + 3)
        if value[at:at + 1] != "=":
            return whole
        at = _skip_white(value, at + 1)
    quote = value[at:at + 1]
    if quote in ("'", '"'):
        rest = value[at + 1:]
        end = rest.find(quote)
        return rest if end < 0 else rest[:end]
    return value[at:]


def next_hop_of(result: FetchResult, *, max_delay: float,
                even_with_card: bool = False) -> tuple[str, str] | None:
    """next_hop of a fetched answer: only a successful one (2xx) refreshes, and none where
    refreshes are off (max_delay 0)."""
    if result.status is not Status.OK or not 200 <= result.http_status < 300 or max_delay <= 0:
        return None
    return next_hop(result.url, result.body, content_type=result.header("content-type"),
                    header=result.header("refresh"), max_delay=max_delay, even_with_card=even_with_card)


def next_hop(url: str, body: bytes, *, content_type: str | None, header: str | None,
             max_delay: float, even_with_card: bool = False) -> tuple[str, str] | None:
    """(kind, canonical URL) of the refresh the answer for `url` asks to follow, or None (see the
    module's docstring). `content_type` and `header` are the answer's Content-Type and Refresh
    headers (None when absent). `even_with_card`: a page with a card of its own refreshes too, as
    a person's browser follows it (issue 43's second look). Never raises for what the page holds."""
    if len(body) > SCAN_BYTES:
        return None
    html = _is_html(content_type, body)
    if header is not None:
        refresh = parse(header)
        if refresh is not None:         # the header is read first, and decides
            hop = _target(url, url, refresh, max_delay)
            if hop is None or (body.strip() and not html):
                return None
            if body.strip() and not even_with_card and has_own_card(_tree(body)):
                return None
            return REFRESH_HEADER, hop
    if not html or not _says_refresh(body):
        return None
    tree = _tree(body)
    refresh = _meta_refresh(tree)
    if refresh is None:
        return None
    hop = _target(_base(tree, url), url, refresh, max_delay)
    if hop is None or (not even_with_card and has_own_card(tree)):
        return None
    return META_REFRESH, hop


def _says_refresh(body: bytes) -> bool:
    """The cheap test before a parse: the bytes "http-equiv" (any case) with "refresh" right after
    (`http-equiv = "Refresh"`), so the common `http-equiv="Content-Type"` costs no parse. Past
    MAX_MARKERS of them, the parse decides."""
    low = body.lower()
    at = low.find(b"http-equiv")
    for _ in range(MAX_MARKERS):
        if at < 0:
            return False
        if b"refresh" in low[at + 10:at + 32]:
            return True
        at = low.find(b"http-equiv", at + 10)
    return at >= 0


def _is_html(content_type: str | None, body: bytes) -> bool:
    kind = declared_type(content_type)
    if kind:
        return kind in HTML_TYPES
    return looks_like_html(body) or b"<meta" in body[:512].lower()


def _tree(body: bytes) -> LexborHTMLParser | None:
    """The page parsed, or None when it holds more than MAX_TAGS tags (a page of its own)."""
    if next(islice(_TAG.finditer(body), MAX_TAGS, None), None) is not None:
        return None
    return LexborHTMLParser(body)


def _meta_refresh(tree: LexborHTMLParser | None) -> tuple[int, str | None] | None:
    """The page's refresh meta, parsed: the first whose content is a refresh (as a browser
    takes it). One inside <noscript> is for browsers without JavaScript, which readers' are not."""
    if tree is None:
        return None
    for node in tree.css("meta[http-equiv]"):
        attrs = node.attributes
        if (attrs.get("http-equiv") or "").lower() != "refresh" or _in_noscript(node):
            continue
        refresh = parse(attrs.get("content") or "")
        if refresh is not None:
            return refresh
    return None


def _in_noscript(node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag == "noscript":
            return True
        parent = parent.parent
    return False


def _base(tree: LexborHTMLParser | None, url: str) -> str:
    """The page's base URL: its first <base href>, resolved against `url`; else `url`."""
    node = tree.css_first("base[href]") if tree is not None else None
    href = (node.attributes.get("href") or "") if node is not None else ""
    return (urls.join(url, href.strip()) or url) if href.strip() else url


def _target(base: str, url: str, refresh: tuple[int, str | None] | None, max_delay: float) -> str | None:
    """The canonical http(s) URL a refresh sends to, when it is soon enough and not `url` itself."""
    if refresh is None or refresh[0] > max_delay or refresh[1] is None:
        return None
    joined = urls.join(base, refresh[1])
    if joined is None:
        return None
    try:
        hop = urls.canonicalize(joined)
    except urls.InvalidUrl:             # javascript:, data:, mailto:, an unusable URL
        return None
    return None if hop == url else hop


def has_own_card(tree: LexborHTMLParser | None) -> bool:
    """Whether a page makes a card of its own: an og: or twitter: meta with content, or more than
    a line of visible text (MAX_TEXT_CHARS); None (too many tags to read) is a page of its own."""
    if tree is None:
        return True
    for node in tree.css("meta[content]"):
        attrs = node.attributes
        name = (attrs.get("property") or attrs.get("name") or "").strip().lower()
        if name.startswith(_CARD_PREFIXES) and (attrs.get("content") or "").strip():
            return True
    tree.strip_tags(_EXCLUDED_TEXT)
    body = tree.body
    text = body.text(separator=" ") if body is not None else ""
    return len(" ".join(text.split())) > MAX_TEXT_CHARS
