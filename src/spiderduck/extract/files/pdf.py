"""PDF: title, author and dates from the Info dictionary (or the XMP packet), the page count from
the catalog's /Pages /Count, read by pypdf (BSD-3-Clause) from a sparse file of the PDF's true
length (zeros where nothing was read: pdfxref's next_range chose the ranges).

The page count is read from /Count and never by walking the page tree: its Kids lie in bytes not
read, and a circular /Parent is never followed. A count past MAX_PAGES is not believed.
"""
from __future__ import annotations

import logging
import re
import warnings
from datetime import datetime, timedelta, timezone

from spiderduck.core.record import Document, FieldSource
from spiderduck.extract.files import sparse

MAX_PAGES = 1_000_000
# What the bytes not read hold for pypdf. Not zeros: NUL is PDF whitespace, and pypdf skips
# whitespace a byte at a time before an object header, so an offset into a gap of zeros costs a
# read() per byte of the gap (seconds for a large file); a regular character ends the skip at once
# and the object is simply not there.
GAP = b"X"
_DATE = re.compile(r"^\s*(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?"
                   r"\s*(?:([Zz+-])\s*(\d{2})?'?\s*(\d{2})?'?)?")

logging.getLogger("pypdf").setLevel(logging.CRITICAL)     # a broken file is no log line


def rfc3339(value) -> str:
    """A PDF date (`D:20030912100804-04'00'`) in RFC 3339, UTC; '' when it is none."""
    match = _DATE.match(str(value or ""))
    if not match:
        return ""
    year, month, day, hour, minute, second, sign, tz_h, tz_m = match.groups()
    try:
        moment = datetime(int(year), int(month or 1), int(day or 1), int(hour or 0),
                          int(minute or 0), int(second or 0), tzinfo=timezone.utc)
        if sign in ("+", "-"):
            offset = timedelta(hours=int(tz_h or 0), minutes=int(tz_m or 0))
            moment = moment - offset if sign == "+" else moment + offset
    except (ValueError, OverflowError):
        return ""
    if not 1900 <= moment.year <= 2200:
        return ""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _text(value) -> str:
    if value is None:
        return ""
    try:
        value = value.get_object()
    except Exception:  # noqa: BLE001 - a broken reference is no value
        return ""
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return str(value).replace("\x00", "").strip()[:1000] if isinstance(value, str) else ""


def read(content_type: str, url: str, total: int, parts):
    fields: dict = {"medium": "document"}
    sources: list[FieldSource] = []
    if not _ends(parts, total):
        return fields, sources, True
    try:
        from pypdf import PdfReader
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = PdfReader(sparse.Sparse(parts, total, fill=GAP), strict=False)
            _info(reader, fields, sources)
            _xmp(reader, fields, sources)
            pages = _pages(reader)
    except Exception:  # noqa: BLE001 - pypdf raises many kinds on a broken or partial file
        return fields, sources, True
    fields["document"] = Document(pages)
    sources.append(FieldSource("document", "pdf:Root/Pages/Count"))
    whole = bool(total) and sparse.covered(sparse.merged(parts), 0, total)
    incomplete = not whole and (not pages or "title" not in fields)
    return fields, sources, incomplete


def _ends(parts, total: int) -> bool:
    """Whether the PDF's last bytes were read and hold its `startxref` and `%%EOF`. Without them
    pypdf searches the whole file backwards, line by line, for the marker: on a large file of
    zeros that costs seconds, so a PDF whose end was not read is not handed to it."""
    end = sparse.length(total, parts)
    last = sparse.slice_of(parts, max(0, end - _END), end)
    return sparse.covered(parts, max(0, end - _END), end) and b"%%EOF" in last and b"startxref" in last


_END = 1024


def _info(reader, fields: dict, sources: list) -> None:
    try:
        info = reader.trailer.get("/Info")
        info = info.get_object() if info is not None else None
    except Exception:  # noqa: BLE001
        return
    if not hasattr(info, "get"):
        return
    for key, field in (("/Title", "title"), ("/Author", "author")):
        value = _text(info.get(key))
        if value:
            fields[field] = value
            sources.append(FieldSource(field, f"pdf:Info/{key[1:]}"))
    for key, field in (("/CreationDate", "published_time"), ("/ModDate", "modified_time")):
        value = rfc3339(_text(info.get(key)))
        if value:
            fields[field] = value
            sources.append(FieldSource(field, f"pdf:Info/{key[1:]}"))


def _xmp(reader, fields: dict, sources: list) -> None:
    if "title" in fields and "author" in fields and "published_time" in fields:
        return
    try:
        xmp = reader.xmp_metadata
        if xmp is None:
            return
        title = xmp.dc_title or {}
        creators = xmp.dc_creator or []
        created, modified = xmp.xmp_create_date, xmp.xmp_modify_date
    except Exception:  # noqa: BLE001
        return
    candidates = {
        "title": (next((str(v).strip() for v in title.values() if str(v).strip()), ""), "xmp:dc:title"),
        "author": (next((str(v).strip() for v in creators if str(v).strip()), ""), "xmp:dc:creator"),
        "published_time": (_utc(created), "xmp:xmp:CreateDate"),
        "modified_time": (_utc(modified), "xmp:xmp:ModifyDate"),
    }
    for field, (value, source) in candidates.items():
        if value and field not in fields:
            fields[field] = value[:1000]
            sources.append(FieldSource(field, source))


def _utc(moment) -> str:
    if not isinstance(moment, datetime):
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pages(reader) -> int:
    try:
        count = reader.trailer["/Root"].get_object()["/Pages"].get_object().get("/Count")
        count = int(count.get_object()) if count is not None else 0
    except Exception:  # noqa: BLE001
        return 0
    return count if 0 < count <= MAX_PAGES else 0
