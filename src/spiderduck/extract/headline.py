"""The texts right after a page's headline, where a byline written as plain text stands
(`<h1>…</h1><p>By Jane Doe</p>`): `Document.headline_texts`, made by each parser from the
texts it reads after the headline's <h1>, level by level (parsers.py)."""
from __future__ import annotations

from typing import Iterable, Iterator

from spiderduck.extract.document import BYLINE_TEXT_MAX, texts

HEADLINE_NEXT = 4             # texts after the headline read for a plain-text byline
HEADLINE_TEXT_CHARS = 4_096   # a longer text there is the article's, no byline: never folded


def after_headline(levels: Iterable[Iterable[str]]) -> tuple[str, ...]:
    """`Document.headline_texts` from the texts after the headline, level by level (its next
    siblings', then its parent's, then its grandparent's; each read only as far as needed): the
    first HEADLINE_NEXT that are not blank count, those up to HEADLINE_TEXT_CHARS are kept (the
    article's text is not folded for nothing), as `texts` keeps them (BYLINE_TEXT_MAX)."""
    def first() -> Iterator[str]:
        taken = 0
        for level in levels:
            for text in level:
                if text and not text.isspace():
                    if len(text) <= HEADLINE_TEXT_CHARS:
                        yield text
                    taken += 1
                    if taken == HEADLINE_NEXT:
                        return
    return texts(first(), BYLINE_TEXT_MAX)
