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

Bounded: the first SCAN_BYTES of the markup, searched for `location` in its bytes first (most
pages never parse again), then at most MAX_SCRIPTS inline scripts of at most SCRIPT_CHARS each.
"""
from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser

from spiderduck.core import urls

SCAN_BYTES = 256 * 1024
MAX_SCRIPTS = 32
SCRIPT_CHARS = 16 * 1024
_JS_TYPES = frozenset({"", "text/javascript", "application/javascript", "module", "text/ecmascript",
                       "application/ecmascript", "javascript"})

_OWNER = r"(?:\b(?:window|document|top|self|parent)\s*\.\s*)?"
_URL = r"""(?P<q>["'`])(?P<url>[^"'`\\\s<>]{1,2048})(?P=q)"""
_REDIRECTS = (re.compile(rf"{_OWNER}\blocation(?:\s*\.\s*href)?\s*=(?!=)\s*{_URL}"),
              re.compile(rf"{_OWNER}\blocation\s*\.\s*(?:replace|assign)\s*\(\s*{_URL}\s*\)"))
_STRING_OR_BRACE = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`|//[^\n]*|/\*.*?\*/|[{}]""",
                              re.S)


def script_redirect(markup: str | bytes, url: str) -> str:
    """Where an inline script sends the reader when the page loads (see the module), or ''."""
    head = markup[:SCAN_BYTES]
    if (b"location" not in head) if isinstance(head, bytes) else ("location" not in head):
        return ""
    tree = LexborHTMLParser(head)
    for script in tree.css("script:not([src])")[:MAX_SCRIPTS]:
        kind = (script.attributes.get("type") or "").strip().lower()
        if kind not in _JS_TYPES:
            continue
        text = (script.text() or "")[:SCRIPT_CHARS]
        found = sorted((m.start(), m["url"]) for pattern in _REDIRECTS for m in pattern.finditer(text))
        for start, ref in found:
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
