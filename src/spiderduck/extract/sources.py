"""One parsed page as the extraction rules read it, and the two lookups every rule uses."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spiderduck.extract import values
from spiderduck.extract.document import Document
from spiderduck.extract.jsonld import Graph


@dataclass(frozen=True)
class Sources:
    """One page's parsed sources and the URL its relative links resolve against."""
    doc: Document
    graph: Graph
    url: str                   # the page's URL
    base: str                  # <base href> resolved against url, else url
    blocks: list[Any] = field(default_factory=list)   # JSON-LD blocks as parsed
    microdata: list[Any] = field(default_factory=list)  # microdata items (extruct)
    # what more than one rule reads, made once per page (media._og_media's structures)
    made: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)


def meta(s: Sources, *keys: str) -> str:
    for key in keys:
        value = values.fold(s.doc.meta(key))
        if value:
            return value
    return ""


def ld(s: Sources, path: str) -> str:
    return values.text(s.graph.get(path)) if s.graph else ""
