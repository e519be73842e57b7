"""Choosing a page's character encoding, in the WHATWG order.

    1. a byte order mark (UTF-8, UTF-16BE, UTF-16LE)
    2. the charset parameter of the HTTP Content-Type header
    3. a prescan of the first 1024 bytes for <meta charset> or
       <meta http-equiv=Content-Type content="...; charset=...">
    4. UTF-8 when the bytes are valid UTF-8, else windows-1252; judged on the first
       DETECT_BYTES when they hold non-ASCII text (valid multi-byte UTF-8 there is proof
       enough), else on the whole body

One deviation from the standard: a <meta> naming a legacy encoding is overruled
when the bytes are valid, non-ASCII UTF-8 (see `sniff`). The header and the BOM
are always obeyed.

Labels go through the WHATWG Encoding Standard's label table (webencodings), so `latin1`,
`iso-8859-1` and `ascii` mean windows-1252, `gb2312` means GBK, `x-sjis` means
Shift_JIS, and so on. A label the table does not know is ignored.
`decode` never raises: undecodable bytes become U+FFFD.
"""
from __future__ import annotations

import codecs
import re

import webencodings

# The WHATWG label table comes from webencodings (html5lib's, kept to the Encoding Standard), so
# `latin1` is windows-1252, `x-sjis` Shift_JIS (decoded as cp932), `big5` Big5-HKSCS, and so on.
# Two changes of ours: GBK decodes with gb18030 (the WHATWG GBK decoder is the gb18030 decoder;
# webencodings says gbk), and the "replacement" and "x-user-defined" encodings are left out on
# purpose: their labels count as unknown, so detection moves on to the next source.
_CODEC_OVERRIDES = {"gbk": "gb18030"}
_UNUSED = frozenset({"replacement", "x-user-defined"})

_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_BE, "utf-16be"), (codecs.BOM_UTF16_LE, "utf-16le"))
_PRESCAN_BYTES = 1024
DETECT_BYTES = 64 * 1024
_COMMENT = re.compile(rb"<!--.*?(?:-->|$)", re.S)
_META = re.compile(rb"<meta[\s/]([^>]*)", re.I)
_ATTR = re.compile(rb"""([^\s/=>]+)\s*(?:=\s*(?:"([^"]*)"?|'([^']*)'?|([^\s>]*)))?""")
_CHARSET_PARAM = re.compile(r"""charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;"']+))""", re.I)


def lookup(label: str | None) -> str | None:
    """The WHATWG encoding name for a label, or None when the label is unknown."""
    if not label:
        return None
    found = webencodings.lookup(label.strip("\t\n\f\r \"'"))
    return None if found is None or found.name in _UNUSED else found.name


def codec(name: str) -> str:
    """The Python codec that decodes the WHATWG encoding `name` (utf-8 for an unknown one)."""
    if name in _CODEC_OVERRIDES:
        return _CODEC_OVERRIDES[name]
    found = webencodings.lookup(name)
    return found.codec_info.name if found is not None and found.name not in _UNUSED else "utf-8"


def charset_param(value: str | None) -> str | None:
    """The encoding named by a `charset=` parameter (Content-Type header or meta content)."""
    if not value:
        return None
    m = _CHARSET_PARAM.search(value)
    if not m:
        return None
    return lookup(m.group(1) or m.group(2) or m.group(3))


def bom(body: bytes) -> str | None:
    for mark, name in _BOMS:
        if body.startswith(mark):
            return name
    return None


def prescan(body: bytes) -> str | None:
    """The encoding declared by a <meta> in the first 1024 bytes (simplified WHATWG prescan)."""
    head = _COMMENT.sub(b"", body[:_PRESCAN_BYTES])
    for tag in _META.finditer(head):
        attrs: dict[bytes, bytes] = {}
        for a in _ATTR.finditer(tag.group(1)):
            attrs.setdefault(a.group(1).lower(), a.group(2) or a.group(3) or a.group(4) or b"")
        name = None
        if b"charset" in attrs:
            name = lookup(attrs[b"charset"].decode("ascii", "replace"))
        elif attrs.get(b"http-equiv", b"").strip().lower() == b"content-type":
            name = charset_param(attrs.get(b"content", b"").decode("ascii", "replace"))
        if name:
            # A document that could declare itself in ASCII is not UTF-16 (WHATWG prescan).
            return "utf-8" if name in ("utf-16be", "utf-16le") else name
    return None


def _is_utf8(body: bytes) -> bool:
    head = body[:DETECT_BYTES]
    if len(body) > DETECT_BYTES and not head.isascii():
        # Non-ASCII text that is valid UTF-8 is practically never a legacy encoding, and text
        # that is not valid UTF-8 here is not UTF-8: no need to decode the rest of a big page.
        return _valid_utf8(head)
    return _valid_utf8(body)


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A body cut at the size cap (or a prefix) may end inside a character.
        return exc.reason == "unexpected end of data" and exc.start >= len(data) - 3
    return True


def sniff(body: bytes, content_type: str | None = None) -> str:
    """The WHATWG name of the encoding to decode `body` with."""
    found = bom(body) or charset_param(content_type)
    if found:
        return found
    declared = prescan(body)
    if declared and declared != "utf-8" and not body.isascii() and _is_utf8(body):
        # A <meta> that names a legacy encoding over bytes that are valid, non-ASCII UTF-8 is
        # almost always stale (a page re-encoded without updating its head): legacy text
        # practically never forms valid multi-byte UTF-8 sequences.
        return "utf-8"
    return declared or ("utf-8" if _is_utf8(body) else "windows-1252")


def decode(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """(text, encoding name used). Never raises."""
    name = sniff(body, content_type)
    return decode_as(body, name), name


def decode_as(body: bytes, name: str) -> str:
    """`body` decoded with a WHATWG encoding (a BOM for it is dropped); bad bytes become U+FFFD."""
    return strip_bom(body, name).decode(codec(name), "replace")


def strip_bom(body: bytes, name: str) -> bytes:
    if bom(body) == name:
        return body[len(codecs.BOM_UTF8) if name == "utf-8" else 2:]
    return body
