"""Microdata items (`itemscope` / `itemprop`) for `structured_data`: extruct's W3C extractor.

extruct works on an lxml tree, a second parse of the page; it is paid only by pages whose
first parse found an element with `itemscope` (about one in four), and at most MAX_ITEMS
items are kept.
"""
from __future__ import annotations

import logging
from typing import Any

import lxml.html
from extruct.w3cmicrodata import MicrodataExtractor

log = logging.getLogger("spiderduck.scheduler")

MAX_ITEMS = 32            # top-level items kept per page
MAX_VALUE_CHARS = 256     # an item's text value longer than this is dropped (it is the page's text)

_EXTRACTOR = MicrodataExtractor()
_PARSER = lxml.html.HTMLParser(encoding="utf-8")


def extract(markup: str | bytes, base_url: str) -> list[dict[str, Any]]:
    """The page's top-level microdata items; [] when they cannot be read."""
    data = markup.encode("utf-8", "replace") if isinstance(markup, str) else markup
    try:
        tree = lxml.html.document_fromstring(data, parser=_PARSER)
        items = _EXTRACTOR.extract_items(tree, base_url)
        kept = []
        for item in items:
            if isinstance(item.get("value"), str) and len(item["value"]) > MAX_VALUE_CHARS:
                del item["value"]
            kept.append(item)
            if len(kept) == MAX_ITEMS:
                break
        return kept
    except Exception:   # noqa: BLE001 -- broken markup must not fail the page
        log.debug("microdata of %s unreadable", base_url, exc_info=True)
        return []
