"""What a forget reaches, as pure functions both metadata stores use (MetadataStore.forget):
the URLs asked for in their stored form, the URLs a record's chain names, and whether a URL is of
the registrable domain being forgotten."""
from __future__ import annotations

from typing import Iterable

from spiderduck.core import urls
from spiderduck.core.record import UrlRecord
from spiderduck.stores.keys import lookup_key


def asked(given: Iterable[str]) -> list[str]:
    """The URLs asked for, as they are stored (lookup_key), each once, blanks left out."""
    return [url for url in dict.fromkeys(lookup_key(u) for u in given) if url]


def chain_urls(record: UrlRecord) -> set[str]:
    """The URLs a record names as its own: the URL submitted, each redirect hop, the final URL."""
    return {lookup_key(url) for url in (record.url, *record.chain)} - {""}


def domain_form(domain: str) -> str:
    """The registrable domain as hosts are compared with it (`Bücher.DE` -> `xn--bcher-kva.de`);
    '' for none. A name that is not a domain is kept as given, lower-cased (it matches nothing
    that canonicalize wrote, which is what it names)."""
    domain = domain.strip()
    if not domain:
        return ""
    try:
        return urls.domain_named(domain)
    except urls.InvalidDomain:
        return domain.lower().rstrip(".")


def in_domain(url: str, domain: str) -> bool:
    """Whether `url`'s host is of the registrable domain `domain` (as domain_form gives it):
    `a.example.com` is of `example.com`, `notexample.com` is not."""
    try:
        return urls.registrable_domain(urls.host_of(url)) == domain
    except (urls.InvalidUrl, ValueError):
        return False
