"""A record's `embed_html`: one player iframe, from an allowed host only.

Users put `embed_html` into their own pages, so whatever it holds runs there: it is never markup
passed through from a page or an oEmbed document (both are chosen by whoever wrote the page), but
one `<iframe>` rebuilt from scratch:

- its `src` an absolute `https:` URL (`//host/...` is taken as https; `http:` is refused, not
  upgraded) without user name, password or port, whose host is in `process.embed_allow_hosts`:
  named exactly, or under a `*.example.com` glob (which does not match `example.com` itself).
  The URL is parsed as browsers parse it (WHATWG, through spiderduck.core.urls / ada), and the src written
  is ada's serialization of it, so the host checked is the host a browser loads. A src holding
  white space, control characters or a backslash is refused outright, as is a host with a
  trailing dot; an internationalised host is compared in its punycode form (`xn--...`), so a
  look-alike never matches an ASCII name;
- of the other attributes, only these, each rebuilt: `width` and `height` (pixels, clamped to
  1..4096, or a percentage, 1..100%), `title` (text, folded, at most TITLE_MAX characters),
  `frameborder` (0 or 1), `allow` (feature names from ALLOW_FEATURES, without their origin
  lists, which default to the frame's own origin), `allowfullscreen`, `referrerpolicy` (from
  REFERRER_POLICIES), and always our own `sandbox` (SANDBOX: the frame's scripts run in its own
  origin, it may open popups, never navigate the embedding page) and `loading="lazy"`.
  Everything else (`srcdoc`, `style`, the page's `sandbox`, `on*` handlers, `name`, ...) is
  dropped;
- every value HTML-escaped, quotes included; an iframe longer than EMBED_MAX (the record's
  limit for embed_html) is none.

So the result is exactly `<iframe ...></iframe>` or "": never a script, never a second element.
The allow list limits hosts, not paths: any page of an allowed host may be framed.
"""
from __future__ import annotations

import html as html_lib
import re
from typing import Any, Iterable, Mapping, Sequence

from selectolax.lexbor import LexborHTMLParser

from spiderduck.core import urls
from spiderduck.wire.record_limits import TEXT_LIMITS

__all__ = ["host_allowed", "from_oembed_html", "from_player", "first_player", "may_embed", "HTML_MAX"]

HTML_MAX = 65_536          # characters of an oEmbed document's html read; longer html gives ""
TAGS_MAX = 1_000           # "<" in that html; more gives "" (HTML tree building is quadratic in
                           # nesting depth: 64 KB of nested <div>s take half a second to parse)
SRC_MAX = 2_048            # characters of a src URL
EMBED_MAX = TEXT_LIMITS["embed_html"]   # characters of the iframe made; a longer one is none
# Every iframe is sandboxed: its scripts run (players need them) in its own origin, and it may
# open a popup (a link to the video's page) and present, but never navigate the embedding page.
SANDBOX = "allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox allow-presentation"
TITLE_MAX = 200            # characters of a title
PIXELS_MAX = 4_096

# Permissions-Policy features a player may be granted: playing, full screen, and the sensors a
# 360° video reads. Not the camera, microphone, location, payment, clipboard reading, USB...
ALLOW_FEATURES = ("accelerometer", "autoplay", "encrypted-media", "fullscreen",
                  "gyroscope", "picture-in-picture", "web-share")
# Referrer policies a frame may ask for; not `unsafe-url` nor `no-referrer-when-downgrade`,
# which would send the embedding page's full URL.
REFERRER_POLICIES = ("no-referrer", "origin", "origin-when-cross-origin", "same-origin",
                     "strict-origin", "strict-origin-when-cross-origin")
# What an iframe made from a player URL (og:video, twitter:player) is allowed.
PLAYER_ALLOW = ("autoplay", "encrypted-media", "fullscreen", "picture-in-picture")
PLAYER_REFERRER_POLICY = "strict-origin-when-cross-origin"

# Paths of media files, which are played by <video>/<audio>, not framed: not players.
_MEDIA_FILE = re.compile(r"\.(?:mp4|m4v|m4a|webm|mov|qt|avi|mkv|wmv|flv|f4v|swf|3gp|ogv|ogg|oga|opus"
                         r"|mp3|wav|flac|aac|m3u8|mpd|ts)$")
_PLAYER_TYPES = ("", "text/html", "application/xhtml+xml")
_BAD_SRC_CHAR = re.compile(r"[\x00-\x20\x7f-\x9f\\]")
_HOST = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_SIZE = re.compile(r"(\d{1,12})(?:\.\d{0,12})?\s{0,4}(%|px)?", re.I)   # on a stripped value: no \s* either side
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def host_allowed(host: str, allow_hosts: Sequence[str]) -> bool:
    """Whether `host` (a host name as a parsed URL has it: lower-case, punycode) is one of
    `allow_hosts`: named exactly, or a subdomain, at any depth, of a `*.domain` entry. A host
    that is no plain DNS name (an IP literal in brackets, a trailing dot, an empty label) and an
    empty list allow nothing."""
    if not isinstance(host, str) or len(host) > 253:
        return False
    host = host.lower()
    if not _HOST.fullmatch(host):
        return False
    for entry in allow_hosts:
        if not isinstance(entry, str):
            continue
        entry = entry.lower()
        if entry.startswith("*."):
            if host.endswith(entry[1:]) and len(host) > len(entry) - 1:
                return True
        elif host == entry:
            return True
    return False


def from_oembed_html(html: str, allow_hosts: Sequence[str]) -> str:
    """The first `<iframe>` of an oEmbed document's `html`, rebuilt (see the module's doc), when
    its src is from an allowed host; "" otherwise: no iframe (a blockquote and a script, as a
    post's embed often is), a first iframe from another host, html over HTML_MAX characters or
    TAGS_MAX tags, an empty allow list."""
    if not allow_hosts or not isinstance(html, str) or not html or len(html) > HTML_MAX:
        return ""
    if "<" not in html or html.count("<") > TAGS_MAX:
        return ""
    try:
        node = LexborHTMLParser(html).css_first("iframe")
    except Exception:  # noqa: BLE001 -- whatever the parser makes of it, it is no embed
        return ""
    if node is None:
        return ""
    attrs: Mapping[str, str | None] = node.attributes
    src = _src(attrs.get("src"), allow_hosts)
    if not src:
        return ""
    return _iframe(src, width=_size(attrs.get("width")), height=_size(attrs.get("height")),
                   title=_title(attrs.get("title")), frameborder=_frameborder(attrs.get("frameborder")),
                   allow=_allow(attrs.get("allow")), allowfullscreen="allowfullscreen" in attrs,
                   referrerpolicy=_referrer_policy(attrs.get("referrerpolicy")))


def from_player(url: str, width: int, height: int, allow_hosts: Sequence[str], *,
                content_type: str = "", title: str = "") -> str:
    """An `<iframe>` showing a player page (`og:video:secure_url` / `og:video:url`,
    `twitter:player`) of `width` x `height` pixels (0: unstated, left out), when the URL's host
    is allowed and the URL is no media file: one whose path ends in a media extension (.mp4,
    .m3u8, ...) or whose stated `content_type` (og:video:type) is not HTML. "" otherwise.
    `title` (the page's, say) names the frame for screen readers."""
    if not allow_hosts:
        return ""
    if isinstance(content_type, str) and content_type.split(";", 1)[0].strip().lower() not in _PLAYER_TYPES:
        return ""
    src = _src(url, allow_hosts)
    if not src or _MEDIA_FILE.search(urls.parse(src).pathname.lower()):
        return ""
    return _iframe(src, width=_pixels(width), height=_pixels(height), title=_title(title),
                   frameborder="0", allow=PLAYER_ALLOW, allowfullscreen=True,
                   referrerpolicy=PLAYER_REFERRER_POLICY)


def first_player(players: Iterable[Any], allow_hosts: Sequence[str], title: str = "") -> str:
    """`from_player` of the first of `players` that gives an iframe; each has `url`, `width`,
    `height` and `content_type` (a spiderduck.core.record.Video, or rules' og:video structures)."""
    if not allow_hosts:
        return ""
    for player in players:
        found = from_player(player.url, player.width, player.height, allow_hosts,
                            content_type=player.content_type, title=title)
        if found:
            return found
    return ""


def may_embed(url: str, allow_hosts: Sequence[str]) -> bool:
    """Whether an oEmbed document at `url` may be worth reading for its iframe alone: its host is
    under the registrable domain of an allowed host (`vimeo.com/api/oembed.json` for
    `player.vimeo.com`). A site's own oEmbed (every WordPress post has one) is not read for
    nothing."""
    try:
        domain = urls.registrable_domain(urls.host_of(url))
    except (urls.InvalidUrl, ValueError):
        return False
    if not domain:
        return False
    for entry in allow_hosts:
        if isinstance(entry, str) and entry:
            try:
                if urls.registrable_domain(entry.removeprefix("*.")) == domain:
                    return True
            except (urls.InvalidUrl, ValueError):
                continue
    return False


# --- the parts --------------------------------------------------------------------------------

def _src(value: Any, allow_hosts: Sequence[str]) -> str:
    """The URL serialized as browsers would, when it is an https URL of an allowed host with no
    user info or port; else ''."""
    if not isinstance(value, str):
        return ""
    value = value.strip(" \t\n\f\r")
    if not value or len(value) > SRC_MAX or _BAD_SRC_CHAR.search(value):
        return ""
    if value.startswith("//"):
        value = "https:" + value
    try:
        url = urls.parse(value)
        if url.protocol != "https:" or url.username or url.password or url.port:
            return ""
        if not host_allowed(url.hostname, allow_hosts):
            return ""
        href = url.href
        # What is written is what was checked: the serialization parses back to the same host.
        again = urls.parse(href)
        if again.href != href or again.hostname != url.hostname:
            return ""
    except (urls.InvalidUrl, ValueError):
        return ""
    return href


def _iframe(src: str, *, width: str, height: str, title: str, frameborder: str,
            allow: Sequence[str], allowfullscreen: bool, referrerpolicy: str) -> str:
    parts = [f'src="{_escape(src)}"']
    for name, value in (("width", width), ("height", height), ("title", title),
                        ("frameborder", frameborder), ("allow", "; ".join(allow))):
        if value:
            parts.append(f'{name}="{_escape(value)}"')
    if allowfullscreen:
        parts.append("allowfullscreen")
    if referrerpolicy:
        parts.append(f'referrerpolicy="{_escape(referrerpolicy)}"')
    parts.append(f'sandbox="{SANDBOX}"')
    parts.append('loading="lazy"')
    made = f"<iframe {' '.join(parts)}></iframe>"
    return made if len(made) <= EMBED_MAX else ""


def _escape(value: str) -> str:
    return html_lib.escape(value, quote=True)


def _size(value: Any) -> str:
    """A stated width or height: pixels clamped to 1..PIXELS_MAX ("640", "640px", "640.5"), or
    a percentage clamped to 1..100; '' for none, zero, or anything else ("auto", "-1", "1e3")."""
    m = _SIZE.fullmatch(value.strip()[:32]) if isinstance(value, str) else None
    if not m:
        return ""
    number = int(m.group(1))
    if number < 1:
        return ""
    if m.group(2) == "%":
        return f"{min(number, 100)}%"
    return str(min(number, PIXELS_MAX))


def _pixels(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return ""
    return str(min(value, PIXELS_MAX))


def _title(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    return " ".join(_CONTROL.sub(" ", value).split())[:TITLE_MAX].strip()


def _frameborder(value: Any) -> str:
    value = value.strip() if isinstance(value, str) else ""
    return value if value in ("0", "1") else ""


def _allow(value: Any) -> tuple[str, ...]:
    """The known feature names of an `allow` attribute, each once, in its order; their origin
    lists dropped (`autoplay *` -> `autoplay`: the frame's own origin)."""
    if not isinstance(value, str):
        return ()
    found: list[str] = []
    for directive in value[:1024].split(";"):
        words = directive.split()
        name = words[0].lower() if words else ""
        if name in ALLOW_FEATURES and name not in found:
            found.append(name)
    return tuple(found)


def _referrer_policy(value: Any) -> str:
    value = value.strip().lower() if isinstance(value, str) else ""
    return value if value in REFERRER_POLICIES else ""
