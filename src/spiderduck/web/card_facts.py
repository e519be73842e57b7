"""The card's facts line (issue 41): what a record says beyond title, description and image, as
(name, text) pairs for the template, which escapes them: the page's own labels first (as Slack shows
them), then the offer, the reading time, a video's or audio's length, a document's pages, a file's
size, the theme colours and a browser's look that agreed with the card, or was not made (issue 43;
one that differs is the card's warning, views.card_of)."""
from __future__ import annotations

from spiderduck.core.record import UrlRecord
from spiderduck.extract.honesty import CONSISTENT, UNCHECKED

BROWSER_CHECK = {CONSISTENT: "consistent with the card", UNCHECKED: "not made"}   # README "Preview honesty"


def duration_text(ms: int) -> str:
    """3_723_000 -> '1:02:03'; 65_000 -> '1:05'."""
    seconds = max(0, ms) // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def size_text(size: int) -> str:
    """1536 -> '1.5 KiB'; bytes below 1 KiB as they are."""
    value = float(size)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"


def facts_of(record: UrlRecord) -> tuple[tuple[str, str], ...]:
    facts = [(label.name, label.value) for label in record.labels]
    offer = record.offer
    if offer is not None and (offer.price or offer.availability):
        price = " ".join(v for v in (offer.price, offer.currency) if v)
        facts.append(("Price", ", ".join(v for v in (price, offer.availability.replace("_", " ")) if v)))
    if record.reading_time_s and not any(name.lower().startswith(("reading", "est")) for name, _ in facts):
        facts.append(("Reading time", f"{max(1, round(record.reading_time_s / 60))} min"))
    for name, media in (("Video", record.video), ("Audio", record.audio)):
        if media is not None and media.duration_ms:
            facts.append((name, duration_text(media.duration_ms)))
    if record.document is not None and record.document.pages:
        facts.append(("Pages", str(record.document.pages)))
    if record.file_size:
        facts.append(("Size", size_text(record.file_size)))
    for name, colour in (("Theme colour", record.theme_color), ("Dark theme colour", record.theme_color_dark)):
        if colour:
            facts.append((name, colour))
    honesty = record.honesty
    if honesty is not None and honesty.verdict in BROWSER_CHECK:
        facts.append(("Browser check", BROWSER_CHECK[honesty.verdict]))
    return tuple(facts)
