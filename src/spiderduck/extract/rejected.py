"""Why each value a page offered is not the record's (ExplainUrl, issue 30).

    explain_page(body, url, ...) -> (PageMetadata, offers)          in an extraction worker
    explained(record, offers) -> (FieldSource(field, source, rejected), ...)   beside the record

The page is extracted again from its stored bytes, with every value each field's sources
offered (offers.py). Each offer that is not the record's value gets a reason: the rule's own
refusal (too small, a tracking pixel, not a date, a template's canonical URL, ...); withheld by a
robots directive (nosnippet, max-image-preview:none: the record is emptied of them); for an
image the rule would have taken, that it was not kept when the images were probed at fetch
time: failed to load with its HTTP status, no image, or too small with its size, when the content
log holds the probe's answer (`probes`), else that it failed to load or was too small; and for the site's /favicon.ico, that it was tried
and did not answer with an image; else that its source comes below the record's.
A filled field is listed with its source (from the record's provenance); an empty one only
when the page offered something for it, so "why no image?" has an answer too.
"""
from __future__ import annotations

from typing import Iterable, Mapping, NamedTuple

from spiderduck.core.record import PROVENANCE_FIELDS, Candidate, FieldSource, PageMetadata, UrlRecord, field_text
from spiderduck.extract import signals
from spiderduck.extract.offers import offers
from spiderduck.extract.page import page_of, sources

Offers = tuple[tuple[str, tuple[Candidate, ...]], ...]

NOT_KEPT_WHEN_PROBED = "not kept when the images were probed at fetch time: it failed to load or was too small"
ICO_NOT_KEPT = "tried at fetch time, as the page names no icon: it did not answer 2xx with an image"
RULES_CHANGED = "not chosen when the record was made (the extraction has changed since; a refresh would take it)"
_URL_FIELDS = frozenset({"image", "favicon", "canonical_url"})


def explain_page(body: bytes, url: str, content_type: str | None = None, *, parser: str,
                 robots_token: str, http_status: int = 200) -> tuple[PageMetadata, Offers]:
    """The page's metadata, as extract_page makes it (with the same arguments), and every value
    its sources offered."""
    s, encoding, markup = sources(body, url, content_type, parser=parser)
    return page_of(s, encoding, markup, robots_token, http_status), offers(s)


class Probe(NamedTuple):
    """What an image's probe at fetch time answered, as the content log kept it."""
    http_status: int
    content_type: str
    size: tuple[int, int] | None      # read from its first bytes; None: they are no image


def explained(record: UrlRecord, offered: Offers, probes: Mapping[str, Probe] | None = None,
              min_image_size: int = 0) -> tuple[FieldSource, ...]:
    """One FieldSource per field the record fills (its source from the record's provenance), and
    per empty field the page offered values for, each with the values that lost and why.
    `probes`: the image probes the content log holds, by URL, for an image that was not kept
    (`min_image_size`: process.min_image_size, which they were held to)."""
    kept = {p.field: p.source for p in record.provenance}
    withheld = _withheld(record)
    by_field = dict(offered)
    out = []
    for field in PROVENANCE_FIELDS:
        value = _value(record, field)
        source = kept.get(field, "") if value else ""
        rejected = tuple(_rejected(field, source, value, by_field.get(field, ()), withheld.get(field, ""),
                                   probes or {}, min_image_size))
        if source or rejected:
            out.append(FieldSource(field, source, rejected))
    return tuple(out)


def _value(record: UrlRecord, field: str) -> str:
    """A field's value as text ('' when empty): core.record.field_text."""
    return field_text(record, field)


def _withheld(record: UrlRecord) -> dict[str, str]:
    """{field: the robots directive that emptied it}."""
    directives = record.robots_directives
    out = {}
    nosnippet = next((d for d in signals.NOSNIPPET if d in directives), "")
    if nosnippet and not record.description:
        out["description"] = nosnippet
    if signals.NO_IMAGE in directives and record.image is None:
        out["image"] = signals.NO_IMAGE
    return out


def _rejected(field: str, source: str, value: str, offered: Iterable[Candidate], directive: str,
              probes: Mapping[str, Probe], min_image_size: int) -> Iterable[Candidate]:
    offered = tuple(offered)
    winner = _winner(field, source, value, offered)
    for n, c in enumerate(offered):
        if n == winner:
            continue
        reason = c.reason
        if not reason:
            if directive:
                reason = f"withheld by a robots directive ({directive})"
            elif field == "image" and (winner is None or n < winner):
                reason = _probed(probes.get(c.value), min_image_size)
            elif field == "favicon" and c.source == "/favicon.ico" and winner is None:
                reason = ICO_NOT_KEPT
            elif winner is not None and n > winner:
                same = c.value == offered[winner].value
                reason = (f"the same value, from a source below {source}" if same
                          else f"lower precedence than {source}")
            else:
                reason = RULES_CHANGED
        yield Candidate(c.source, c.value, reason)


def _probed(probe: Probe | None, min_image_size: int) -> str:
    """Why an image was not kept when probed at fetch time, as far as its logged answer says."""
    if probe is None:
        return NOT_KEPT_WHEN_PROBED
    if not 200 <= probe.http_status < 300:
        return f"failed to load when probed at fetch time: HTTP {probe.http_status}"
    if probe.size is None:
        kind = probe.content_type.split(";")[0].strip()[:60] or "no type"
        return f"not an image when probed at fetch time ({kind})"
    width, height = probe.size
    if width < min_image_size or height < min_image_size:
        return f"too small when probed at fetch time: {width}×{height} px (under {min_image_size} px)"
    return NOT_KEPT_WHEN_PROBED


def _winner(field: str, source: str, value: str, offered: tuple[Candidate, ...]) -> int | None:
    """The index of the record's value among the offers, or None (a value from elsewhere: oEmbed,
    an image probe's fallback, or none)."""
    if not source:
        return None
    same_source = [n for n, c in enumerate(offered) if c.source == source]
    if field in _URL_FIELDS:
        return next((n for n in same_source if offered[n].value == value),
                    next((n for n, c in enumerate(offered) if c.value == value), None))
    # A text field's stored value may be cut (spiderduck.wire.record_limits): its source says which.
    return next((n for n in same_source if not offered[n].reason), same_source[0] if same_source else None)
