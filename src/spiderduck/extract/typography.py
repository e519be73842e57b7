"""Typesetting display text: “curly” quotes for "straight" ones, and a final … for "...".

Link previews show titles, descriptions and bylines as typeset text, so straight
quotes are turned into typographic ones (and apostrophes into ’), the convention
of link-preview libraries (this is a port of smartquotes.js's rules, MIT). Text
that already uses typographic quotes is unchanged.
"""
from __future__ import annotations

import re

_A = re.ASCII  # \w, \W, \b as in JavaScript
_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, f), r) for p, r, f in (
    (r"'''", "\u2034", 0),                                             # triple prime
    (r'(\W|^)"(\w)', "\\1\u201c\\2", _A),                             # opening "
    (r'(\u201c[^"]*)"([^"]*$|[^\u201c"]*\u201c)', "\\1\u201d\\2", 0),  # closing "
    (r'([^0-9])"', "\\1\u201d", 0),                                   # " ending a word
    (r"''", "\u2033", 0),                                              # double prime
    (r"(\W|^)'(\S)", "\\1\u2018\\2", _A),                             # opening '
    (r"([a-z0-9])'([a-z])", "\\1\u2019\\2", re.I),                     # apostrophe: it's
    (r"(\u2018)([0-9]{2}[^\u2019]*)(\u2018([^0-9]|$)|$|\u2019[a-z])", "\u2019\\2\\3", re.I),  # '93
    (r"((\u2018[^']*)|[a-z])'([^0-9]|$)", "\\1\u2019\\3", re.I),     # closing '
    (r"(\B|^)\u2018(?=([^\u2018\u2019]*\u2019\b)*([^\u2018\u2019]*\B\W[\u2018\u2019]\b|[^\u2018\u2019]*$))",
     "\\1\u2019", re.I | _A),                                          # backwards apostrophe: ’til
    (r'"', "\u2033", 0),                                               # remaining ": double prime
    (r"'", "\u2032", 0),                                               # remaining ': prime
))


_TRAILING_DOTS = re.compile(r"\.\.\.$")


def typeset(text: str) -> str:
    """Typographic quotes, and an ellipsis character for the three dots that end a cut text."""
    return smart_quotes(_TRAILING_DOTS.sub("\u2026", text))


def smart_quotes(text: str) -> str:
    if "'" not in text and '"' not in text:
        return text
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
