"""Erasing a forgotten URL's events from the SPIDERDUCK_EVENTS stream (MetadataService.Forget).

INTERFACE ONLY (issue 39): the body is being written."""
from __future__ import annotations

from typing import Collection


async def erase_events(js, urls: Collection[str], domain: str = "", *,
                       stream: str = "SPIDERDUCK_EVENTS") -> int:
    """Erase (overwrite on disk, not only mark deleted) every message of `stream` whose
    UrlProcessed names one of `urls` (its url, canonical_url, or its record's url, final_url,
    canonical_url or a redirect's url; compared as lookup_key forms) or, with `domain`, a URL of
    that registrable domain. Returns how many were erased; idempotent. Raises BusError when the
    stream cannot be read or a message cannot be erased (the forget can be repeated)."""
    raise NotImplementedError
