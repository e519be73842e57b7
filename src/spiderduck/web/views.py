"""What the pages show of a record: the preview card, the redirect chain, the freshness state.

Everything here is plain data for the templates, which escape it. The only markup that reaches
a page unescaped is the embed, rebuilt again here by the sanitiser the extraction uses too
(spiderduck.extract.embeds) from the allowed hosts in force now. URLs shown as links or
loaded as images are http(s) only; their origins are what the page's Content-Security-Policy
allows (web.security)."""
from __future__ import annotations

import datetime
import ipaddress
import json
import re
from dataclasses import dataclass
from typing import Sequence

from markupsafe import Markup

from spiderduck.wire import record_proto

from spiderduck.core import urls
from spiderduck.core.freshness import Freshness
from spiderduck.core.record import Candidate, FieldSource, UrlRecord, field_text
from spiderduck.web.card_facts import facts_of
from spiderduck.extract.embeds import from_oembed_html
from spiderduck.extract.honesty import DIFFERS
from spiderduck.query.findings import differences_text, findings
from spiderduck.core.frozen import evolve

_HOST = re.compile(r"^[A-Za-z0-9.\-]+$|^\[[0-9A-Fa-f:.]+\]$")
_IFRAME_SRC = re.compile(r'\ssrc="([^"]*)"')


def web_url(url: str) -> str:
    """The URL as a browser reads it (its WHATWG serialization) when it is http(s) with a plain
    host, else ''."""
    parsed = _parsed(url)
    return parsed.href if parsed is not None else ""


def origin_of(url: str) -> str:
    """scheme://host[:port] of an http(s) URL as a browser parses it (WHATWG, through ada, so
    the CSP allows what the browser loads), '' for anything else. A CSP source must not carry
    spaces, quotes or semicolons: a host outside plain names and IP literals is refused."""
    parsed = _parsed(url)
    return parsed.origin if parsed is not None else ""


def _parsed(url: str):
    try:
        parsed = urls.parse(url)
    except urls.InvalidUrl:
        return None
    if parsed.protocol not in ("http:", "https:") or not _HOST.match(parsed.hostname):
        return None
    if _private_literal(parsed.hostname):
        return None
    return parsed


def _private_literal(host: str) -> bool:
    """An IP address that is not public (loopback, private, link-local, reserved): a crawled
    page must not make an operator's browser load from the operator's own network. (A name is
    resolved by the browser, out of our sight.)"""
    try:
        return not ipaddress.ip_address(host.strip("[]")).is_global
    except ValueError:
        return False


@dataclass(frozen=True)
class Hop:
    url: str
    http_status: int
    link: str                  # the URL when it may be a link, else ''
    kind: str = ""             # how it moved on (Redirect.kind) when not a plain 3xx


@dataclass(frozen=True)
class Card:
    title: str
    description: str
    site: str
    url: str                   # the final URL
    link: str                  # ... when it may be a link
    host: str
    image: str                 # http(s) only, else ''
    favicon: str
    embed: Markup              # a sandboxed iframe from an allowed host, or ''
    embed_origin: str
    status: str
    http_status: int
    error: str
    sensitive: bool
    medium: str = ""
    logo: str = ""             # http(s) only, else ''
    facts: tuple[tuple[str, str], ...] = ()   # (name, text): labels, offer, reading time, duration, pages, size
    cloaked: str = ""          # a browser's look differs from the card (issue 43): the differences in words
    browser_ended: str = ""    # ... and where that browser ended (shown as text, never a link)

    @property
    def origins(self) -> dict[str, list[str]]:
        """The CSP sources this card loads from: img-src and frame-src."""
        images = sorted({o for o in (origin_of(self.image), origin_of(self.favicon), origin_of(self.logo)) if o})
        return {"img-src": images, "frame-src": [self.embed_origin] if self.embed_origin else []}


def card_of(record: UrlRecord, allow_hosts: Sequence[str]) -> Card:
    final = record.final_url or record.url
    parsed = _parsed(final)
    image = web_url(record.image.url) if record.image is not None else ""
    embed = from_oembed_html(record.embed_html, allow_hosts) if record.embed_html else ""
    src = _IFRAME_SRC.search(embed)
    embed_origin = origin_of(src.group(1).replace("&amp;", "&")) if src else ""
    return Card(
        title=record.title or final, description=record.description, site=record.site_name,
        url=final, link=parsed.href if parsed else "", host=parsed.hostname if parsed else "",
        image=image,
        favicon=web_url(record.favicon), embed=Markup(embed) if embed_origin else Markup(""),
        embed_origin=embed_origin, status=record.status.name, http_status=record.http_status,
        error=record.error, sensitive=record.sensitive, medium=record.medium,
        logo=web_url(record.logo.url) if record.logo is not None else "", facts=facts_of(record),
        **_cloaked(record))


def _cloaked(record: UrlRecord) -> dict[str, str]:
    """The card's warning when a browser's look differs from it (spiderduck.extract.honesty)."""
    honesty = record.honesty
    if honesty is None or honesty.verdict != DIFFERS:
        return {}
    return {"cloaked": differences_text(honesty.differences), "browser_ended": honesty.browser_final_url}


def chain_of(record: UrlRecord) -> list[Hop]:
    """Each hop, the final one last, with the HTTP status it answered."""
    hops = [(r.url, r.http_status, "" if r.kind == "http" else r.kind) for r in record.redirects]
    hops.append((record.final_url or record.url, record.http_status, ""))
    return [Hop(url, status, web_url(url), kind) for url, status, kind in hops]


@dataclass(frozen=True)
class FreshnessView:
    state: str                 # fresh | stale | expired
    expires_at: str            # RFC 3339, UTC
    explanation: str


def _utc(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def freshness_of(record: UrlRecord, freshness: Freshness, serve_stale_for: float, now: float) -> FreshnessView:
    expiry = freshness.expiry(record)
    if freshness.is_fresh(record, now):
        return FreshnessView("fresh", _utc(expiry), "answered without a fetch until it expires")
    if freshness.servable_stale(record, now, serve_stale_for):
        return FreshnessView("stale", _utc(expiry), "answered at once while one refresh re-fetches it, until "
                             + _utc(expiry + serve_stale_for))
    return FreshnessView("expired", _utc(expiry), "the next request for it fetches it again")


def record_json(record: UrlRecord, asked: str) -> str:
    """The record as `spiderduck get` prints it, indented."""
    row = record_proto.to_dict(evolve(record, url=asked))
    return json.dumps(row, ensure_ascii=False, indent=2)


@dataclass(frozen=True)
class FieldRow:
    field: str
    value: str
    source: str
    rejected: tuple[Candidate, ...] = ()      # the values that lost, and why


@dataclass(frozen=True)
class FindingRow:
    severity: str
    code: str
    field: str
    message: str


@dataclass(frozen=True)
class Why:
    """"Why this preview": each field, its value, where it was read and the values that lost
    (spiderduck.query.explainer); each platform's findings (spiderduck.query.findings), platforms in the order
    findings lists them; `note`: why the stored page was not read again, if it was not."""
    fields: list[FieldRow]
    platforms: dict[str, list[FindingRow]]
    note: str = ""


def why_of(record: UrlRecord, explained: tuple[FieldSource, ...] = (), note: str = "") -> Why:
    metadata = record_proto.to_proto(record)
    fields = []
    for p in explained or record.provenance:
        fields.append(FieldRow(p.field, field_text(record, p.field), p.source, p.rejected))
    platforms: dict[str, list[FindingRow]] = {}
    for f in findings(metadata):
        platforms.setdefault(f.platform, []).append(FindingRow(f.severity, f.code, f.field, f.message))
    return Why(fields, platforms)
