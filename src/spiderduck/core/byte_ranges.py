"""Byte ranges of a file (RFC 9110 14): the one form of Range a fetcher sends, and the
Content-Range and Content-Length an origin answers, read strictly.

    range_header(start, end) -> "bytes=START-END"
    parse_range(value, max_length) -> (start, end)    raises InvalidRange
    content_range(value) -> (start, end, total) | None    total 0 when the origin says "*"
    declared_length(value) -> int | None

Only the single, closed form `bytes=START-END` is asked for (no suffix, no open end, no lists):
what is read is bounded before the request leaves. Numbers are at most MAX_DIGITS digits, so a
hostile header is never a huge integer.
"""
from __future__ import annotations

import re

from spiderduck.core.errors import SpiderDuckError

MAX_DIGITS = 18                     # under 2**63: an int64 on the wire
MAX_RANGE_CHARS = 6 + 2 * MAX_DIGITS + 1
_RANGE = re.compile(r"bytes=([0-9]{1,%d})-([0-9]{1,%d})" % (MAX_DIGITS, MAX_DIGITS))
_CONTENT_RANGE = re.compile(r"\s*bytes\s+([0-9]{1,%d})-([0-9]{1,%d})/([0-9]{1,%d}|\*)\s*" % ((MAX_DIGITS,) * 3))
_LENGTH = re.compile(r"\s*([0-9]{1,%d})\s*" % MAX_DIGITS)


class InvalidRange(SpiderDuckError, ValueError):
    """A Range that is not `bytes=START-END` with START <= END, or longer than allowed."""


def range_header(start: int, end: int) -> str:
    return f"bytes={start}-{end}"


def parse_range(value: str, max_length: int) -> tuple[int, int]:
    """(start, end), inclusive, of a `bytes=START-END` asking at most `max_length` bytes."""
    match = _RANGE.fullmatch(value) if len(value) <= MAX_RANGE_CHARS else None
    if match is None:
        raise InvalidRange(f"range {value[:40]!r} is not bytes=START-END")
    start, end = int(match[1]), int(match[2])
    if start > end:
        raise InvalidRange(f"range {value!r}: its start is past its end")
    if end - start + 1 > max_length:
        raise InvalidRange(f"range {value!r}: {end - start + 1} bytes, more than {max_length}")
    return start, end


def content_range(value: str | None) -> tuple[int, int, int] | None:
    """(start, end, total) of a 206's `Content-Range: bytes START-END/TOTAL` (total 0 for `*`);
    None when it is absent or malformed (START past END, END past TOTAL)."""
    match = _CONTENT_RANGE.fullmatch(value) if value and len(value) <= 3 * MAX_DIGITS + 16 else None
    if match is None:
        return None
    start, end = int(match[1]), int(match[2])
    total = 0 if match[3] == "*" else int(match[3])
    if start > end or (total and end >= total):
        return None
    return start, end, total


def declared_length(value: str | None) -> int | None:
    """A Content-Length's number; None when it is absent or not one (a list, a sign, digits of
    another script, more than MAX_DIGITS)."""
    match = _LENGTH.fullmatch(value) if value and len(value) <= MAX_DIGITS + 8 else None
    return int(match[1]) if match is not None else None
