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

_PARSER = lxml.html.HTMLParser(encoding="utf-8")


class _Extractor(MicrodataExtractor):
    """extruct's extractor, except that a top-level item with no properties, whose value is its
    text, is not read when that text is sure to be longer than MAX_VALUE_CHARS: `extract` drops
    such a value. That text is the item's whole element (often <body> or <html>), cleaned of
    scripts, styles and comments and laid out (html_text): on the corpus, a quarter of the
    microdata's time (two pages: a WebPage on <body>, a Blog on <html>). Every other value is
    extruct's own (tests/extract/test_extraction.py compares). One per call: it keeps the depth
    of the item read."""

    def __init__(self) -> None:
        super().__init__()
        self._depth = 0                 # 1 while a top-level item is read
        self._top_value = False         # reading the value of a top-level item without properties

    def _extract_item(self, node, **kwargs):
        self._depth += 1
        try:
            return super()._extract_item(node, **kwargs)
        finally:
            self._depth -= 1

    def _extract_property_value(self, node, force=False, **kwargs):
        # force: the item's own value, as it has no properties (extruct's only call with force)
        self._top_value = force and self._depth == 1
        return super()._extract_property_value(node, force=force, **kwargs)

    def _extract_textContent(self, node):
        if self._top_value and _more_text_than(node, MAX_VALUE_CHARS):
            return _TOO_LONG
        return super()._extract_textContent(node)


_TOO_LONG = object()      # a top-level item's value, not read: longer than MAX_VALUE_CHARS


def _more_text_than(node, limit: int) -> bool:
    """Whether extruct's text of `node` is longer than `limit` characters, known from a lower
    bound: that text keeps every character but white space of the text outside scripts and
    styles (its cleaner drops scripts, styles, comments, <link> and <meta>, keeping what follows
    them; html_text folds white space and adds some). Stops as soon as the bound passes `limit`."""
    count = 0
    for el in node.iter():
        tag = el.tag
        if el.text and isinstance(tag, str) and tag.rpartition("}")[2].lower() not in ("script", "style"):
            count += len("".join(el.text.split()))     # (a comment's or instruction's text is none)
        if el.tail and el is not node:
            count += len("".join(el.tail.split()))
        if count > limit:
            return True
    return False


def extract(markup: str | bytes, base_url: str, items_html: str | None = None) -> list[dict[str, Any]]:
    """The page's top-level microdata items; [] when they cannot be read. `items_html`, when
    given, holds just those items (Document.item_html) and is read instead of the page."""
    if items_html is not None:
        markup = f"<html><body>{items_html}</body></html>"
    data = markup.encode("utf-8", "replace") if isinstance(markup, str) else markup
    try:
        tree = lxml.html.document_fromstring(data, parser=_PARSER)
        items = _Extractor().extract_items(tree, base_url)
        kept = []
        for item in items:
            value = item.get("value")
            if value is _TOO_LONG or (isinstance(value, str) and len(value) > MAX_VALUE_CHARS):
                del item["value"]
            kept.append(item)
            if len(kept) == MAX_ITEMS:
                break
        return kept
    except Exception:   # noqa: BLE001 -- broken markup must not fail the page
        log.debug("microdata of %s unreadable", base_url, exc_info=True)
        return []
