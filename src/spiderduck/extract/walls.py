"""Interstitials: a page that is a wall in front of the content, not the content (Status INTERSTITIAL).

Storing a consent wall or a bot challenge as a link's preview is the wrong card users complain of
most (mastodon#26202, metascraper#216 and #500, iframely#227). A wall is told by signals a
reviewer can read, never by one string:

- the answer: 401, 403, 429, 451 and 503 are what walls answer with (`WALL_STATUSES`);
- known markers in the markup (`CHALLENGE_MARKERS`, `CAPTCHA_MARKERS`, `CONSENT_MARKERS`): a bot
  challenge's own script or options object, a captcha widget, a consent vendor's dialog; and the
  IAB TCF stub (`wall_words.TCF_MARKERS`: `__tcfapi`, its locator iframe) a consent manager puts on
  a page before its dialog, which most European news pages carry too: a sign, never a wall alone;
- the page's shape, read only for pages that may be walls, from its first SHAPE_BYTES: how many
  words it shows (few: under FEW_WORDS and FEW_CHARS), how much of that is inside forms, a
  password field, a date-of-birth question, a consent manager's words ("We value your privacy",
  "We and our partners": `wall_words.PRIVACY_DIALOG`) in the first CARD_CHARS of its forms and
  dialogs that have no field to type in (a contact form's privacy note is no card);
- whether it has real sharing metadata of its own (og:/twitter: title or description, a JSON-LD
  headline). A page that states its own metadata is the content, whatever banner or paywall it
  also has. Site-level metadata is not the page's own (`_own_metadata`): og:site_name never
  counts; a title made only of the site's name (og:site_name, application-name, or the brand of
  its host: "Instagram", "Log in • Instagram") and a wall's own words (`wall_words.TITLE_WORDS`:
  "Anmelden", "Iniciar sesión") is the site's; so is a description that names the site under no
  title of its own, and any description under titles that are all the site's ("Connect with
  friends" under "Anmelden • Portal") unless the page shows an <h1> of its own ("Blue Widget") or
  a title is about privacy or cookies (`wall_words.PRIVACY_TITLE`); and on a deeper page whose
  og:url (else rel=canonical) names a site's root, all of it is the template's;
- the page's URL, when known: a consent page a site sends its readers to (`consent_page`) is a
  consent wall whatever it states. `consent_redirect` says the same of a redirect chain.

The kinds, each decided by one rule (`detect`), first match wins:

- consent_wall, by its URL alone (`consent_page`);
- bot_challenge: a challenge marker, and a wall status or no real metadata;
- captcha: a captcha widget, no real metadata, and a wall status or a title asking to prove the
  reader is human;
- access_denied: a title or heading saying access is denied or blocked, no real metadata, and a
  401/403/451 status or few words;
- login_wall: a password field, no real metadata, few words, and forms holding most of them or a
  title asking to log in that is only that and the site's name (`wall_words.LOGIN_TITLE`);
- age_gate: an age question (date of birth, "are you 18"), no real metadata, and few words;
- consent_wall: the page's URL is a consent page; or, with no real metadata, cookie-consent words
  inside a form or dialog and few words or forms holding most of them; or a consent manager's
  words on a page of few words without an <h1> naming content ("Contact us"), inside a form or
  dialog, or anywhere when a consent manager's marker (a vendor's, the TCF stub) is on the page
  and its title is the site's or none and not about privacy: its card is the page.

A normal page that mentions cookies or has a login link has its metadata, or many words: not a
wall. Everything is bounded: markers are looked for in the first SCAN_BYTES, and the page's shape
is read (one more parse) only when the cheap signals say it may be a wall.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

from selectolax.lexbor import LexborHTMLParser

from spiderduck.core import urls
from spiderduck.extract.document import Document
from spiderduck.extract.wall_words import (TCF_MARKERS, TEXT_FIELDS, content_heading, folded, login_title,
                                           own_heading, privacy_title, privacy_words, site_description, site_title)

KINDS = ("bot_challenge", "captcha", "access_denied", "login_wall", "age_gate", "consent_wall")
WALL_STATUSES = frozenset({401, 403, 429, 451, 503})   # read for a wall even though they are errors
SCAN_BYTES = 256 * 1024       # of the markup searched for markers
SHAPE_BYTES = 128 * 1024      # of the markup parsed again for its shape (words, forms) ...
SHAPE_TAGS = 6_000            # ... when it holds at most this many tags: a tree builder's time grows
                              # with the square of nesting, so a deeper prefix is not read (no wall)
FEW_WORDS = 250               # a page showing fewer words than this is no article ...
FEW_CHARS = 8 * 1024          # ... nor more characters than this (a script without spaces, one long "word")
MOST = 0.5                    # the share of a page's words inside forms that makes them the page
CARD_CHARS = 4 * 1024         # of a page's forms and dialogs searched for a consent manager's words

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
_MARKERS = (*CHALLENGE_MARKERS, *CAPTCHA_MARKERS, *CONSENT_MARKERS, *TCF_MARKERS, *_AGE_HINTS, *_PASSWORD_HINTS)
_GUARD_OF = {m: next((g for g in _GUARDS if g in m), "") for m in _MARKERS}
_ENCODED = {m: m.encode("ascii") for m in (*_MARKERS, *_GUARDS)}

# Consent pages a site sends its readers to before the content. These hosts are nothing else:
CONSENT_HOSTS = ("consent.google.com", "consent.youtube.com", "consent.yahoo.com", "guce.yahoo.com")
# ... elsewhere a host whose first label, or a path with a segment, is one of these is one when
# a parameter (RETURN_PARAMS) holds the http(s) URL it sends the reader back to once answered.
CONSENT_LABELS = ("consent", "guce", "myprivacy")
CONSENT_SEGMENTS = ("consent", "cookie-consent", "cookies-consent", "privacy-gate", "cookie-wall", "cookiewall",
                    "gdpr-consent")
RETURN_PARAMS = ("continue", "redirect", "redirect_url", "redirect_uri", "redirecturl", "return", "return_to",
                 "returnurl", "return_url", "done", "destination")
_CONSENT_HINTS = ("consent", "guce", "myprivacy", "privacy-gate", "cookie-wall", "cookiewall")

_QUOTED = 80                  # characters of a title or description a reason quotes


@dataclass(frozen=True)
class Wall:
    kind: str          # one of KINDS
    reason: str        # the signals that decided it


def detect(markup: str | bytes, doc: Document, http_status: int = 200, url: str = "") -> Wall | None:
    """The wall this page is, or None for content. `markup` is the page as parsed into `doc`;
    `url` the page's (final) URL, when known."""
    status = f"HTTP {http_status}" if http_status in WALL_STATUSES else ""
    if url and (consent := consent_page(url)):
        return _wall("consent_wall", status, consent)
    stated = _own_metadata(doc, url)
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
    consent, tcf = head.first(CONSENT_MARKERS), head.first(TCF_MARKERS)
    worth_reading = (status or consent or tcf or _DENIED.search(title) or head.first(_PASSWORD_HINTS)
                     or head.first(_AGE_HINTS) or _COOKIE_WORDS.search(title))
    if not worth_reading:
        return None
    shape = _Shape.read(markup)
    if shape is None:
        return None
    few = shape.words < FEW_WORDS and len(shape.text) <= FEW_CHARS
    if _DENIED.search(title) and (http_status in (401, 403, 451) or few):
        ref = _REFERENCE.search(shape.text)
        return _wall("access_denied", status, _said(title), f"{ref[0]!r}" if ref else "",
                     f"{shape.words} words")
    login = _login_title(doc, url) if shape.password and few and shape.in_forms < MOST else ""
    if shape.password and few and (shape.in_forms >= MOST or login):      # forms hold few words under a login title
        return _wall("login_wall", status, "a password field", _said(login), "" if login else shape.forms_said(),
                     _tagline(doc), f"{shape.words} words")
    if few and (age := _AGE.search(shape.text)):
        return _wall("age_gate", status, f"age question {age[0]!r}", f"{shape.words} words")
    cookies = _COOKIE_WORDS.search(shape.form_text)
    privacy = card = ""     # a consent manager's card that is the whole page, in a dialog or not
    if few and not content_heading(doc.h1, _site_names(doc, url)):
        privacy = privacy_words(shape.card_text, CARD_CHARS)
        if not privacy and (consent or tcf) and (card := _site_titled(doc, url)):
            privacy = privacy_words(shape.text, FEW_CHARS)
    if (cookies and (few or shape.in_forms >= MOST)) or privacy:
        markers = (f"consent marker {consent!r}" if consent else "", f"IAB TCF stub {tcf!r}" if tcf else "")
        words = f"consent manager's words {privacy!r}" if privacy else "" if any(markers) else "cookie-consent words"
        return _wall("consent_wall", status, *markers, words, card if privacy else "", shape.forms_said(),
                     _tagline(doc), f"{shape.words} words")
    return None


def interstitial(markup: str | bytes, doc: Document, http_status: int = 200, url: str = "") -> str:
    """"<kind>: <signals>" when the page is a wall (`detect`), else '': the record's `error`."""
    wall = detect(markup, doc, http_status, url)
    return f"{wall.kind}: {wall.reason}" if wall else ""


def consent_page(url: str) -> str:
    """Why `url` is a consent page a site sends its readers to before the content, or ''.

    One of CONSENT_HOSTS; or a host whose first label is in CONSENT_LABELS, or a path with a
    segment in CONSENT_SEGMENTS, that holds the URL to go back to in one of RETURN_PARAMS
    (`consent.portal.test/m?continue=https://www.portal.test/watch`, `site.test/privacy-gate?
    redirect=https://site.test/a`). An article at `/consent` with no such parameter is not."""
    lowered = url[:SCAN_BYTES].lower()
    if not any(hint in lowered for hint in _CONSENT_HINTS):
        return ""
    try:
        parts = urlsplit(lowered)
        host = (parts.hostname or "").rstrip(".")
    except ValueError:
        return ""
    if parts.scheme not in ("http", "https") or not host:
        return ""
    if host in CONSENT_HOSTS:
        return f"consent page {host}"
    segments = [seg for seg in parts.path.split("/") if seg]
    where = (f"consent host {host}" if host.split(".", 1)[0] in CONSENT_LABELS else
             next((f"consent path {parts.path!r}" for seg in segments if seg in CONSENT_SEGMENTS), ""))
    if not where:
        return ""
    back = next((value for name, value in parse_qsl(urlsplit(url[:SCAN_BYTES]).query, keep_blank_values=True)
                 if name.lower() in RETURN_PARAMS and value.lower().startswith(("http://", "https://"))), "")
    return f"{where} returning to {back[:120]!r}" if back else ""


def consent_redirect(chain_urls: list[str] | tuple[str, ...]) -> str | None:
    """Why a redirect chain (the URLs fetched in order, the last one answered) ends on a consent
    page rather than the content (`consent_page`), or None. A chain of one URL is no redirect."""
    if len(chain_urls) < 2:
        return None
    reason = consent_page(chain_urls[-1])
    return f"redirected to {reason}" if reason else None


def _own_metadata(doc: Document, url: str = "") -> bool:
    """Whether the page states real sharing metadata of its own, not its site's (see the module's
    docstring): a JSON-LD headline, or an og:/twitter: title or description that is not the site's."""
    titles = [t for t in (doc.meta("og:title"), doc.meta("twitter:title")) if t]
    descriptions = [d for d in (doc.meta("og:description"), doc.meta("twitter:description")) if d]
    if any('"headline"' in block for block in doc.jsonld):
        return True
    if not (titles or descriptions) or (url and _names_a_root(doc, url)):
        return False
    names = _site_names(doc, url)
    if any(not site_title(t, names) for t in titles):
        return True
    own_title = bool(doc.title) and not site_title(doc.title, names)      # its <title>, if not the site's
    if ((titles or doc.title) and not own_title and not own_heading(doc.h1, names)
            and not any(privacy_title(t) for t in (*titles, doc.title))):
        return False                   # every title it has is the site's: a description under them is its tagline
    return any(not site_description(d, names) for d in descriptions)


def _names_a_root(doc: Document, url: str) -> bool:
    """A deeper page (a path or a query) whose og:url, else its first rel=canonical, is a site's root."""
    try:
        page = urlsplit(url)
        if not (page.path.strip("/") or page.query):
            return False
        declared = doc.meta("og:url") or next((link.href for link in doc.links if "canonical" in link.rel), "")
        if not declared.strip():
            return False
        claimed = urlsplit(urls.join(url, declared.strip()) or "")
    except ValueError:
        return False
    return bool(claimed.netloc) and not (claimed.path.strip("/") or claimed.query)


def _site_names(doc: Document, url: str) -> set[str]:
    """The site's names, folded: og:site_name, application-name, and the brand of its host (the
    first label of its registrable domain: `instagram` for www.instagram.com)."""
    names = {folded(doc.meta("og:site_name")), folded(doc.meta("application-name"))}
    try:
        host = (urlsplit(url).hostname or "") if url else ""
        if host and not urls.is_ip_literal(host):
            names.add(folded(urls.registrable_domain(host).split(".", 1)[0]))
    except (ValueError, urls.InvalidUrl):
        pass
    names.discard("")
    return names


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
    return f"title {title[:_QUOTED]!r}" if title else ""


def _login_title(doc: Document, url: str) -> str:
    """The page's title when it asks the reader to log in and is only that and the site's name
    ("Anmelden • Portal", "Log in"), else ''."""
    names = _site_names(doc, url)
    return next((t for t in (doc.title, doc.meta("og:title")) if t and login_title(t, names)), "")


def _site_titled(doc: Document, url: str) -> str:
    """How the page has no title of its own, its <title> absent or the site's (its og:/twitter:
    titles are, on a page without metadata of its own) and none about privacy, or ''."""
    if any(privacy_title(t) for t in (doc.title, doc.meta("og:title"), doc.meta("twitter:title"))):
        return ""
    if not doc.title:
        return "no title"
    return f"the site's title {doc.title[:_QUOTED]!r}" if site_title(doc.title, _site_names(doc, url)) else ""


def _tagline(doc: Document) -> str:
    """On a wall, the description it states (the site's, as `_own_metadata` found), for the reason."""
    said = doc.meta("og:description") or doc.meta("twitter:description")
    return f"the site's description {said[:_QUOTED]!r}" if said else ""


def _wall(kind: str, *signals: str) -> Wall:
    return Wall(kind, "; ".join(s for s in signals if s))


@dataclass(frozen=True)
class _Shape:
    """What a page shows: its words, and how much of it is forms."""
    text: str              # its visible text, white space folded (at most SCAN_BYTES characters)
    form_text: str         # the part of it inside forms and dialogs
    card_text: str         # ... of those without a field to type in (at most CARD_CHARS characters)
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
            forms = tree.css("form, dialog, [role=dialog], [role=alertdialog], [aria-modal=true]")
            said = [f.text(separator=" ") for f in forms]
            form_text = " ".join(said).split()
            cards = " ".join(t for f, t in zip(forms, said) if f.css_first(TEXT_FIELDS) is None)
            password = tree.css_first('input[type="password" i]') is not None
        except Exception:  # noqa: BLE001 -- a page the parser cannot read shows nothing
            return cls("", "", "", 0, 0, 0.0, False)
        words = len(text.split())
        return cls(text[:SCAN_BYTES], " ".join(form_text)[:SCAN_BYTES], " ".join(cards.split())[:CARD_CHARS], words,
                   len(forms), min(len(form_text) / words, 1.0) if words else 0.0, password)

    def forms_said(self) -> str:
        return f"forms hold {self.in_forms:.0%} of the words" if self.forms else ""
