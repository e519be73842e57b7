"""oEmbed without a discovery link: the endpoint a registry of providers names for a page's URL.

A page that links no oEmbed document (`<link type="application/json+oembed">`, extract.oembed)
may still be on a provider's host: the registry is oembed.com's providers list (MIT), as the
micawber package (MIT, a dependency kept for this data alone: its code is never imported) ships
it in micawber/providers.json, plus the operator's `process.oembed_providers`, a file in the same format whose
providers are added, or replace the shipped one with the same provider_name or provider_url.
Both are read by spiderduck.core.oembed_providers (bounded, checked).

`endpoint_for(url)`: the document's URL when a provider's scheme matches the page's URL, else
None. Only hosts a scheme names are looked up: the schemes are indexed by their host (exact, or
under `*.` labels for subdomains), so a URL costs a dict lookup per label of its host and the
matching of the few schemes of that host. A scheme's `*` stands for any run of characters;
matching is a left-to-right search of the literal pieces between the `*`s (linear, no
backtracking). Schemes are matched whether the URL is http or https (many providers list only
one of them for pages served on both), and whatever the URL's port.
"""
from __future__ import annotations

import functools
import logging
from importlib import metadata
from typing import Iterable, NamedTuple
from urllib.parse import quote, urlsplit

from spiderduck.core import oembed_providers
from spiderduck.core.oembed_providers import Provider

log = logging.getLogger("spiderduck.extract")

SHIPPED = ("micawber", "micawber/providers.json")   # (distribution, file): oembed.com's list


class _Rule(NamedTuple):
    wild_labels: int                  # labels the host must have above the scheme's host (for `*.`)
    pieces: tuple[str, ...]           # the path and query, split at its `*`s
    endpoint: str


def glob_match(pieces: tuple[str, ...], text: str) -> bool:
    """Whether `text` matches a pattern given as its pieces between `*`s (one piece: no `*`)."""
    if len(pieces) == 1:
        return text == pieces[0]
    first, last = pieces[0], pieces[-1]
    if len(text) < len(first) + len(last) or not text.startswith(first) or not text.endswith(last):
        return False
    at, end = len(first), len(text) - len(last)
    for piece in pieces[1:-1]:
        found = text.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def _pieces(rest: str) -> tuple[str, ...]:
    """The pattern's literal pieces; runs of `*` count as one."""
    pieces = rest.split("*")
    return (pieces[0], *(p for p in pieces[1:-1] if p), pieces[-1]) if len(pieces) > 2 else tuple(pieces)


class Registry:
    """The providers' schemes, indexed by host. Build once per process (`load`)."""

    def __init__(self, providers: Iterable[Provider]):
        self._exact: dict[str, list[_Rule]] = {}
        self._under: dict[str, list[_Rule]] = {}      # `*.example.com`: subdomains of example.com
        self.providers = 0
        for provider in providers:
            self.providers += 1
            for endpoint in provider.endpoints:
                for scheme in endpoint.schemes:
                    parts = oembed_providers.split_scheme(scheme)
                    if parts is None:
                        continue
                    index = self._under if parts.wild_labels else self._exact
                    index.setdefault(parts.host, []).append(
                        _Rule(parts.wild_labels, _pieces(parts.rest or "/"), endpoint.url))

    def endpoint_for(self, url: str) -> str | None:
        """The JSON oEmbed document's URL for the page at `url`, when a provider names its host
        and a scheme of that host matches it; else None."""
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").rstrip(".")
        except ValueError:
            return None
        if parts.scheme not in ("http", "https") or not host:
            return None
        rest = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        for rule in self._rules_of(host):
            if glob_match(rule.pieces, rest):
                return document_url(rule.endpoint, parts._replace(fragment="").geturl())
        return None

    def _rules_of(self, host: str) -> Iterable[_Rule]:
        yield from self._exact.get(host, ())
        labels = host.split(".")
        for above in range(1, len(labels)):
            for rule in self._under.get(".".join(labels[above:]), ()):
                if above >= rule.wild_labels:
                    yield rule


def document_url(endpoint: str, page: str) -> str:
    """The endpoint asked for the page's JSON document (the oEmbed spec's `url` and `format`)."""
    endpoint = endpoint.replace("{format}", "json")
    return f"{endpoint}{'&' if '?' in endpoint else '?'}url={quote(page, safe='')}&format=json"


def merged(shipped: Iterable[Provider], extra: Iterable[Provider]) -> list[Provider]:
    """The operator's providers first, then the shipped ones no operator's provider replaces
    (the same provider_name, or provider_url, case and a final / aside)."""
    extra = list(extra)
    names = {p.name.strip().casefold() for p in extra}
    urls = {_site(p.url) for p in extra} - {""}
    return extra + [p for p in shipped if p.name.strip().casefold() not in names and _site(p.url) not in urls]


def _site(url: str) -> str:
    return url.strip().rstrip("/").casefold()


def shipped() -> tuple[Provider, ...]:
    """The providers shipped with SpiderDuck (oembed.com's list, from the micawber distribution's
    data, read without importing it); none when it is missing or unreadable (logged)."""
    name, path = SHIPPED
    try:
        with open(metadata.distribution(name).locate_file(path), "rb") as file:
            data = file.read(oembed_providers.MAX_FILE_BYTES + 1)
        return oembed_providers.parse(data, lenient=True)
    except (metadata.PackageNotFoundError, OSError, oembed_providers.ProvidersError) as exc:
        log.warning("oEmbed: the providers list of %s cannot be read (%s); only process.oembed_providers "
                    "is used", name, exc)
        return ()


@functools.lru_cache(maxsize=4)
def load(extra: str = "") -> Registry:
    """The registry of the shipped providers and those of the file `extra` (process.oembed_providers;
    '' for none), built once per process and file."""
    operators = oembed_providers.read_file(extra) if extra else ()
    return Registry(merged(shipped(), operators))
