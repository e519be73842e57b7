"""Walks of an ElementTree (the html5lib adapter's, parsers.py), as lexbor's calls give the same in a
lexbor tree: texts, ancestors, what follows the headline. Iterative, as hostile pages nest deeper
than Python's recursion limit; a <template>'s content is no part of the page (lexbor keeps it
out of the tree), nor is a comment's text."""
from __future__ import annotations

from typing import Iterator

from spiderduck.extract.date_text import DATE_SEARCH_CHARS


def page_text(body) -> str:
    """The text of <body> as lexbor's `text(separator=" ")` gives it, read only as far as the date
    search reads it (date_text.DATE_SEARCH_CHARS); '' without a body (a frameset)."""
    if body is None:
        return ""
    parts, size = [], 0
    for part in etree_text(body):
        parts.append(part)
        size += len(part) + 1
        if size > DATE_SEARCH_CHARS:
            break
    return " ".join(parts)


def etree_levels_after(root, h1) -> Iterator[Iterator[str]]:
    """parsers._levels_after in an etree, which has no parents to walk up to (a map of them is made)
    and no text nodes: an element's tail is the text after it."""
    parents = {child: parent for parent in root.iter() for child in parent}
    node = h1
    for _ in range(3):
        parent = parents.get(node)
        if parent is None:
            return
        children = list(parent)
        yield etree_texts_after(node, children[children.index(node) + 1:])
        node = parent
        if node.tag in ("body", "html"):
            return


def etree_texts_after(node, after: list) -> Iterator[str]:
    yield node.tail or ""
    for el in after:
        yield " ".join(etree_text(el)) if isinstance(el.tag, str) else ""
        yield el.tail or ""


def walk_placed(root) -> Iterator[tuple[object, tuple]]:
    """Elements in document order, each with its ancestors as a chain ((tag, attributes), rest)
    (iterative, like `_walk`; a chain, not a list, so that deep nesting costs no more)."""
    stack = [(root, ())]
    while stack:
        el, ancestors = stack.pop()
        yield el, ancestors
        if isinstance(el.tag, str):
            inner = ((el.tag, el.attrib), ancestors)
            stack.extend((child, inner) for child in reversed(el) if child.tag != "template")


def chain(ancestors: tuple) -> Iterator[tuple[str, dict]]:
    while ancestors:
        (tag, attrib), ancestors = ancestors
        yield tag, {k: str(v) for k, v in attrib.items() if isinstance(k, str)}


def walk(root) -> Iterator[tuple[object, bool]]:
    """Elements in document order, each with whether an ancestor's class mentions "author"
    (iterative: hostile pages nest deeper than Python's recursion limit)."""
    stack = [(root, False)]
    while stack:
        el, in_byline = stack.pop()
        yield el, in_byline
        if not in_byline and isinstance(el.tag, str):
            in_byline = "author" in str(el.attrib.get("class", "")).lower()
        stack.extend((child, in_byline) for child in reversed(el) if child.tag != "template")


def etree_text(el) -> Iterator[str]:
    """The text of an element and its descendants, without comments (like DOM textContent), in
    document order (iterative: a whole page's text is read, and hostile pages nest deep)."""
    stack: list = [el]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
            continue
        if isinstance(item.tag, str) and item.text:
            yield item.text
        for child in reversed(item):
            if child.tail:
                stack.append(child.tail)
            if isinstance(child.tag, str) and child.tag != "template":
                stack.append(child)
