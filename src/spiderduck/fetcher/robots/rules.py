"""robots.txt decisions: is this URL allowed for our crawler, and how slowly to go.

`RobotsRules` is the one interface the fetcher sees (modelled on Scrapy's
`scrapy/robotstxt.py`); the parser behind it is protego. Protego's matcher is
sound, but its reading of a robots.txt differs from Google's reference parser
(RFC 9309 plus Google's documented extensions) in a few places, so this module
reads the file itself, Google's way, and hands protego a normalised robots.txt
holding only `user-agent`, `allow` and `disallow` lines:

- Lines end at LF, CR or CRLF; a leading UTF-8 byte order mark is skipped; a
  line is cut at 16,663 bytes (Google's `kMaxLineLen - 1`); `#` starts a comment.
- `key: value`, or `key value` when the colon is missing and there are exactly
  two words. Keys match by prefix, case-insensitively, with Google's list of
  frequent typos (`useragent`, `dissallow`, ...).
- A group is a run of user-agent lines followed by rules. Only `allow` and
  `disallow` end a run: an unknown line, a sitemap or a crawl-delay does not.
  Such lines are dropped, so protego cannot split a group at them.
- A user-agent value is matched on its product token, the leading run of
  `[A-Za-z_-]` (`User-agent: Foo Bar` names `foo`); `*` alone, or followed by
  a space, is the global group.
- Matching is byte for byte on percent-encoded paths, as Google does: a
  pattern's non-ASCII bytes are escaped and its escapes upper-cased, and the
  URL is taken as given (pass URLs already encoded, as `spiderduck.core.urls`
  produces them). `%62` is not `b`. Protego would decode escapes on both
  sides, so every `%` is handed to it as `%25`, which it leaves alone.
  Known approximation: this lengthens a pattern by two characters for each
  escape it holds (as protego already does for a space or a quote it escapes
  itself), and rules are ranked by length. Only rules with wildcards can
  match one URL with different numbers of escapes, so the longest match
  differs from Google's only in such contrived files.
- `allow: /dir/index.htm...` also allows `/dir/` itself (Google's extension).

The crawler's own user agent is matched by its product token (spiderduck.core.user_agent): a bare
token (`FooBot`) or a User-Agent header whose first product has a version
(`SpiderDuck/0.1.0 (+https://...)` -> `spiderduck`). Matching is exact and
case-insensitive. Anything else (`Foo Bar`, which Google's matcher would not
obey either) has no token and is bound by the `*` group only.

`Crawl-delay` is read here too (protego never sees it). It applies to the user
agents named by the lines just above it, as most crawlers read it, so that
`User-agent: a / Crawl-delay: 9 / User-agent: * / Crawl-delay: 1` gives `a` 9
even though, for allow/disallow, `a` and `*` share one group.

`/robots.txt` itself is always allowed (protego's rule).
"""
from __future__ import annotations

import math
import re

from protego import Protego

from spiderduck.core.user_agent import product_token

__all__ = ["RobotsRules"]

_BOM = b"\xef\xbb\xbf"
_MAX_LINE_BYTES = 2083 * 8 - 1  # Google keeps this many bytes of a line
_LINE_END = re.compile(rb"\r\n|\r|\n")
_WHITESPACE = " \t\n\v\f\r"  # C isspace(); str.strip() would take Unicode spaces too
_AGENT_TOKEN = re.compile(r"[A-Za-z_-]*")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_TWO_WORDS = re.compile(r"([^ \t]+)[ \t]+([^ \t]+)").fullmatch

# Google's key prefixes (robots.cc ParsedRobotsKey), typos included; crawl-delay is ours.
# Any other line (sitemap, host, unknown) is dropped: none of them ends a group.
_KEYS = (
    ("user-agent", ("user-agent", "useragent", "user agent")),
    ("allow", ("allow",)),
    ("disallow", ("disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw")),
    ("crawl-delay", ("crawl-delay", "crawl delay", "crawldelay")),
)

# Protego is queried with a product token we know is in the file, or with "*",
# which no token contains, so that only the global group can match it.
_GLOBAL = "*"
_PLACEHOLDER_URL = "http://robots.invalid"


def _lines(content: bytes | str) -> list[str]:
    """Split a robots.txt into lines the way Google's parser reads them."""
    if isinstance(content, str):
        content = content.encode("utf-8", "surrogateescape")
    bom = 0  # Google skips a BOM, or any prefix of one, at the very start.
    while bom < len(_BOM) and content[bom:bom + 1] == _BOM[bom:bom + 1]:
        bom += 1
    return [
        line[:_MAX_LINE_BYTES].decode("utf-8", "surrogateescape")
        for line in _LINE_END.split(content[bom:])
    ]


def _key_value(line: str) -> tuple[str, str] | None:
    """(known key, value) of one line, or None for a blank, unknown or malformed line."""
    line = line.split("\0", 1)[0].split("#", 1)[0].strip(_WHITESPACE)
    key, sep, value = line.partition(":")
    if not sep:
        # Google accepts whitespace for a forgotten colon, with exactly two words.
        words = _TWO_WORDS(line)
        if words is None:
            return None
        key, value = words.groups()
    key = key.strip(_WHITESPACE).lower()
    if not key:
        return None
    for name, prefixes in _KEYS:
        if key.startswith(prefixes):
            return name, value.strip(_WHITESPACE)
    return None


def _agent_of(value: str) -> str:
    """The token a robots.txt user-agent value names: "*", or its leading [A-Za-z_-]."""
    if value[:1] == "*" and (len(value) == 1 or value[1] in _WHITESPACE):
        return _GLOBAL
    return _AGENT_TOKEN.match(value)[0].lower()


def _escape_pattern(value: str) -> str:
    """Google's MaybeEscapePattern (escape non-ASCII, upper-case escapes), then hide "%"."""
    value = _NON_ASCII.sub(
        lambda m: "".join(f"%{b:02X}" for b in m[0].encode("utf-8", "surrogateescape")),
        value,
    )
    return _hide_escapes(value)


def _hide_escapes(text: str) -> str:
    """Upper-case escapes (RFC 3986 6.2.2.1) and write "%" as "%25" so protego keeps them."""
    return _ESCAPE.sub(lambda m: m[0].upper(), text).replace("%", "%25")


def _path_of(url: str) -> str:
    """Path, params and query of a URL, as Google's GetPathParamsQuery extracts them."""
    start = 2 if url.startswith("//") else 0
    early_path = _find_first(url, "/?;", start)
    scheme_end = url.find("://", start)
    if scheme_end == -1 or (early_path != -1 and early_path < scheme_end):
        scheme_end = start
    else:
        scheme_end += 3
    path_start = _find_first(url, "/?;", scheme_end)
    if path_start == -1:
        return "/"
    hash_pos = url.find("#", start)
    if hash_pos != -1 and hash_pos < path_start:
        return "/"
    path = url[path_start:hash_pos] if hash_pos != -1 else url[path_start:]
    return path if path.startswith("/") else "/" + path


def _find_first(text: str, chars: str, start: int) -> int:
    found = [i for i in (text.find(c, start) for c in chars) if i != -1]
    return min(found) if found else -1


def _parse_delay(value: str) -> float | None:
    try:
        delay = float(value)
    except ValueError:
        return None
    return delay if math.isfinite(delay) and delay >= 0 else None


class RobotsRules:
    """The rules of one site's robots.txt. Immutable once built; cheap to query."""

    __slots__ = ("_protego", "_agents", "_delays")

    def __init__(self, protego: Protego, agents: frozenset[str], delays: dict[str, float]):
        self._protego = protego
        self._agents = agents
        self._delays = delays

    @classmethod
    def parse(cls, content: bytes | str) -> RobotsRules:
        """Read a robots.txt body (bytes as fetched, or text)."""
        out: list[str] = []          # the normalised robots.txt protego reads
        agents: set[str] = set()
        delays: dict[str, float] = {}
        run: list[str] = []          # user agents named by the lines just above
        after_agent = False          # the previous known line was a user-agent
        for line in _lines(content):
            parsed = _key_value(line)
            if parsed is None:
                continue
            key, value = parsed
            if key == "user-agent":
                if not after_agent:
                    run = []
                agent = _agent_of(value)
                if agent:
                    run.append(agent)
                    agents.add(agent)
                out.append(f"user-agent: {agent}")
            elif key in ("allow", "disallow"):
                out.append(f"{key}: {_escape_pattern(value)}")
                slash = value.rfind("/")
                if key == "allow" and slash != -1 and value[slash:].startswith("/index.htm"):
                    out.append(f"allow: {_escape_pattern(value[:slash + 1])}$")
            elif key == "crawl-delay":
                delay = _parse_delay(value)
                if delay is not None:
                    delays.update(dict.fromkeys(run, delay))
            after_agent = key == "user-agent"
        return cls(Protego.parse("\n".join(out)), frozenset(agents), delays)

    @classmethod
    def allow_all(cls) -> RobotsRules:
        """Rules for a site without a usable robots.txt (e.g. it answered 404)."""
        return cls.parse("")

    @classmethod
    def disallow_all(cls) -> RobotsRules:
        """Rules for a site whose robots.txt could not be read (e.g. it answered 5xx)."""
        return cls.parse("user-agent: *\ndisallow: /\n")

    def _group(self, user_agent: str) -> str:
        token = product_token(user_agent)
        return token if token in self._agents else _GLOBAL

    def allowed(self, url: str, user_agent: str) -> bool:
        """May `user_agent` fetch `url` (an absolute, percent-encoded URL)?"""
        path = _hide_escapes(_path_of(url))
        return self._protego.can_fetch(_PLACEHOLDER_URL + path, self._group(user_agent))

    def crawl_delay(self, user_agent: str) -> float | None:
        """Seconds to wait between requests, if the group for `user_agent` sets one."""
        return self._delays.get(self._group(user_agent))

    def __repr__(self) -> str:
        return f"RobotsRules(agents={sorted(self._agents)})"
