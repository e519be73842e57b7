"""Preview honesty (issue 43): does the card show what a person who clicks will see?

`compare(first, second)` weighs two looks at one URL, the preview crawler's (the first fetch) and
a browser's (the second look), and says `consistent` or `differs`, with the differences among
DIFFERENCES:

- `final_domain`: the registrable domain each look ended on;
- `redirects`: the registrable domains each redirect chain passed through, apart from the final
  one (a hop through a consent page, `walls.consent_page`, is none: the consent cookie brings the
  browser back to the same page);
- `status`: the final answer's HTTP status;
- `title`, `description`: compared normalised (`normalised_text`): case, white space, Unicode
  forms and every run of digits aside, so a rotating counter or a changing date is no difference;
- `image`: the card image's URL without its size or cache-busting parameters (`normalised_image`);
- `claimed_domain`: a card that claims a registrable domain other than the one it is on (its
  `og:url` or canonical URL, or an `og:site_name` that is a domain name), in either look, even
  when both looks agree. A brand name in `og:site_name` (`Bank of America`) claims nothing.

Legitimate variation is none of these: a mobile redirect within the same registrable domain
(`www.` to `m.`), `Vary: User-Agent` with the same content, image size parameters, a counter in a
headline. What the comparison cannot see: an origin that cloaks by the caller's address, or a
page that changes after both looks.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from spiderduck.core import urls
from spiderduck.extract.walls import consent_page

CONSISTENT, DIFFERS, UNCHECKED = "consistent", "differs", "unchecked"
VERDICTS = (CONSISTENT, DIFFERS, UNCHECKED)
DIFFERENCES = ("final_domain", "redirects", "status", "title", "description", "image", "claimed_domain")
TEXT_CHARS = 1_024      # of a title or description compared


@dataclass(frozen=True)
class Look:
    """What one fetch of a URL showed: where it ended, how it got there, and the card."""
    final_url: str
    chain: tuple[str, ...] = ()     # the URLs fetched before the final one, in order
    status: int = 200
    title: str = ""
    description: str = ""
    image: str = ""
    claimed_url: str = ""           # og:url, else the canonical URL
    site_name: str = ""


def compare(first: Look, second: Look) -> tuple[str, tuple[str, ...]]:
    """(`consistent` or `differs`, the differences in DIFFERENCES' order)."""
    found = []
    if domain_of(first.final_url) != domain_of(second.final_url):
        found.append("final_domain")
    if _passed(first) != _passed(second):
        found.append("redirects")
    if first.status != second.status:
        found.append("status")
    if normalised_text(first.title) != normalised_text(second.title):
        found.append("title")
    if normalised_text(first.description) != normalised_text(second.description):
        found.append("description")
    if normalised_image(first.image) != normalised_image(second.image):
        found.append("image")
    if claimed_domain(first) or claimed_domain(second):
        found.append("claimed_domain")
    return (DIFFERS if found else CONSISTENT), tuple(found)


def claimed_domain(look: Look) -> str:
    """The registrable domain a card claims that is not the one it is on, or ''. Only a name
    under a known suffix claims (urls.under_known_suffix): a development address left in an
    og:url (`localhost:3000`, `127.0.0.1`) or a brand written like a domain (`Node.js`) does not."""
    on = domain_of(look.final_url)
    for claim in (domain_of(look.claimed_url), _named_domain(look.site_name)):
        if claim and on and claim != on and urls.under_known_suffix(claim):
            return claim
    return ""


_DIGITS = re.compile(r"\d+")


def normalised_text(text: str) -> str:
    """A title or description as compared: NFKC, case folded, white space folded, each run of
    digits one `#` (`12 readers`, `3 minutes ago`), its first TEXT_CHARS."""
    text = unicodedata.normalize("NFKC", text[:TEXT_CHARS * 2]).casefold()
    return _DIGITS.sub("#", " ".join(text.split()))[:TEXT_CHARS]


# Query parameters that size, crop, encode or cache-bust an image, never choose it.
SIZE_PARAMS = frozenset("""w h width height size sz s resize fit crop quality q dpr format fm fmt auto
    v ver version t ts timestamp cb cachebust cache rev _ itok impolicy imwidth imheight scale
    mode rect ar""".split())
# Path segments and name suffixes that size an image (`/w_600,h_400/`, `/600x400/`, `-300x200.jpg`).
_SIZE_SEGMENT = re.compile(r"/(?:[whcq]_[^/]*|\d{2,5}x\d{2,5}|\d{2,5}w)(?=/)", re.I)
_SIZE_SUFFIX = re.compile(r"[-_@]\d{2,5}x\d{0,5}(?=\.\w{2,5}$)|@\dx(?=\.\w{2,5}$)", re.I)


def normalised_image(url: str) -> str:
    """An image URL as compared: its registrable domain (a CDN's `i0.` and `i1.` hosts are one),
    its path without size segments or suffixes, its query without SIZE_PARAMS; no scheme."""
    if not url:
        return ""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
    except ValueError:
        return url
    path = _SIZE_SUFFIX.sub("", _SIZE_SEGMENT.sub("", parts.path))
    query = urlencode(sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                             if k.lower() not in SIZE_PARAMS))
    return urlunsplit(("", _domain_of_host(host), path, query, ""))


def _passed(look: Look) -> frozenset[str]:
    final = domain_of(look.final_url)
    return frozenset(d for d in (domain_of(u) for u in look.chain if not consent_page(u)) if d and d != final)


def domain_of(url: str) -> str:
    """A URL's registrable domain, '' for none (the unit every comparison here is made in)."""
    if not url:
        return ""
    try:
        return _domain_of_host(urlsplit(url).hostname or "")
    except ValueError:
        return ""


def _domain_of_host(host: str) -> str:
    try:
        return urls.registrable_domain(host) if host else ""
    except urls.InvalidUrl:
        return host


def _named_domain(site_name: str) -> str:
    """The registrable domain an og:site_name that is a domain name names (`Example.com`), else ''
    (a brand: `Bank of America`, `Instagram`)."""
    name = site_name.strip()
    if "." not in name or " " in name or len(name) > 253:
        return ""
    try:
        return urls.domain_named(name)
    except (urls.InvalidDomain, urls.InvalidUrl):
        return ""
