"""Interstitials: a page that is a wall in front of the content, not the content (Status INTERSTITIAL).

Storing a consent wall or a bot challenge as a link's preview is the wrong card users complain of
most (mastodon#26202, metascraper#216 and #500, iframely#227). A wall is told by signals a
reviewer can read, never by one string:

- the answer: 401, 403, 429, 451 and 503 are what walls answer with (`WALL_STATUSES`);
- known markers in the markup (`CHALLENGE_MARKERS`, `CAPTCHA_MARKERS`, `CONSENT_MARKERS`): a bot
  challenge's own script or options object, a captcha widget, a consent vendor's dialog;
- the page's shape, read only for pages that may be walls, from its first SHAPE_BYTES: how many
  words it shows, and how much of that is inside forms (a form that is most of the page), a
  password field, a date-of-birth question;
- whether it has real sharing metadata (og:/twitter: title or description, a JSON-LD headline).
  A page that states its own metadata is the content, whatever banner or paywall it also has.

The kinds, each decided by one rule (`detect`), first match wins:

- bot_challenge: a challenge marker, and a wall status or no real metadata;
- captcha: a captcha widget, no real metadata, and a wall status or a title asking to prove the
  reader is human;
- access_denied: a title or heading saying access is denied or blocked, no real metadata, and a
  401/403/451 status or few words;
- login_wall: a password field, no real metadata, and forms holding most of the few words shown;
- age_gate: an age question (date of birth, "are you 18"), no real metadata, and few words;
- consent_wall: cookie-consent words inside a form or dialog, no real metadata, and few words or
  forms holding most of them (a consent vendor's markers name the vendor in the reason).

A normal page that mentions cookies or has a login link has its metadata, or many words: not a
wall. Everything is bounded: markers are looked for in the first SCAN_BYTES, and the page's shape
is read (one more parse) only when the cheap signals say it may be a wall.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser

from scheduler.extraction.document import Document

KINDS = ("bot_challenge", "captcha", "access_denied", "login_wall", "age_gate", "consent_wall")
WALL_STATUSES = frozenset({401, 403, 429, 451, 503})   # read for a wall even though they are errors
SCAN_BYTES = 256 * 1024       # of the markup searched for markers
SHAPE_BYTES = 128 * 1024      # of the markup parsed again for its shape (words, forms) ...
SHAPE_TAGS = 6_000            # ... when it holds at most this many tags: a tree builder's time grows
                              # with the square of nesting, so a deeper prefix is not read (no wall)
FEW_WORDS = 250               # a page showing fewer words than this is no article
MOST = 0.5                    # the share of a page's words inside forms that makes them the page

# Bot-challenge pages' own markers: never the sensor scripts and resources these vendors add to
# every page they protect (Cloudflare's /scripts/jsd/, Imperva's _Incapsula_Resource, DataDome's
# tags.js, PerimeterX's client script), which normal pages carry too.
CHALLENGE_MARKERS = (
    "cf_chl_opt", "cdn-cgi/challenge-platform/h/", "cf-browser-verification",   # Cloudflare
    "incapsula incident id",                                                    # Imperva
    "px-captcha",                                                               # HUMAN / PerimeterX
    "captcha-delivery.com",                                                     # DataDome
)
CAPTCHA_MARKERS = ("g-recaptcha", "recaptcha/api.js", "h-captcha", "hcaptcha.com/1/api.js", "cf-turnstile",
                   "challenges.cloudflare.com/turnstile")
CONSENT_MARKERS = ("onetrust", "cookielaw.org", "quantcast", "sp_message_container", "sourcepoint",
                   "didomi", "trustarc", "cookiebot", "usercentrics", "consent.google.", "consent.yahoo.",
                   "guce.yahoo.", "fundingchoices", "cookie-consent", "cookieconsent", "gdpr-consent")

_HUMAN_TITLE = re.compile(r"captcha|verify (?:that )?you are (?:a )?human|are you a robot|security check"
                          r"|unusual traffic|bot check|just a moment", re.I)
_DENIED = re.compile(r"access (?:is |has been )?denied|denied access|request (?:was )?(?:blocked|rejected)|been blocked"
                     r"|not (?:allowed|authori[sz]ed) to access|permission to access", re.I)
_REFERENCE = re.compile(r"(?:reference|incident|ray)\s*(?:id|#|number)?\s*[:#]?\s*[\w.-]{6,64}", re.I)
_AGE = re.compile(r"date of birth|birth ?date|verify your age|age verification|are you (?:over |at least )?"
                  r"(?:18|19|21)|(?:18|19|21)\+? (?:years|or older)|legal (?:drinking )?age", re.I)
_COOKIE_WORDS = re.compile(r"\bcookies?\b|\bconsent\b", re.I)
# Words of an age question, looked for as plain substrings first (a regex over the whole head
# costs more than the rest of the detection).
_AGE_HINTS = ("birth", "drinking age", "legal age", "your age", "age verification", "are you 1", "are you 2",
              "are you over", "are you at least", "18+", "21+")

_PASSWORD_HINTS = ('type="password"', "type=password")
# Words that several markers hold: a page without one (most pages) is not searched for those
# markers one by one. Each search reads the whole head, and a page without metadata is searched
# for some 40 markers.
_GUARDS = ("captcha", "cookie", "consent", "are you ", "turnstile")
_MARKERS = (*CHALLENGE_MARKERS, *CAPTCHA_MARKERS, *CONSENT_MARKERS, *_AGE_HINTS, *_PASSWORD_HINTS)
_GUARD_OF = {m: next((g for g in _GUARDS if g in m), "") for m in _MARKERS}
_ENCODED = {m: m.encode("ascii") for m in (*_MARKERS, *_GUARDS)}


@dataclass(frozen=True)
class Wall:
    kind: str          # one of KINDS
    reason: str        # the signals that decided it


def detect(markup: str | bytes, doc: Document, http_status: int = 200) -> Wall | None:
    """The wall this page is, or None for content. `markup` is the page as parsed into `doc`."""
    status = f"HTTP {http_status}" if http_status in WALL_STATUSES else ""
    stated = _has_metadata(doc)
    if stated and not status:          # most pages: their own metadata, answered 200
        return None
    head = _Head(markup)
    challenge = head.first(CHALLENGE_MARKERS)
    if challenge and (status or not stated):
        return _wall("bot_challenge", status, f"challenge marker {challenge!r}")
    if stated:
        return None
    captcha = head.first(CAPTCHA_MARKERS)
    title = " ".join(t for t in (doc.title, doc.h1) if t)
    if captcha and (status or _HUMAN_TITLE.search(title)):
        return _wall("captcha", status, f"captcha widget {captcha!r}", _said(title))
    consent = head.first(CONSENT_MARKERS)
    worth_reading = (status or consent or _DENIED.search(title) or head.first(_PASSWORD_HINTS)
                     or head.first(_AGE_HINTS) or _COOKIE_WORDS.search(title))
    if not worth_reading:
        return None
    shape = _Shape.read(markup)
    if shape is None:
        return None
    if _DENIED.search(title) and (http_status in (401, 403, 451) or shape.words < FEW_WORDS):
        ref = _REFERENCE.search(shape.text)
        return _wall("access_denied", status, _said(title), f"{ref[0]!r}" if ref else "",
                     f"{shape.words} words")
    if shape.password and shape.words < FEW_WORDS and shape.in_forms >= MOST:
        return _wall("login_wall", status, "a password field", shape.forms_said(), f"{shape.words} words")
    if shape.words < FEW_WORDS and (age := _AGE.search(shape.text)):
        return _wall("age_gate", status, f"age question {age[0]!r}", f"{shape.words} words")
    cookies = _COOKIE_WORDS.search(shape.form_text)
    if (consent or cookies) and cookies and (shape.words < FEW_WORDS or shape.in_forms >= MOST):
        return _wall("consent_wall", status, f"consent marker {consent!r}" if consent else "cookie-consent words",
                     shape.forms_said(), f"{shape.words} words")
    return None


def _has_metadata(doc: Document) -> bool:
    """Whether the page states real sharing metadata of its own."""
    return (any(doc.meta(k) for k in ("og:title", "og:description", "twitter:title", "twitter:description"))
            or any('"headline"' in block for block in doc.jsonld))


def _scanned(markup: str | bytes) -> str | bytes:
    """The first SCAN_BYTES of the markup, lower-cased, where the markers are looked for.

    UTF-8 bytes are searched as they are: the markers are ASCII, and the ASCII characters of the
    decoded, lower-cased text are those of the lower-cased bytes (UTF-8 never encodes another
    character with an ASCII byte, and a bad byte decodes to U+FFFD), except for the two characters
    whose lower case holds an ASCII letter (_LOWER_TO_ASCII): with one of them, the text is decoded.
    Decoding and lower-casing 256 KiB of a non-ASCII page (the corpus's yandex.ru) takes about
    1 ms, a fifth of its detection.
    """
    if isinstance(markup, bytes):
        head = markup[:SCAN_BYTES].lower()
        if not any(c in head for c in _LOWER_TO_ASCII):
            return head
        return markup[:SCAN_BYTES].decode("utf-8", "replace").lower()
    return markup[:SCAN_BYTES].lower()


# "İ".lower() is "i̇" (i and a combining dot), "K" (Kelvin) lower-cased is "k": in UTF-8.
_LOWER_TO_ASCII = ("\u0130".encode(), "\u212a".encode())


class _Head:
    """The head of a page, where markers are looked for (_scanned), and which _GUARDS it holds."""

    __slots__ = ("text", "_held")

    def __init__(self, markup: str | bytes):
        self.text = _scanned(markup)
        self._held: dict[str, bool] = {}

    def first(self, markers: tuple[str, ...]) -> str:
        """The first of the (ASCII) markers found in the head, or ''. A marker holding a guard
        the head does not hold is not looked for."""
        for m in markers:
            guard = _GUARD_OF[m]
            if guard and not self._holds(guard):
                continue
            if self._holds(m):
                return m
        return ""

    def _holds(self, needle: str) -> bool:
        if needle in _GUARDS:
            if needle not in self._held:
                self._held[needle] = self._find(needle)
            return self._held[needle]
        return self._find(needle)

    def _find(self, needle: str) -> bool:
        return (_ENCODED[needle] if isinstance(self.text, bytes) else needle) in self.text


def _said(title: str) -> str:
    return f"title {title[:80]!r}" if title else ""


def _wall(kind: str, *signals: str) -> Wall:
    return Wall(kind, "; ".join(s for s in signals if s))


@dataclass(frozen=True)
class _Shape:
    """What a page shows: its words, and how much of it is forms."""
    text: str              # its visible text, white space folded (at most SCAN_BYTES characters)
    form_text: str         # the part of it inside forms and dialogs
    words: int
    forms: int             # <form> and dialogs
    in_forms: float        # the share of its words inside them
    password: bool

    @classmethod
    def read(cls, markup: str | bytes) -> "_Shape | None":
        prefix = markup[:SHAPE_BYTES]
        if prefix.count(b"<" if isinstance(prefix, bytes) else "<") > SHAPE_TAGS:
            return None
        try:
            tree = LexborHTMLParser(prefix)
            tree.strip_tags(["script", "style", "noscript", "template"])
            body = tree.body
            text = " ".join(body.text(separator=" ").split()) if body is not None else ""
            forms = tree.css("form, dialog, [role=dialog], [aria-modal=true]")
            form_text = " ".join(f.text(separator=" ") for f in forms).split()
            password = tree.css_first('input[type="password" i]') is not None
        except Exception:  # noqa: BLE001 -- a page the parser cannot read shows nothing
            return cls("", "", 0, 0, 0.0, False)
        words = len(text.split())
        return cls(text[:SCAN_BYTES], " ".join(form_text)[:SCAN_BYTES], words, len(forms),
                   min(len(form_text) / words, 1.0) if words else 0.0, password)

    def forms_said(self) -> str:
        return f"forms hold {self.in_forms:.0%} of the words" if self.forms else ""
