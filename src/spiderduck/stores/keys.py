"""The key a URL is looked up under in the metadata store: what GetUrlMetadata
(metadata_api.server) and the web UI's lookup page (web.app) ask the store for. Defined in the
vocabulary (spiderduck.core.urls.lookup_key), which the denylist shares."""
from __future__ import annotations

from spiderduck.core.urls import lookup_key

__all__ = ["lookup_key"]
