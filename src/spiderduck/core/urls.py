"""URL rules as small pure functions.

Parsing follows the WHATWG URL Standard (what browsers do) through `ada_url`;
registrable domains come from the Public Suffix List snapshot bundled with
`tldextract`, read without any network access.

What canonicalisation does, by example:

    " HTTP://Example.COM:80/a b?z=1&a=2#top "  ->  "http://example.com/a%20b?z=1&a=2"

- leading and trailing whitespace is stripped (WHATWG also drops tabs and
  newlines anywhere in the input);
- only `http` and `https` are accepted, and a host is required;
- the scheme and host are lower-cased, a default port is dropped, the path's
  dot segments are resolved and non-ASCII or unsafe characters are
  percent-encoded (existing escapes are kept as written);
- an internationalised host becomes its punycode form (`bücher.de` ->
  `xn--bcher-kva.de`), and IPv4 hosts in any notation become dotted decimal
  (`0x7f.1` -> `127.0.0.1`);
- the fragment is dropped; the query is kept as is (not sorted, not decoded);
- the userinfo is dropped (`http://alice:pw@host/` -> `http://host/`): a password in a
  submitted URL is never sent to the origin nor kept (`without_userinfo` does it alone, at
  intake, for a URL not yet canonicalised).

Errors: `InvalidUrl` (a non-retryable `SpiderDuckError`) with a `reason`; `InvalidDomain`,
likewise, for a name given where a registrable domain is meant (`domain_named`).
"""
from __future__ import annotations

import functools
import ipaddress
import re

import ada_url
import tldextract

from spiderduck.core.errors import SpiderDuckError

__all__ = [
    "InvalidDomain",
    "InvalidUrl",
    "canonicalize",
    "domain_named",
    "host_of",
    "is_ip_literal",
    "join",
    "origin_of",
    "parse",
    "registrable_domain",
    "without_userinfo",
]

FETCHABLE_SCHEMES = frozenset({"http", "https"})


class InvalidUrl(SpiderDuckError):
    """A URL we cannot or will not crawl. `reason` says why in a few words."""

    retryable = False

    def __init__(self, url: str, reason: str):
        super().__init__(f"invalid URL {url!r}: {reason}")
        self.url = url
        self.reason = reason


class InvalidDomain(SpiderDuckError):
    """A name that is not a registrable domain (nor a host name or URL under one); not retryable."""

    def __init__(self, text: str, reason: str):
        super().__init__(f"{text!r} is not a registrable domain: {reason}")


def parse(url: str, base: str | None = None) -> ada_url.URL:
    """Parse `url` (against `base` if given) by the WHATWG URL Standard.

    Any scheme is accepted here; see `canonicalize` for what we crawl.
    """
    try:
        return ada_url.URL(url, base)
    except ValueError as exc:
        reason = "cannot be parsed" if base is None else f"cannot be parsed against {base!r}"
        raise InvalidUrl(url, reason) from exc


def canonicalize(url: str) -> str:
    """The one spelling of an http(s) URL that we store and deduplicate by: the WHATWG
    serialization without its fragment.

    One call into ada (normalize_url), three times faster than reading a parsed URL's parts one
    by one; the WHATWG vectors in tests/core/test_urls.py hold the two equal. A serialized URL
    holds "#" only where its fragment starts (elsewhere it is percent-encoded), and an http(s)
    URL that parses always has a host."""
    try:
        href = ada_url.normalize_url(url.strip())
    except ValueError:
        raise InvalidUrl(url, "cannot be parsed") from None
    scheme = href.partition(":")[0]
    if scheme not in FETCHABLE_SCHEMES:
        raise InvalidUrl(url, f"unsupported scheme {scheme}")
    if href.find("@", 0, href.find("/", len(scheme) + 3)) != -1:     # userinfo@ in the authority
        href = ada_url.replace_url(href, username="", password="")
    return href.partition("#")[0]


# The authority of a URL as typed: a scheme, any slashes (WHATWG takes "http:host" and "\\"),
# then up to the last "@" before the path, query or fragment starts.
_USERINFO = re.compile(r"^(\s*[A-Za-z][A-Za-z0-9+.-]*:[/\\]*)[^/\\?#]*@")


def lookup_key(url: str) -> str:
    """The form a URL is stored, looked up and listed under: canonical if it parses, else as
    given (trimmed). The metadata store's key (spiderduck.stores.keys), the denylist's
    (spiderduck.bus.denylist)."""
    try:
        return canonicalize(url)
    except InvalidUrl:
        return url.strip()


def without_userinfo(url: str) -> str:
    """`url` without its userinfo (`user:password@`): what intake keeps of a submitted URL, so
    that no password is ever sent to the origin (aiohttp would make `Authorization: Basic` of
    it), stored, announced, traced or logged. A URL with none is returned as given; one that
    has some is returned as its WHATWG serialization without it, or, when it cannot be parsed,
    as given less everything from its authority's start to its last "@"."""
    if "@" not in url:
        return url
    try:
        parsed = ada_url.URL(url)
    except ValueError:
        return _USERINFO.sub(r"\1", url, count=1)
    if not (parsed.username or parsed.password):
        return url
    parsed.username = ""
    parsed.password = ""
    return parsed.href


def join(base: str, ref: str) -> str | None:
    """Resolve a reference found in a page (`og:image`, `rel=canonical`) against the
    page's URL; None if either cannot be parsed. The result is not canonicalised."""
    try:
        return ada_url.join_url(base, ref)
    except ValueError:
        return None


def host_of(url: str) -> str:
    """The host of `url`, lower-cased, without port (`[::1]` keeps its brackets)."""
    return parse(url).hostname


def origin_of(url: str) -> str:
    """scheme://host[:port] of `url`, the port only when it is not the default."""
    return parse(url).origin


def is_ip_literal(host: str) -> bool:
    """True for an IPv4 address or an IPv6 address, bracketed or not."""
    host = host.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _offline_extractor() -> tldextract.TLDExtract:
    """A suffix extractor that reads only the PSL snapshot bundled with tldextract.

    suffix_list_urls=() means no download is ever attempted; cache_dir=None
    means nothing is read from or written to disk. Private suffixes (github.io,
    blogspot.com) are left out on purpose, so every site of one hosting
    provider shares one domain, hence one politeness queue.
    """
    return tldextract.TLDExtract(
        suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True,
        include_psl_private_domains=False,
    )


_extract = _offline_extractor()


@functools.lru_cache(maxsize=65536)
def registrable_domain(host: str) -> str:
    """The eTLD+1 of a host (`www.bbc.co.uk` -> `bbc.co.uk`): the unit of
    politeness and of fetcher shard ownership.

    - an internationalised host is taken in its punycode form, as
      `canonicalize` writes it (`www.bücher.de` -> `xn--bcher-kva.de`);
    - an IP address is its own domain (returned lower-cased, brackets kept);
    - a host under a suffix the list does not know (`a.b.test`, `localhost`)
      gives its last two labels (`b.test`, `localhost`);
    - a host that is itself a public suffix (`co.uk`) is returned as is.
    """
    host = host.strip().lower().rstrip(".")
    if not host:
        raise InvalidUrl(host, "empty host")
    if not host.isascii():
        host = ada_url.idna_to_ascii(host).decode("ascii", "replace") or host
    if is_ip_literal(host):
        return host
    parts = _extract(host)
    if parts.suffix and parts.domain:
        return f"{parts.domain}.{parts.suffix}"
    if parts.suffix:
        return host
    return ".".join(host.split(".")[-2:])


_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")
_NOT_IN_A_HOST_NAME = frozenset("/?#@:%\\")


@functools.cache
def _top_level_labels() -> frozenset[str]:
    """The last label of every Public Suffix List rule (`com`, `uk`, `ck` of `*.ck`)."""
    return frozenset(rule.rpartition(".")[2] for rule in _extract.tlds)


def under_known_suffix(host: str) -> bool:
    """Whether a host name ends in a top-level label the Public Suffix List knows (`com`, `uk`), or
    in one RFC 6761 reserves for tests (`test`, `example`): not an IP address, a single label
    (`localhost`) or a made-up ending (`Node.js`'s `js`)."""
    host = host.strip().lower().rstrip(".")
    if "." not in host or is_ip_literal(host):
        return False
    last = host.rpartition(".")[2]
    return last in _RESERVED_TOP_LEVEL or last in _top_level_labels()


def is_public_suffix(host: str) -> bool:
    """Whether a host name is itself a public suffix (`com`, `co.uk`): no site's own name."""
    host = host.strip().lower().strip(".")
    if not host or is_ip_literal(host):
        return False
    parts = _extract(host)
    return bool(parts.suffix) and not parts.domain


_RESERVED_TOP_LEVEL = frozenset({"test", "example"})


def domain_named(text: str) -> str:
    """The registrable domain named by a domain, a host name or an http(s) URL, as the fetcher
    names the domain's queue: `news.bbc.co.uk` and `https://news.bbc.co.uk/x` -> `bbc.co.uk`,
    `bücher.de` -> `xn--bcher-kva.de`, `127.0.0.1` and `[::1]` (an IP address is its own domain).

    InvalidDomain for anything else: an empty name, a public suffix itself (`com`, `co.uk`), a
    wildcard (`*.example.com`), a label that is not letters, digits and inner hyphens
    (`-bad-.com`, `exa mple.com`, `a..com`), or a host name with a port, path or user
    (a URL needs its scheme)."""
    name = text.strip()
    if not name:
        raise InvalidDomain(text, "a domain is required")
    if "://" in name:
        try:
            host = host_of(canonicalize(name))
        except InvalidUrl as exc:
            raise InvalidDomain(text, exc.reason) from None
    else:
        if is_ip_literal(name):
            if ":" in name and not name.startswith("["):
                name = f"[{name}]"                  # an IPv6 address as a URL writes it
        elif _NOT_IN_A_HOST_NAME.intersection(name) or any(c.isspace() for c in name):
            raise InvalidDomain(text, "not a host name (a URL needs its scheme: https://...)")
        try:
            host = host_of(f"http://{name}/")
        except InvalidUrl:
            raise InvalidDomain(text, "not a host name") from None
    if is_ip_literal(host):
        return host
    host = host.removesuffix(".")
    if len(host) > 253:
        raise InvalidDomain(text, "longer than 253 characters")
    bad = next((label for label in host.split(".") if not _LABEL.fullmatch(label)), None)
    if bad is not None:
        if "*" in bad:
            raise InvalidDomain(text, "a wildcard: name the domain itself (its subdomains share its queue)")
        what = f"bad label {bad!r}" if bad else "an empty label"
        raise InvalidDomain(text, f"{what}; a label is 1 to 63 letters, digits or inner hyphens")
    if is_public_suffix(host) or host in _top_level_labels():
        raise InvalidDomain(text, f"{host} is a public suffix; name a domain under it, "
                                  f"such as example.{host}")
    domain = registrable_domain(host)
    if "_" in domain:
        raise InvalidDomain(text, f"bad label in {domain} (no underscore in a registrable domain)")
    return domain


def is_loopback_host(host: str) -> bool:
    """Whether a host name or IP reaches only this machine: `localhost` or a loopback address
    (127.0.0.0/8, ::1). Any other name, "", 0.0.0.0 or [::] may be reached from elsewhere."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def forgettable_domain(text: str) -> str:
    """The registrable domain `text` names itself (punycode), else InvalidDomain saying why: not a
    URL, an IP address, a public suffix or a host under the domain (what a Forget may name)."""
    if not text.strip():
        return ""
    if "://" in text or "/" in text:
        raise InvalidDomain(text, "a URL in place of a domain: name the domain (example.com), "
                                  "or forget the URL as a URL")
    domain = domain_named(text)
    if is_ip_literal(domain):
        raise InvalidDomain(text, "an IP address is not a registrable domain: forget its URLs")
    host = host_of(f"http://{text.strip()}/").removesuffix(".")
    if host != domain:
        raise InvalidDomain(text, f"{host} is a host under the registrable domain {domain}: "
                                  "name the domain itself, or forget the URLs")
    return domain
