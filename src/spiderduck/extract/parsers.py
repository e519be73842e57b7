"""HTML5 parsers, each adapted to feed a `Builder` (see document.py). One parse per page:

    selectolax (lexbor)   the default, fast
    html5lib              the reference parser, slow
"""
from __future__ import annotations

from html import escape
from typing import Callable, Iterator

from selectolax.lexbor import LexborDocumentOptions, LexborHTMLParser

from spiderduck.core.config import HTML_PARSERS as PARSERS
from spiderduck.extract.microdata import MAX_VALUE_CHARS
from spiderduck.extract.date_text import dated_text, near_dates, placed_texts, scan, shows_date
from spiderduck.extract.etree_walks import (chain, etree_levels_after, etree_text, page_text, walk,
                                             walk_placed)
from spiderduck.extract.document import (BYLINE_TEXT_MAX, HINT_RELS, Builder, Document, place, placed,
                                           shows_byline, texts, wanted)
from spiderduck.extract.headline import after_headline
from spiderduck.extract.main_text import etree_words, lexbor_words

# Bytes of a page that are decoded, sniffed and parsed (page.py), or scanned for a shell
# (shell.py); the rest is ignored, so a huge page costs no more than this. A hard limit, not a
# setting: 2 MiB, the default of fetcher.max_body_bytes (tests/extract holds them equal), so a
# page fetched under the default cap is read whole. What a page says about itself is at its
# top, and no real page needs more.
MAX_HTML_BYTES = 2_097_152

# A superset of what `wanted` accepts; `wanted` decides, for both parsers alike. The narrower it
# is, the fewer nodes cross into Python: a typical page has ~20 scripts and ~20 hint links.
_SELECTOR = ("html, title, base, meta, "
             + "link[href]" + "".join(f":not([rel=\"{r}\" i])" for r in sorted(HINT_RELS)) + ", "
             "script[type*=\"ld+json\" i], h1, time[datetime], img[src], video[poster], audio, "
             "[itemprop]:is([itemprop*=author i], [itemprop*=date i]), "
             "a[rel~=author i], a[class*=author i], [itemscope]")
# (`[itemprop]:is(...)`, not the two attribute selectors alone: every element of the page is
# tried against the group, and this looks its itemprop up once, not twice: a tenth of the walk.)
# Byline blocks (`<div class="author-info"><a>Name</a>`): the links inside one (`[class*=author i]
# a`) are only needed when nothing better names the author, and are found on demand (_byline_links),
# among the bylines (_BYLINE_SELECTOR).
# Elements showing a date as text (see `date_text.shows_date`); the last resort for a date, found on
# demand.
_DATED_SELECTOR = ("time:not([datetime]), [class*=date i], [class*=time i], [class*=publish i], "
                   "[title^=\"19\"], [title^=\"20\"]")
# Bylines as text (see `shows_byline`), and <time>s to place (`document.place`): found on demand.
_BYLINE_SELECTOR = "[class*=byline i], [class*=author i]"
_TIMES_SELECTOR = "time[datetime]"


# The tree as the markup builds it, without lexbor's DOM mutation events (a <selectedcontent>
# mirroring its <select>'s chosen <option>: nothing read here): 3% of the parse.
_NO_EVENTS = LexborDocumentOptions.WO_EVENTS.value


def _from_selectolax(markup: str | bytes) -> Document:
    builder = Builder()
    tree = LexborHTMLParser(markup, options=_NO_EVENTS)
    satisfied = builder.satisfied

    seen: set[int] = set()   # a node matching two selectors of the group is returned twice
    headline: list = []

    def feed(nodes) -> None:
        add, builder_feed = seen.add, builder.feed
        for node in nodes:
            node_id = node.mem_id
            if node_id in seen:
                continue
            add(node_id)
            tag = node.tag
            attrs = node.attributes        # (one dict: cheaper than two lookups in node.attrs)
            if tag in satisfied and "itemprop" not in attrs and "itemscope" not in attrs:
                continue   # a tag already done with, unless it carries microdata
            if None in attrs.values():     # a bare attribute (`<script async>`)
                attrs = {k: v or "" for k, v in attrs.items()}
            if tag == "audio" and not attrs.get("src") and not builder.audio[0]:
                source = node.css_first("source[src]")
                attrs = {"src": source.attributes.get("src") or "", "type": source.attributes.get("type") or ""} \
                    if source is not None else attrs
            if wanted(tag, attrs) and not (tag == "title" and _in_svg(node)):
                builder_feed(tag, attrs, node.text)
                if tag == "h1" and not headline and builder.h1:
                    headline.append(node)      # the <h1> the headline is read from

    # The builder keeps state per tag, so each tag's elements must come in document order,
    # but different tags need not be interleaved: paragraphs are asked for separately, as
    # usually the first one is all that is needed.
    feed(tree.css(_SELECTOR))
    first = tree.css_first("p")
    if first is not None:
        feed((first,))
        if "p" not in satisfied:
            feed(tree.css("p")[1:])
    bylines: list = []

    def byline_nodes() -> list:
        if not bylines:
            bylines.append(tree.css(_BYLINE_SELECTOR))
        return bylines[0]

    return builder.build(lambda: texts(node.text() for node in _byline_links(byline_nodes())),
                         lambda: placed_texts((lambda n=node: place(_ancestors(n)),
                                               dated_text(node.attributes, lambda n=node: n.text(separator=" ")))
                                              for node in _once(tree.css(_DATED_SELECTOR))),
                         lambda: _item_html(tree),
                         # (no walk for a page whose own walk met no <time datetime>: most pages)
                         lambda: placed((place(_ancestors(node)), node.attributes.get("datetime") or "")
                                        for node in tree.css(_TIMES_SELECTOR)) if builder.times else (),
                         lambda: texts((node.text(separator=" ") for node in byline_nodes()),
                                       BYLINE_TEXT_MAX),
                         lambda: lexbor_words(tree, builder.has_items),
                         lambda: after_headline(_levels_after(headline[0]) if headline else ()),
                         lambda: scan(tree.body.text(separator=" ") if tree.body is not None else "",
                                      headline[0].text(separator=" ") if headline else ""),
                         lambda: near_dates(_levels_after(headline[0]) if headline else ()))


def _once(nodes) -> Iterator:
    """Nodes in document order, each once: lexbor returns a node once for each selector of a group
    it matches (`class="publish-date"` twice)."""
    seen: set[int] = set()
    for node in nodes:
        if node.mem_id not in seen:
            seen.add(node.mem_id)
            yield node


def _levels_after(h1) -> Iterator[Iterator[str]]:
    """The texts after the headline's <h1> in a lexbor tree, level by level (headline.after_headline):
    its next siblings', then its parent's and its grandparent's, not past <body>."""
    node = h1
    for _ in range(3):
        yield _texts_after(node)
        node = node.parent
        if node is None or node.tag in ("body", "html"):
            return


def _texts_after(node) -> Iterator[str]:
    after = node.next
    while after is not None:
        yield after.text(separator=" ")
        after = after.next


def _ancestors(node) -> Iterator[tuple[str, dict]]:
    parent = node.parent
    while parent is not None:
        yield parent.tag, parent.attributes
        parent = parent.parent


def _byline_links(bylines) -> Iterator:
    """The links inside a byline block, as `[class*=author i] a` finds them, in document order:
    each block's links in turn (a block's own links come before any later block's, and a block
    inside another adds none). `bylines` are the page's bylines (_BYLINE_SELECTOR, in document
    order, as `Document.byline_texts` reads them: one walk for both), the blocks those whose class
    mentions "author". The descendant selector costs twice as much: it walks up from every link
    of the page, where this walks down from the few blocks."""
    seen: set[int] = set()
    blocks: set[int] = set()
    for block in bylines:
        itself = block.mem_id
        if itself in blocks or "author" not in (block.attributes.get("class") or "").lower():
            continue
        blocks.add(itself)
        for link in block.css("a"):        # the block too, when it is a link: not inside itself
            if link.mem_id != itself and link.mem_id not in seen:
                seen.add(link.mem_id)
                yield link


def _item_html(tree) -> str | None:
    """The outer HTML of the top-level itemscope elements (see Document.item_html); an item on
    <html> or <body> as its properties alone (`_spine`)."""
    nodes = tree.css("[itemref], [itemscope]")     # one walk, in document order
    if any("itemref" in node.attrs for node in nodes):
        return None                        # an item takes properties from elsewhere by id
    tops = []
    for node in nodes:
        parent = node.parent
        while parent is not None and "itemscope" not in (parent.attributes or {}):
            parent = parent.parent
        if parent is None:
            html = _spine(node) if node.tag in _SPINE_TAGS else (node.html or "")
            if html is None:
                return None
            tops.append(html)
    return "".join(tops)


_SPINE_TAGS = frozenset({"html", "body"})
_ITEM_PARTS = "[itemprop], [itemscope]"
MAX_SPINE_PARTS = 512     # an item on <html> or <body> with more parts is read from the whole page


def _spine(node) -> str | None:
    """An item on <html> or <body> as a <div> with its attributes around the outermost elements
    inside it that are properties or items, in document order; None when only the whole page will
    do (no property and little text, more than MAX_SPINE_PARTS parts, or a <body> among them).

    extruct reads an item's properties from its elements with itemprop that no inner item holds,
    and each property's value from that element alone (its attributes, or its text), so the
    elements between the item and its outermost parts change nothing it reads; the page's text
    around them is most of the page. An item with no property is its text (the whole page's)."""
    parts = node.css(_ITEM_PARTS)
    if len(parts) > MAX_SPINE_PARTS:
        return None
    covered = {node.mem_id}
    kept = []
    for part in parts:
        if part.mem_id in covered:
            continue
        if part.tag in _SPINE_TAGS:
            return None                    # an item on <body> inside one on <html>
        kept.append(part)
        covered.update(inner.mem_id for inner in part.css(_ITEM_PARTS))
    filler = ""
    if not any("itemprop" in part.attributes for part in kept):
        # No property: the item's value is its text, dropped when over MAX_VALUE_CHARS. A page's
        # text surely is (twice over, a margin for where two parsers put a misplaced text): then
        # a filler as long stands for it; else only the whole page will do.
        if not _text_over(node, 2 * MAX_VALUE_CHARS):
            return None
        filler = f"<p>{'x' * (MAX_VALUE_CHARS + 1)}</p>"
    attrs = "".join(f' {name}="{escape(value or "")}"' for name, value in node.attributes.items())
    return f"<div{attrs}>{''.join(part.html or '' for part in kept)}{filler}</div>"


_TEXT_HOLDERS = "p, li, h1, h2, h3, h4, td, a, span"


def _text_over(node, limit: int) -> bool:
    """Whether `node` holds more than `limit` characters of text (white space aside) outside
    scripts and styles, known from a lower bound: the texts directly inside its paragraphs, list
    items, headings, cells, links and spans (each text in one element only), until past `limit`."""
    count = 0
    for holder in node.css(_TEXT_HOLDERS):
        count += len("".join((holder.text(deep=False) or "").split()))
        if count > limit:
            return True
    return False


def _in_svg(node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag in ("svg", "math"):
            return True
        parent = parent.parent
    return False


def _from_html5lib(markup: str | bytes) -> Document:
    import html5lib  # slow to import; only the reference parser needs it

    if isinstance(markup, bytes):
        markup = markup.decode("utf-8", "replace")
    builder = Builder()
    root = html5lib.parse(markup, treebuilder="etree", namespaceHTMLElements=False)
    satisfied = builder.satisfied
    headline: list = []
    for el in root.iter():
        tag = el.tag
        if not isinstance(tag, str) or tag.startswith("{"):
            continue  # comments, SVG / MathML elements
        if tag in satisfied and "itemprop" not in el.attrib and "itemscope" not in el.attrib:
            continue  # a tag already done with, unless it carries microdata
        attrs = {k: v for k, v in el.attrib.items() if isinstance(k, str)}
        if tag == "audio" and not attrs.get("src") and not builder.audio[0]:
            source = next((s for s in el.iter("source") if s.get("src")), None)
            attrs = {"src": source.get("src"), "type": source.get("type", "")} if source is not None else attrs
        if wanted(tag, attrs):
            builder.feed(tag, attrs, lambda e=el: "".join(etree_text(e)))
            if tag == "h1" and not headline and builder.h1:
                headline.append(el)
    return builder.build(
        lambda: texts("".join(etree_text(el)) for el, in_byline in walk(root)
                      if in_byline and el.tag == "a"),
        lambda: placed_texts((lambda a=ancestors: place(chain(a)),
                              dated_text(attrs, lambda e=el: " ".join(etree_text(e))))
                             for el, ancestors in walk_placed(root)
                             if isinstance(el.tag, str) and not el.tag.startswith("{")
                             and shows_date(el.tag, attrs := {k: str(v) for k, v in el.attrib.items()
                                                              if isinstance(k, str)})),
        placed_times=lambda: placed((place(chain(ancestors)), str(el.attrib.get("datetime", "")))
                                    for el, ancestors in walk_placed(root)
                                    if el.tag == "time" and "datetime" in el.attrib),
        byline_texts=lambda: texts((" ".join(etree_text(el)) for el, _ in walk(root)
                                    if isinstance(el.tag, str) and not el.tag.startswith("{")
                                    and shows_byline({k: str(v) for k, v in el.attrib.items()})),
                                   BYLINE_TEXT_MAX),
        main_words=lambda: etree_words(root, builder.has_items),
        headline_texts=lambda: after_headline(etree_levels_after(root, headline[0]) if headline else ()),
        page_dates=lambda: scan(page_text(next((el for el in root if el.tag == "body"), None)),
                                " ".join(etree_text(headline[0])) if headline else ""),
        headline_dates=lambda: near_dates(etree_levels_after(root, headline[0]) if headline else ()))


_ADAPTERS: dict[str, Callable[[str | bytes], Document]] = {
    "selectolax": _from_selectolax,
    "html5lib": _from_html5lib,
}


def parse(markup: str | bytes, parser: str) -> Document:
    """Parse HTML into a Document. `markup` is text, or bytes already known to be UTF-8.

    `parser` is one of PARSERS: the setting process.parser, from the caller.
    """
    try:
        adapter = _ADAPTERS[parser]
    except KeyError:
        raise ValueError(f"unknown HTML parser {parser!r}; expected one of {', '.join(PARSERS)}") from None
    return adapter(markup)
