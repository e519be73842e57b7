"""The key a URL is looked up under in the metadata store: what GetUrlMetadata
(metadata_api.server) and the web UI's lookup page (web.app) ask the store for."""
from __future__ import annotations

from spiderduck.core import urls

__all__ = ["lookup_key"]


def lookup_key(url: str) -> str:
    """The form a URL is stored under: canonical if it parses, else as given (trimmed)."""
    try:
        return urls.canonicalize(url)
    except urls.InvalidUrl:
        return url.strip()
