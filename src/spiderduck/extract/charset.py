"""Choosing a page's character encoding: the WHATWG order, checked against the bytes.

    1. a byte order mark (UTF-8, UTF-16BE, UTF-16LE): always obeyed
    2. the declared encoding: the charset parameter of the HTTP Content-Type header, else a
       prescan of the first 1024 bytes for <meta charset> or
       <meta http-equiv=Content-Type content="...; charset=...">
    3. without a declaration, UTF-8 when the bytes are valid UTF-8, else windows-1252

A declaration is a claim the bytes can contradict (a page re-encoded without updating its head,
a server that labels everything utf-8 or iso-8859-1: common on older Cyrillic and Japanese
sites), so when the page holds non-ASCII bytes, judged on its first DETECT_BYTES, they decide:

    - valid UTF-8 with multi-byte sequences is UTF-8, whatever was declared (legacy text
      practically never forms valid multi-byte UTF-8 sequences);
    - otherwise the declared encoding is kept when it decodes the bytes strictly and reads as
      plausibly as charset-normalizer's best guess (its "chaos" and "coherence", as Scrapy's and
      requests' detection use them); else the guess is taken. Without a declaration, or with
      one the bytes break, the windows-1252 default is held to the same test.

The detector sees only the text of that prefix that holds non-ASCII bytes (between tags, or in
them), at most DETECT_TEXT_BYTES, and guesses among the encodings WHATWG decoders exist for.
ASCII and UTF-8 pages never reach it. UTF-16 declared in a header is obeyed.

Labels go through the WHATWG Encoding Standard's label table (webencodings), so `latin1`,
`iso-8859-1` and `ascii` mean windows-1252, `gb2312` means GBK, `x-sjis` means
Shift_JIS, and so on. A label the table does not know is ignored.
`decode` never raises: undecodable bytes become U+FFFD.
"""
from __future__ import annotations

import codecs
import re

import charset_normalizer
import webencodings
from charset_normalizer.utils import iana_name

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
DETECT_TEXT_BYTES = 16 * 1024      # of non-ASCII text from that prefix, given to the detector
# How much worse than the detector's best guess a declared encoding may read and still be kept:
# its chaos (mess ratio, 0..1, lower is cleaner) at most CHAOS_MARGIN higher, its coherence (how
# well the letters fit a language, 0..1) at most COHERENCE_MARGIN lower.
CHAOS_MARGIN = 0.1
COHERENCE_MARGIN = 0.2
_BREAKS = bytes.maketrans(b"<>", b"\n\n")
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


def _sample(body: bytes) -> bytes | None:
    """The bytes the encoding is judged on: the first DETECT_BYTES when they hold non-ASCII
    bytes, else DETECT_BYTES from the first non-ASCII byte further on (a page whose head is
    ASCII is judged on its first non-ASCII text, not decoded whole: up to 2 MiB, a few pages in
    ten); None for an all-ASCII body."""
    head = body[:DETECT_BYTES]
    if not head.isascii():
        return head
    if len(body) <= DETECT_BYTES or body.isascii():
        return None
    start = _line_start(body, _first_non_ascii(body, DETECT_BYTES))
    return body[start:start + DETECT_BYTES]


_LINE_BACK = 1024   # bytes looked back for the start of the line the first non-ASCII byte is in


def _line_start(body: bytes, at: int) -> int:
    """Where the line holding `at` starts (after a newline or a tag's bracket, as `_text` splits
    lines), looked for within _LINE_BACK bytes: the detector reads the line's words whole."""
    floor = max(0, at - _LINE_BACK)
    return max(floor, *(body.rfind(mark, floor, at) + 1 for mark in (b"\n", b"<", b">")))


def _first_non_ascii(body: bytes, start: int) -> int:
    """The offset of the first non-ASCII byte of `body` at or after `start`, for a body holding
    one there: bisected with bytes.isascii (a word at a time, in C) rather than read a byte at a
    time in Python or a regular expression."""
    lo, hi = start, len(body)           # body[lo:hi] holds a non-ASCII byte
    while hi - lo > 64:
        mid = (lo + hi) // 2
        if body[lo:mid].isascii():
            lo = mid
        else:
            hi = mid
    return lo + next(i for i, byte in enumerate(body[lo:hi]) if byte > 0x7F)


def _decodes(data: bytes, name: str) -> bool:
    """`data` decodes strictly with the WHATWG encoding `name` (a cut at the end is forgiven)."""
    try:
        data.decode(codec(name))
    except UnicodeDecodeError as exc:
        # A body cut at the size cap (or a prefix) may end inside a character.
        return exc.reason in ("unexpected end of data", "incomplete multibyte sequence") \
            and exc.start >= len(data) - 3
    except LookupError:
        return False
    return True


def _valid_utf8(data: bytes) -> bool:
    return _decodes(data, "utf-8")


def _text(sample: bytes) -> bytes:
    """The lines of `sample` (split at tags too) that hold non-ASCII bytes, at most
    DETECT_TEXT_BYTES: the page's words, without the markup and scripts that dilute them."""
    kept, size = [], 0
    for line in sample.translate(_BREAKS).split(b"\n"):
        if line.isascii():
            continue
        line = line.strip()
        if size + len(line) > DETECT_TEXT_BYTES:
            break
        kept.append(line)
        size += len(line) + 1
    return b"\n".join(kept) or sample[:DETECT_TEXT_BYTES]


def _guessable() -> dict[str, str]:
    """{charset-normalizer's name for a codec: its WHATWG encoding}, for every WHATWG encoding
    but the UTF-16s (a BOM or a header says those)."""
    names = {found.name for found in map(webencodings.lookup, webencodings.LABELS) if found}
    return {iana_name(codec(name), False): name for name in sorted(names - _UNUSED)
            if not name.startswith("utf-16")}


_GUESSABLE = _guessable()


# Among readings the detector scores alike (short texts), the encodings most used on the web.
_COMMON = ("windows-1252", "windows-1251", "shift_jis", "gbk", "euc-kr", "euc-jp", "windows-1250", "big5")


def _reading(text: bytes, codecs_: list[str]):
    """charset-normalizer's best reading of `text` among `codecs_`, or None; of those it scores
    as well as its best, the most common encoding."""
    matches = list(charset_normalizer.from_bytes(text, cp_isolation=codecs_, preemptive_behaviour=False))
    if not matches:
        return None
    best = matches[0]
    ties = {_GUESSABLE.get(m.encoding): m for m in matches
            if (m.chaos, m.coherence) == (best.chaos, best.coherence)}
    return next((ties[name] for name in _COMMON if name in ties), best)


def _checked(sample: bytes, claimed: str) -> str:
    """`claimed` (declared, or the default), unless the bytes read clearly better otherwise."""
    text = _text(sample)
    best = _reading(text, list(_GUESSABLE))
    guess = _GUESSABLE.get(best.encoding) if best is not None else None
    if guess is None or guess == claimed:
        return claimed
    if not _decodes(sample, claimed):
        return guess
    mine = _reading(text, [iana_name(codec(claimed), False)])
    if mine is not None and mine.chaos <= best.chaos + CHAOS_MARGIN \
            and mine.coherence >= best.coherence - COHERENCE_MARGIN:
        return claimed
    return guess


def sniff(body: bytes, content_type: str | None = None) -> str:
    """The WHATWG name of the encoding to decode `body` with."""
    found = bom(body)
    if found:
        return found
    declared = charset_param(content_type)
    if declared in ("utf-16be", "utf-16le"):
        return declared
    declared = declared or prescan(body)
    sample = _sample(body)
    if sample is None:                     # all ASCII: any ASCII-compatible encoding reads it
        return declared or "utf-8"
    if _valid_utf8(sample):
        # Legacy text practically never forms valid multi-byte UTF-8 sequences: a declaration
        # of another encoding over them is stale.
        return "utf-8"
    # A declaration the bytes break is no declaration: the default is checked instead.
    return _checked(sample, declared if declared and _decodes(sample, declared) else "windows-1252")


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
