"""Shells: pages whose static HTML is an empty frame that JavaScript fills in (issue 31).

SpiderDuck fetches pages statically. A page built in the browser (a single-page app) arrives as
a shell: a script bundle and an empty element for the app to mount on, often nothing a preview
can use. Such a page is worth rendering in a headless browser; every other page is not. This
module decides which, from signals a reviewer can read (`signals` reads them, `needs_render`
decides):

- `has_title`: the page has a `<title>` with text (an SVG's or MathML's title does not count);
- `has_card_tags`: it states a card of its own: a non-blank og:title, og:description, og:image,
  twitter:title, twitter:description or twitter:image (under `property` or `name`). Not
  `<meta name="description">`, which app templates ship site-wide (create-react-app's default
  says "Web site created using create-react-app"), nor twitter:card, which carries no content;
- `app_root`: an app's mount element (`APP_ROOTS`: `#root`, `#__next`, `<app-root>`, ...) holding
  at most EMPTY_ROOT_CHARS characters of text ("Loading..."), named as found, e.g. `div#root`;
- `script_bytes`: the weight of the page's code: the UTF-8 bytes of its inline scripts, plus
  EXTERNAL_SCRIPT_WEIGHT per `<script src>` (not downloaded). Data blocks (JSON-LD, Next.js's
  `__NEXT_DATA__`, templates) are not code and do not count;
- `text_chars`: the visible text of the body, white space folded, without script, style,
  noscript and template contents;
- `noscript_asks_js`: a `<noscript>` whose text asks for JavaScript ("You need to enable
  JavaScript to run this app.", "Bitte aktivieren Sie JavaScript", "Activez JavaScript", ...). A
  noscript holding only a tracking pixel (`<img>`, `<iframe>`) says nothing, and does not count;
- `truncated`: only a prefix of the markup was read (see below).

The rule (`needs_render`), in order:

1. never a page that has a title and card tags: its static HTML already makes the card;
2. never a page showing PLENTY_TEXT_CHARS or more of text: its content is in the static HTML,
   whatever else it says (a blog's Disqus noscript asks for JavaScript "to view the comments";
   a small widget may mount on an empty `#app` inside a server-written article);
3. render a page with an empty app root, or a noscript asking for JavaScript;
4. render a page whose scripts dominate: under FEW_TEXT_CHARS of text, and SCRIPT_RATIO times
   more script than text, the whole markup read (a page cut short may show its text later: the
   corpus's yandex.ru has 750 KiB of head before its body).

Work is bounded: only the first SCAN_BYTES of the markup are read, cut before its SCAN_TAGS-th
tag, and parsed once.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import islice

from selectolax.lexbor import LexborHTMLParser

from spiderduck.extract.parsers import MAX_HTML_BYTES, _in_svg

# Of the markup read: what the extraction reads too (parsers.MAX_HTML_BYTES, 2 MiB). A shell is
# small (a few KiB of HTML around its bundle), but a page may hold most of a MiB of inline style
# and script before its body.
SCAN_BYTES = MAX_HTML_BYTES
# Tags of the markup read. Lexbor's tree builder takes time growing with the square of the
# nesting depth (10,000 nested <div>s take about 0.1 s, 40,000 two seconds); a real page's first
# 10,000 tags say whether it shows text, and a shell has a few dozen.
SCAN_TAGS = 10_000
_TAG = re.compile(rb"<[A-Za-z/!?]")

# A `<script src>` counts as this many bytes of code: it is not downloaded. An app's bundle weighs
# far more, a tracker's tag about this, so one bundle outweighs a shell's "Loading..." while a few
# trackers do not outweigh a short page's text (the ratio below).
EXTERNAL_SCRIPT_WEIGHT = 1_024
# Scripts dominate a page that shows fewer than FEW_TEXT_CHARS characters of text (two lines: a
# shell's "Loading..." or a header's links) and carries SCRIPT_RATIO times more code than text.
FEW_TEXT_CHARS = 200
SCRIPT_RATIO = 10
# A page showing this much text is read statically whatever its scripts ask: about the 250 words
# walls.FEW_WORDS calls an article's least, at six characters a word (space included).
PLENTY_TEXT_CHARS = 1_500
# An app root holding at most this much text is empty ("Loading...", "Please wait").
EMPTY_ROOT_CHARS = 40

# Mount points of the common frameworks, in the order looked for; the first empty one is named.
APP_ROOTS = ("#root", "#app", "#__next", "#__nuxt", "#___gatsby", "#q-app", "#svelte", "app-root",
             "[data-reactroot]", "[ng-app]", "[data-server-rendered]")
CARD_TAGS = frozenset({"og:title", "og:description", "og:image",
                       "twitter:title", "twitter:description", "twitter:image"})
# Script types that are code (else a data block); Cloudflare's Rocket Loader rewrites
# text/javascript to "<hash>-text/javascript", which still says javascript.
_CODE_TYPES = ("javascript", "ecmascript", "jsx")
_CODE_TYPE_NAMES = frozenset({"", "module"})
_EXCLUDED_TEXT = ["script", "style", "noscript", "template"]

MAX_TITLES = 8          # <title>s looked at for one with text (SVG titles come first on some pages)
MAX_NOSCRIPTS = 32      # <noscript>s read for a plea for JavaScript
MAX_NOSCRIPT_CHARS = 2_000   # of one noscript's text searched

# A noscript asks for JavaScript when its text names it and asks for it, in one of the common
# languages: English, German, French, Spanish, Portuguese, Italian, Dutch, Polish, Russian,
# Japanese, Chinese.
_JAVASCRIPT = re.compile(r"java\s?script|\bjs\b|ジャバスクリプト", re.IGNORECASE)
_ASKS = re.compile(
    r"enabl|turn(?:ed)?\s+(?:it\s+)?on|switch(?:ed)?\s+(?:it\s+)?on|activat|allow|need|requir|must|"
    r"disabled|support|without"                                        # English
    r"|aktivier|einschalt|benötig|erforderlich|deaktiviert|zulassen|ohne"   # German
    r"|activ|nécessit|besoin|autoris|désactiv|requis|sans"             # French
    r"|habilit|permit|requier|necesit|sin\b"                           # Spanish (and Portuguese)
    r"|ativ|precis|requer|sem\b"                                       # Portuguese
    r"|abilit|attiv|necessari|richied|senza"                           # Italian
    r"|inschakel|vereist|nodig|aanzetten|zonder"                       # Dutch
    r"|włącz|wymaga|потребуется|требуется|включ|необходим"              # Polish, Russian
    r"|有効|必要|启用|開啟|开启|需要",                                    # Japanese, Chinese
    re.IGNORECASE)


@dataclass(frozen=True)
class ShellSignals:
    """What a page's static HTML says about being a shell (see the module's docstring)."""

    has_title: bool
    has_card_tags: bool
    app_root: str           # the empty app root found, e.g. "div#root"; "" when none
    script_bytes: int
    text_chars: int
    noscript_asks_js: bool
    truncated: bool = False   # only the first SCAN_BYTES or SCAN_TAGS were read

    @property
    def scripts_dominate(self) -> bool:
        """Little text, and SCRIPT_RATIO times more code than text, in the whole markup."""
        return (not self.truncated and self.text_chars < FEW_TEXT_CHARS
                and self.script_bytes >= SCRIPT_RATIO * max(self.text_chars, 1))

    @property
    def reasons(self) -> tuple[str, ...]:
        """The signals that fired, in words, e.g. ("no title", "empty app root div#root")."""
        said = []
        if not self.has_title:
            said.append("no title")
        if not self.has_card_tags:
            said.append("no card tags")
        if self.app_root:
            said.append(f"empty app root {self.app_root}")
        if self.noscript_asks_js:
            said.append("noscript asks for JavaScript")
        if self.scripts_dominate:
            said.append(f"scripts outweigh text ({self.script_bytes} bytes of script, "
                        f"{self.text_chars} characters of text)")
        if self.text_chars >= PLENTY_TEXT_CHARS:
            said.append(f"plenty of text ({self.text_chars} characters)")
        if self.truncated:
            said.append("only a prefix read")
        return tuple(said)


def needs_render(s: ShellSignals) -> bool:
    """Whether the page is a shell worth rendering (the rule of the module's docstring)."""
    if s.has_title and s.has_card_tags:
        return False
    if s.text_chars >= PLENTY_TEXT_CHARS:
        return False
    return bool(s.app_root) or s.noscript_asks_js or s.scripts_dominate


def signals(markup: str | bytes) -> ShellSignals:
    """The shell signals of a page's markup (of its first SCAN_BYTES, cut before SCAN_TAGS tags)."""
    if isinstance(markup, str):            # a character more than is read: truncation shows
        markup = markup[:SCAN_BYTES + 1].encode("utf-8", "replace")
    scanned = _scanned(markup)
    tree = LexborHTMLParser(scanned)
    has_title = _has_title(tree)
    has_card_tags = _has_card_tags(tree)
    script_bytes = sum(_script_weight(node) for node in tree.css("script"))
    asks = any(_asks_for_js(node.text()) for node in islice(tree.css("noscript"), MAX_NOSCRIPTS))
    tree.strip_tags(_EXCLUDED_TEXT)        # what is left is what a reader sees
    body = tree.body
    return ShellSignals(has_title=has_title, has_card_tags=has_card_tags, app_root=_empty_root(tree),
                        script_bytes=script_bytes,
                        text_chars=_chars(body.text(separator=" ")) if body is not None else 0,
                        noscript_asks_js=asks, truncated=len(scanned) < len(markup))


def _scanned(markup: bytes) -> bytes:
    """The markup's first SCAN_BYTES, cut before its SCAN_TAGS-th tag."""
    head = markup[:SCAN_BYTES]
    beyond = next(islice(_TAG.finditer(head), SCAN_TAGS, None), None)
    return head if beyond is None else head[:beyond.start()]


def _has_title(tree) -> bool:
    for node in islice(tree.css("title"), MAX_TITLES):
        if node.text().strip() and not _in_svg(node):
            return True
    return False


def _has_card_tags(tree) -> bool:
    for node in tree.css("meta[content]"):
        attrs = node.attributes
        name = (attrs.get("property") or attrs.get("name") or "").strip().lower()
        if name in CARD_TAGS and (attrs.get("content") or "").strip():
            return True
    return False


def _script_weight(node) -> int:
    attrs = node.attributes
    kind = (attrs.get("type") or "").split(";")[0].strip().lower()
    if kind not in _CODE_TYPE_NAMES and not any(t in kind for t in _CODE_TYPES):
        return 0                           # a data block: JSON-LD, __NEXT_DATA__, a template
    weight = EXTERNAL_SCRIPT_WEIGHT if (attrs.get("src") or "").strip() else 0
    return weight + len((node.text() or "").encode("utf-8", "replace"))


def _asks_for_js(text: str) -> bool:
    text = text[:MAX_NOSCRIPT_CHARS]
    return bool(_JAVASCRIPT.search(text)) and bool(_ASKS.search(text))


def _empty_root(tree) -> str:
    """The first app root (APP_ROOTS) holding at most EMPTY_ROOT_CHARS of text, named as
    `tag#id` or `tag[attribute]`; '' when none. Only the first element of each selector is read."""
    for selector in APP_ROOTS:
        node = tree.css_first(selector)
        if node is None or node.tag in ("html", "body"):
            continue                       # an app on <body> or <html>: the body's text says it
        if _chars(node.text(separator=" ")) <= EMPTY_ROOT_CHARS:
            return selector if selector[0] not in "#[" else f"{node.tag}{selector}"
    return ""


def _chars(text: str) -> int:
    """Characters of the text, white space folded."""
    return len(" ".join(text.split()))
