"""A title made from a file's name, where the file states none: `Annual%20Report_2024-v2.pdf` ->
`Annual Report 2024 v2`."""
from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

MAX_TITLE = 200
_SEPARATORS = re.compile(r"[\s_+.]+|(?<=\w)-(?=\w)|-{2,}")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")


def title_from_url(url: str) -> str:
    """The last path segment, unescaped, its extension and separators cleaned; '' when none."""
    try:
        path = urlsplit(url).path
    except ValueError:
        return ""
    segment = path.rstrip("/").rsplit("/", 1)[-1]
    name = unquote(segment, errors="replace")
    name = "".join(c for c in name if c.isprintable())
    name = _EXTENSION.sub("", name)
    name = _SEPARATORS.sub(" ", name).strip(" -")
    return name[:MAX_TITLE].strip()
