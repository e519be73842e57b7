"""Vorbis comments (`TITLE=...`), as Ogg Vorbis, Opus (OpusTags) and FLAC keep them: a
little-endian vendor string, a count, and that many `NAME=value` entries. At most COMMENTS are
read, and a length past the data ends the reading."""
from __future__ import annotations

COMMENTS = 256
_FIELDS = {"TITLE": "title", "ARTIST": "author", "ALBUMARTIST": "author", "PERFORMER": "author"}


def comments(data: bytes, source: str) -> dict[str, tuple[str, str]]:
    """{field: (value, source:NAME)} from a comment block (starting at its vendor length)."""
    found: dict[str, tuple[str, str]] = {}
    if len(data) < 8:
        return found
    at = 4 + int.from_bytes(data[:4], "little")
    if at + 4 > len(data):
        return found
    count = int.from_bytes(data[at:at + 4], "little")
    at += 4
    for _ in range(min(count, COMMENTS)):
        if at + 4 > len(data):
            break
        size = int.from_bytes(data[at:at + 4], "little")
        entry = data[at + 4:at + 4 + size]
        at += 4 + size
        name, sep, value = entry.partition(b"=")
        if not sep:
            continue
        key = name.decode("ascii", "replace").upper()
        field = _FIELDS.get(key)
        text = value.decode("utf-8", "replace").strip()[:1000]
        if field and text and field not in found:
            found[field] = (text, f"{source}:{key}")
    return found
