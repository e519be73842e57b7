"""What the commands print of what a site sent: control characters escaped, long values cut.

A page's title, a header, a URL or an error quoting them may hold terminal escapes (C0 and C1
controls: ESC, the 8-bit CSI 0x9b); printed as they are, they would drive the operator's
terminal. `printable` shows each as \\xNN.
"""
from __future__ import annotations

_CONTROLS = {c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7f, 0xa0)]}


def printable(value: str) -> str:
    """`value` with its control characters (C0, DEL, C1) escaped as \\xNN."""
    return value.translate(_CONTROLS)


def cut(value: str, limit: int, quote: str = "") -> str:
    """`value`'s first `limit` characters, escaped (printable) and between `quote`s, followed
    by how long it was when that is longer."""
    text = f"{quote}{printable(value[:limit])}{quote}"
    return text if len(value) <= limit else f"{text}... ({len(value)} chars)"
