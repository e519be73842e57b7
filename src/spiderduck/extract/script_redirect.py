"""A redirect a page's inline script states with a literal URL when the page loads (issue 43: a
browser follows it, a preview crawler does not, so a cloaked page can send people elsewhere):

    <script>location.href = "https://elsewhere.test/";</script>
    <script>window.location.replace('/next');</script>

`script_redirect(markup, url)` gives the http(s) URL such a script sends the reader to, resolved
against the page's URL, or ''. Read: an assignment of a string literal to `location` or
`location.href` (of `window`, `document`, `top`, `self` or `parent`, or bare), or a call of
`location.replace` or `location.assign` with one, standing at the top level of an inline script
(not inside a function, a click handler or any block: what runs when the page loads). A comparison
(`location.href == "..."`), a URL built at run time, a `javascript:` URL and the page's own URL
are none.

Bounded: the first SCAN_BYTES of the markup, searched for `location` assigned a literal (str.find,
then a match right there: most pages are never parsed again); then only the <script> elements (any
case) such a `location` stands in, at most MAX_SCRIPTS of at most SCRIPT_CHARS each, each parsed on
its own, among at most MAX_CANDIDATES such `location`s.
"""
from __future__ import annotations

import bisect
import re

from selectolax.lexbor import LexborHTMLParser

from spiderduck.core import urls

SCAN_BYTES = 256 * 1024
TRIGGER_BYTES = 64 * 1024   # read by every crawl's extraction (a reason to look again): its head
MAX_SCRIPTS = 32
MAX_CANDIDATES = 4 * MAX_SCRIPTS   # `location`s assigned a literal, looked at
SCRIPT_CHARS = 16 * 1024
_JS_TYPES = frozenset({"", "text/javascript", "application/javascript", "module", "text/ecmascript",
                       "application/ecmascript", "javascript"})

_OWNER = r"(?:\b(?:window|document|top|self|parent)\s*\.\s*)?"
_URL = r"""(?P<q>["'`])(?P<url>[^"'`\\\s<>]{1,2048})(?P=q)"""
_REDIRECTS = (re.compile(rf"{_OWNER}\blocation(?:\s*\.\s*href)?\s*=(?!=)\s*{_URL}"),
              re.compile(rf"{_OWNER}\blocation\s*\.\s*(?:replace|assign)\s*\(\s*{_URL}\s*\)"))
# The cheap test before a parse, right after each `location` (str.find: no regex scans the page).
_AFTER_TEXT = r"""\s*(?:(?:\.\s*href\s*)?=(?!=)\s*["'`]|\.\s*(?:replace|assign)\s*\(\s*["'`])"""
_AFTER = re.compile(_AFTER_TEXT)
_AFTER_BYTES = re.compile(_AFTER_TEXT.encode())
_STRING_OR_BRACE = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`|//[^\n]*|/\*.*?\*/|[{}]""",
                              re.S)


def script_redirect(markup: str | bytes, url: str, scan: int = SCAN_BYTES) -> str:
    """Where an inline script sends the reader when the page loads (see the module), or ''.
    `scan`: how much of the markup is read, at most SCAN_BYTES (the crawl's extraction reads
    TRIGGER_BYTES: a reason to look again, on every page's path)."""
    scan = min(scan, SCAN_BYTES)
    if isinstance(markup, bytes):
        if next(_candidates(markup, b"location", _AFTER_BYTES, scan), None) is None:
            return ""
        head = markup[:scan].decode("utf-8", "replace")
    elif next(_candidates(markup, "location", _AFTER, scan), None) is None:
        return ""
    else:
        head = markup[:scan]
    spans = _Scripts(head)
    read: set[int] = set()
    for n, at in enumerate(_candidates(head, "location", _AFTER, scan)):
        if n >= MAX_CANDIDATES:
            return ""
        script = spans.around(at)
        if script is None or script[0] in read:
            continue
        read.add(script[0])
        if len(read) > MAX_SCRIPTS:
            return ""
        target = _redirect_in(head[script[0]:script[1]], url)
        if target:
            return target
    return ""


def _candidates(markup, word, after, scan):
    """Where `location` stands assigned a literal, or calling replace/assign with one, within
    the first `scan` characters (searched in place: no copy of the page)."""
    at = markup.find(word, 0, scan)
    while at >= 0:
        if after.match(markup, at + len(word), scan + 64):
            yield at
        at = markup.find(word, at + len(word), scan)


class _Scripts:
    """The <script> elements' spans of a page's text, any case, found once (then each lookup
    is a bisection: a page of many candidates costs no more than one of a few)."""

    def __init__(self, text: str):
        lowered = text.lower()
        self._text_len = len(text)
        self._starts = _positions(lowered, "<script")
        self._ends = _positions(lowered, "</script")

    def around(self, at: int) -> tuple[int, int] | None:
        """(start, end) of the script element `at` stands in, or None (outside every one, or
        in one longer than SCRIPT_CHARS)."""
        i = bisect.bisect_right(self._starts, at) - 1
        if i < 0:
            return None
        start = self._starts[i]
        j = bisect.bisect_right(self._ends, start)
        if j >= len(self._ends) or self._ends[j] < at:
            return None             # closed before `at`: it stands outside
        end = self._ends[j]
        if end - start > SCRIPT_CHARS:
            return None
        return start, min(end + 9, self._text_len)


def _positions(text: str, word: str) -> list[int]:
    found, at = [], text.find(word)
    while at >= 0:
        found.append(at)
        at = text.find(word, at + len(word))
    return found


def _redirect_in(markup: str, url: str) -> str:
    script = LexborHTMLParser(markup).css_first("script")
    if script is None or script.attributes.get("src") is not None:
        return ""
    kind = (script.attributes.get("type") or "").strip().lower()
    if kind not in _JS_TYPES:
        return ""
    text = (script.text() or "")[:SCRIPT_CHARS]
    found = sorted((m.start(), m["url"]) for pattern in _REDIRECTS for m in pattern.finditer(text))
    for start, ref in found:
        if "${" in ref:             # a template literal builds its URL at run time
            continue
        target = _resolved(ref, url) if _depth(text, start) == 0 else ""
        if target:
            return target
    return ""


def _depth(text: str, at: int) -> int:
    """How many braces are open at `at`, strings and comments aside."""
    depth = 0
    for m in _STRING_OR_BRACE.finditer(text, 0, at):
        token = m.group()
        if token == "{":
            depth += 1
        elif token == "}":
            depth = max(0, depth - 1)
    return depth


def _resolved(ref: str, url: str) -> str:
    target = urls.join(url, ref) if url else None
    if not target or not target.startswith(("http://", "https://")):
        return ""
    try:
        if urls.canonicalize(target) == urls.canonicalize(url):
            return ""
    except urls.InvalidUrl:
        return ""
    return target
