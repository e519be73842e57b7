"""oEmbed provider lists in oembed.com's providers.json format, read and checked, with bounds.

The format (https://oembed.com/providers.json): a list of providers, each
`{"provider_name", "provider_url", "endpoints": [{"schemes": [...], "url", "discovery"?,
"formats"?}]}`. A scheme is a URL with `*` wildcards (`*` stands for any run of characters);
an endpoint's `url` may hold `{format}`. Both the list shipped with SpiderDuck (oembed.com's,
as the micawber package carries it) and the operator's `process.oembed_providers` are read here; the lookup built from them is src/spiderduck/extract/oembed_registry.py's.

What is refused (ProvidersError, a ValueError; the settings make it a ConfigError naming the
key): a file that cannot be read, is over MAX_FILE_BYTES, is not JSON (too deep included) or not
this shape; a scheme that is not an http(s) URL with a host (the host may begin with `*.`
labels, and holds nothing else but letters, digits, `-`, `_` and dots); an endpoint that is not
an http(s) URL; more than MAX_SCHEMES schemes, or a scheme or URL longer than MAX_URL_CHARS.
Unknown keys are ignored, as oembed.com may add some. An endpoint without schemes is kept (it
names no host, so it is never used).
"""
from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from spiderduck.core.errors import SpiderDuckError

MAX_FILE_BYTES = 4 * 1024 * 1024     # a providers file larger than this is refused
MAX_SCHEMES = 50_000                  # schemes in one file (oembed.com's list has under 1,000)
MAX_URL_CHARS = 2_048                 # one scheme's or endpoint's length
MAX_NAME_CHARS = 256                  # provider_name and provider_url

# A scheme: http(s)://, an authority of `*.` labels then a literal host (and a port), the rest.
_URL_PARTS = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#\s]*)(\S*)")
_AUTHORITY = re.compile(r"((?:\*\.)*)([a-z0-9_-]+(?:\.[a-z0-9_-]+)*)(?::[0-9]{1,5})?")
_ENDPOINT = re.compile(r"https?://[a-z0-9_-]+(?:\.[a-z0-9_-]+)*(?::[0-9]{1,5})?(?:[/?][^\s]*)?", re.IGNORECASE)


class ProvidersError(SpiderDuckError, ValueError):
    """A providers file that cannot be used; the words say why."""


class Endpoint(NamedTuple):
    schemes: tuple[str, ...]
    url: str                          # may hold {format}


class Provider(NamedTuple):
    name: str
    url: str
    endpoints: tuple[Endpoint, ...]


class Scheme(NamedTuple):
    """A scheme taken apart: `*.` labels before the host (each at least one more label), the
    literal host (lower case), and the path and query with their `*`s."""
    wild_labels: int
    host: str
    rest: str


def split_scheme(scheme: str) -> Scheme | None:
    """A scheme's parts, or None when it is no http(s) URL with a host (as `spotify:*`)."""
    if len(scheme) > MAX_URL_CHARS:
        return None
    parts = _URL_PARTS.fullmatch(scheme)
    if parts is None or parts[1].lower() not in ("http", "https"):
        return None
    authority = _AUTHORITY.fullmatch(parts[2].lower())
    if authority is None:
        return None
    return Scheme(authority[1].count("*"), authority[2], parts[3])


def read_file(path: str) -> tuple[Provider, ...]:
    """The providers of the file at `path` (see the module's doc for what is refused)."""
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ProvidersError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ProvidersError(f"{path} is over {MAX_FILE_BYTES:,} bytes")
    try:
        return parse(data)
    except ProvidersError as exc:
        raise ProvidersError(f"{path}: {exc}") from None


def parse(data: bytes | str, *, lenient: bool = False) -> tuple[Provider, ...]:
    """The providers of a providers.json document. `lenient` (the shipped list, which we do not
    write): a scheme or endpoint that would be refused is left out instead (oembed.com's list
    holds `spotify:*` and a scheme of two URLs joined by " - ")."""
    if len(data) > MAX_FILE_BYTES:
        raise ProvidersError(f"over {MAX_FILE_BYTES:,} bytes")
    try:
        tree = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ProvidersError(f"not JSON ({str(exc)[:80]})") from None
    if not isinstance(tree, list):
        raise ProvidersError("not a list of providers")
    providers, schemes = [], 0
    for index, entry in enumerate(tree):
        provider = _provider(entry, index, lenient)
        schemes += sum(len(e.schemes) for e in provider.endpoints)
        if schemes > MAX_SCHEMES:
            raise ProvidersError(f"more than {MAX_SCHEMES:,} schemes")
        providers.append(provider)
    return tuple(providers)


def _provider(entry: Any, index: int, lenient: bool = False) -> Provider:
    if not isinstance(entry, dict):
        raise ProvidersError(f"provider {index} is not an object")
    name, url = entry.get("provider_name"), entry.get("provider_url", "")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_CHARS:
        raise ProvidersError(f"provider {index}: provider_name is not a name of 1 to {MAX_NAME_CHARS} characters")
    if not isinstance(url, str) or len(url) > MAX_NAME_CHARS:
        raise ProvidersError(f"provider {name[:80]!r}: provider_url is not a URL of at most {MAX_NAME_CHARS} "
                             f"characters")
    endpoints = entry.get("endpoints")
    if not isinstance(endpoints, list):
        raise ProvidersError(f"provider {name[:80]!r}: endpoints is not a list")
    if lenient:
        kept = []
        for e in endpoints:
            try:
                kept.append(_endpoint(e, name, lenient))
            except ProvidersError:
                continue
        return Provider(name, url, tuple(kept))
    return Provider(name, url, tuple(_endpoint(e, name) for e in endpoints))


def _endpoint(entry: Any, provider: str, lenient: bool = False) -> Endpoint:
    where = f"provider {provider[:80]!r}"
    if not isinstance(entry, dict):
        raise ProvidersError(f"{where}: an endpoint is not an object")
    url, schemes = entry.get("url"), entry.get("schemes", [])
    if not isinstance(url, str) or len(url) > MAX_URL_CHARS or not _ENDPOINT.fullmatch(url):
        raise ProvidersError(f"{where}: endpoint {str(url)[:80]!r} is not an http(s) URL")
    if not isinstance(schemes, list) or len(schemes) > MAX_SCHEMES:
        raise ProvidersError(f"{where}: schemes is not a list")
    if lenient:
        schemes = [s for s in schemes if isinstance(s, str) and split_scheme(s) is not None]
    for scheme in schemes:
        if not isinstance(scheme, str) or split_scheme(scheme) is None:
            raise ProvidersError(f"{where}: scheme {str(scheme)[:80]!r} is not an http(s) URL with a host "
                                 f"(of at most {MAX_URL_CHARS} characters)")
    return Endpoint(tuple(schemes), url)
