"""JSON-LD blocks: parsed as extruct's JSON-LD loader reads them, flattened, looked up by path.

Each block is read with json.loads(strict=False), and one that fails gets extruct's fallback:
jstyleson (extruct's own dependency), which also takes JavaScript comments and trailing commas,
after HTML comment and CDATA wrappers and a trailing `;` are taken off. extruct's loader itself
(JsonLdExtractor) is not called: it splits a top-level array into its items, and the record's
structured_data keeps each block as the page wrote it. A block that is still not JSON is
skipped; it never fails the page.
Flattening follows common practice: a top-level array is a list of nodes, and a
`@graph` yields its nodes, each also carrying the properties written beside
the graph (e.g. a shared `@context`). References (`{"@id": ...}`) are resolved
against the nodes of the page when a path walks through them.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable, Iterator

import jstyleson

_WRAPPER = re.compile(r"^\s*(?:<!--|//\s*<!\[CDATA\[|<!\[CDATA\[)|(?:-->|//\s*\]\]>|\]\]>)\s*$")
_decoder = json.JSONDecoder(strict=False)  # allow raw control characters inside strings


# A block nested deeper than this is dropped: real JSON-LD nests a few levels, and the rules and
# the record's structured data walk it (json itself raises RecursionError past ~1,000).
MAX_DEPTH = 32
# Blocks read per page; a page of 10,000 blocks is an attack, not metadata.
MAX_BLOCKS = 64
# The lenient reading walks a block in Python, about 0.26 s a megabyte: only blocks up to this
# size get it (hand-written JSON-LD with comments is small; a huge broken block is skipped).
LENIENT_MAX_CHARS = 64 * 1024


def load(texts: Iterable[str]) -> list[Any]:
    """The blocks that parse, in page order: at most MAX_BLOCKS, none deeper than MAX_DEPTH."""
    blocks = []
    for text in texts:
        if len(blocks) == MAX_BLOCKS:
            break
        text = text.strip()
        if not text:
            continue
        block = _parse(text, _decoder.decode)
        if block is None and len(text) <= LENIENT_MAX_CHARS:
            block = _parse(_WRAPPER.sub("", text).strip().rstrip(";"), _lenient)
        if block is not None and _shallow(block):
            blocks.append(block)
    return blocks


def _lenient(text: str) -> Any:
    return jstyleson.loads(text, strict=False)


def _parse(text: str, loads) -> Any:
    try:
        return loads(text)
    except (ValueError, RecursionError):
        return None


def _shallow(block: Any) -> bool:
    """Whether no value of `block` is nested deeper than MAX_DEPTH (walked without recursion)."""
    stack = [(block, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > MAX_DEPTH:
            return False
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return True


class Graph:
    """The JSON-LD nodes of one page, in page order."""

    __slots__ = ("nodes", "_ids")

    def __init__(self, blocks: list[Any]):
        nodes: list[dict[str, Any]] = []
        for block in blocks:
            _flatten(block, nodes)
        self.nodes = nodes
        self._ids = {n["@id"]: n for n in nodes if isinstance(n.get("@id"), str) and len(n) > 1}

    def __bool__(self) -> bool:
        return bool(self.nodes)

    def get(self, path: str, types: frozenset[str] | None = None) -> Any:
        """The first non-empty value at a dotted path (`author.name`), over nodes of `types` if given.

        A list met on the way stands for its first element that yields a value.
        """
        keys = path.split(".")
        for node in self.nodes:
            if types is not None and not (node_types(node) & types):
                continue
            value = self._walk(node, keys)
            if value not in (None, "", [], {}):
                return value
        return None

    def _walk(self, value: Any, keys: list[str]) -> Any:
        for i, key in enumerate(keys):
            if isinstance(value, list):
                for item in value:
                    found = self._walk(item, keys[i:])
                    if found not in (None, "", [], {}):
                        return found
                return None
            if not isinstance(value, dict):
                return None
            value = self.resolve(value).get(key)
        if isinstance(value, dict):
            value = self.resolve(value)
        return value

    def descendants(self) -> Iterator[dict[str, Any]]:
        """Every object of the page's JSON-LD, depth first in page order: each node, then the
        objects nested in it (references are not followed: what they name is a node too)."""
        stack: list[Any] = list(reversed(self.nodes))
        while stack:
            value = stack.pop()
            if isinstance(value, dict):
                yield value
                children = value.values()
            elif isinstance(value, list):
                children = value
            else:
                continue
            stack.extend(reversed([c for c in children if isinstance(c, (dict, list))]))

    def resolve(self, value: dict[str, Any]) -> dict[str, Any]:
        """The node a bare reference `{"@id": ...}` points to (else the value itself)."""
        ref = value.get("@id")
        if isinstance(ref, str) and len(value) == 1:
            return self._ids.get(ref, value)
        return value


def node_types(node: dict[str, Any]) -> frozenset[str]:
    t = node.get("@type")
    if isinstance(t, str):
        return frozenset((t,))
    if isinstance(t, list):
        return frozenset(x for x in t if isinstance(x, str))
    return frozenset()


def _flatten(block: Any, out: list[dict[str, Any]]) -> None:
    if isinstance(block, list):
        for item in block:
            _flatten(item, out)
    elif isinstance(block, dict):
        graph = block.get("@graph")
        if isinstance(graph, (list, dict)):
            outer = {k: v for k, v in block.items() if k != "@graph"}
            for item in graph if isinstance(graph, list) else [graph]:
                if isinstance(item, dict):
                    out.append({**outer, **item} if outer else item)
            if outer.keys() - {"@context", "@id"}:
                out.append(outer)
        else:
            out.append(block)
