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

Labels go through the WHATWG Encoding Standard's label table, so `latin1`,
`iso-8859-1` and `ascii` mean windows-1252, `gb2312` means GBK, `x-sjis` means
Shift_JIS, and so on. A label the table does not know is ignored.
`decode` never raises: undecodable bytes become U+FFFD.
"""
from __future__ import annotations

import codecs
import re

# WHATWG encoding name -> (Python codec, labels). https://encoding.spec.whatwg.org/#names-and-labels
# The "replacement" and "x-user-defined" encodings are left out on purpose: their labels
# are treated as unknown, so detection moves on to the next source.
_ENCODINGS: dict[str, tuple[str, str]] = {
    "utf-8": ("utf-8", "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8"),
    "ibm866": ("cp866", "866 cp866 csibm866 ibm866"),
    "iso-8859-2": ("iso8859-2", "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 "
                                "iso_8859-2:1987 l2 latin2"),
    "iso-8859-3": ("iso8859-3", "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 "
                                "iso_8859-3:1988 l3 latin3"),
    "iso-8859-4": ("iso8859-4", "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 "
                                "iso_8859-4:1988 l4 latin4"),
    "iso-8859-5": ("iso8859-5", "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 "
                                "iso_8859-5 iso_8859-5:1988"),
    "iso-8859-6": ("iso8859-6", "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 "
                                "iso-8859-6 iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 "
                                "iso_8859-6 iso_8859-6:1987"),
    "iso-8859-7": ("iso8859-7", "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 "
                                "iso8859-7 iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek"),
    "iso-8859-8": ("iso8859-8", "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 "
                                "iso8859-8 iso88598 iso_8859-8 iso_8859-8:1988 visual"),
    "iso-8859-8-i": ("iso8859-8", "csiso88598i iso-8859-8-i logical"),
    "iso-8859-10": ("iso8859-10", "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6"),
    "iso-8859-13": ("iso8859-13", "iso-8859-13 iso8859-13 iso885913"),
    "iso-8859-14": ("iso8859-14", "iso-8859-14 iso8859-14 iso885914"),
    "iso-8859-15": ("iso8859-15", "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9"),
    "iso-8859-16": ("iso8859-16", "iso-8859-16"),
    "koi8-r": ("koi8-r", "cskoi8r koi koi8 koi8-r koi8_r"),
    "koi8-u": ("koi8-u", "koi8-ru koi8-u"),
    "macintosh": ("mac-roman", "csmacintosh mac macintosh x-mac-roman"),
    "windows-874": ("cp874", "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874"),
    "windows-1250": ("cp1250", "cp1250 windows-1250 x-cp1250"),
    "windows-1251": ("cp1251", "cp1251 windows-1251 x-cp1251"),
    "windows-1252": ("cp1252", "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 "
                               "iso-ir-100 iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 "
                               "us-ascii windows-1252 x-cp1252"),
    "windows-1253": ("cp1253", "cp1253 windows-1253 x-cp1253"),
    "windows-1254": ("cp1254", "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 "
                               "iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254"),
    "windows-1255": ("cp1255", "cp1255 windows-1255 x-cp1255"),
    "windows-1256": ("cp1256", "cp1256 windows-1256 x-cp1256"),
    "windows-1257": ("cp1257", "cp1257 windows-1257 x-cp1257"),
    "windows-1258": ("cp1258", "cp1258 windows-1258 x-cp1258"),
    "x-mac-cyrillic": ("mac-cyrillic", "x-mac-cyrillic x-mac-ukrainian"),
    # WHATWG's GBK decoder is the gb18030 decoder, and its Big5 includes HKSCS.
    "gbk": ("gb18030", "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk"),
    "gb18030": ("gb18030", "gb18030"),
    "big5": ("big5hkscs", "big5 big5-hkscs cn-big5 csbig5 x-x-big5"),
    "euc-jp": ("euc_jp", "cseucpkdfmtjapanese euc-jp x-euc-jp"),
    "iso-2022-jp": ("iso2022_jp", "csiso2022jp iso-2022-jp"),
    # WHATWG's Shift_JIS and EUC-KR are Microsoft's supersets.
    "shift_jis": ("cp932", "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis"),
    "euc-kr": ("cp949", "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 "
                        "ksc5601 ksc_5601 windows-949"),
    "utf-16be": ("utf-16-be", "unicodefffe utf-16be"),
    "utf-16le": ("utf-16-le", "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le"),
}

LABELS: dict[str, str] = {label: name for name, (_, labels) in _ENCODINGS.items()
                          for label in labels.split()}
CODECS: dict[str, str] = {name: codec for name, (codec, _) in _ENCODINGS.items()}

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
    return LABELS.get(label.strip("\t\n\f\r \"'").lower())


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
    return strip_bom(body, name).decode(CODECS.get(name, "utf-8"), "replace")


def strip_bom(body: bytes, name: str) -> bytes:
    if bom(body) == name:
        return body[len(codecs.BOM_UTF8) if name == "utf-8" else 2:]
    return body
