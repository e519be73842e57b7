"""Microdata items (`itemscope` / `itemprop`) for `structured_data`: extruct's W3C extractor.

extruct works on an lxml tree, a second parse; it is paid only by pages whose first parse found
an element with `itemscope` (about one in four), and at most MAX_ITEMS items are kept. Where the
first parse can hand over just the top-level items' HTML (Document.item_html), only that is
parsed again: on the corpus, 8 of the 14 pages with items, the same items from a tenth of the
page or less. Items on <html> or <body>, or any itemref, take the whole page.
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


def extract(markup: str | bytes, base_url: str, items_html: str | None = None) -> list[dict[str, Any]]:
    """The page's top-level microdata items; [] when they cannot be read. `items_html`, when
    given, holds just those items (Document.item_html) and is read instead of the page."""
    if items_html is not None:
        markup = f"<html><body>{items_html}</body></html>"
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
