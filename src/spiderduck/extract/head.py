"""A page's head alone: what a page says about itself, without the body that follows.

When a page's extraction runs out of its budget (process.extract_timeout: deep nesting and the
like after a normal head), the Post Processor extracts again from `head_of(body)`, the bytes
before `</head>` or the first `<body`, so the head's title and metadata are read whatever the body
does. Only the first HEAD_BYTES are searched: a page with no end of head there (pathological from
its first bytes) has no head to fall back on.
"""
from __future__ import annotations

import re

HEAD_BYTES = 256 * 1024          # heads with inline styles and scripts run to a few hundred KiB
_HEAD_END = re.compile(rb"</head[\s>/]|<body[\s>/]", re.I)


def head_of(body: bytes) -> bytes | None:
    """The bytes of `body` before its head ends, or None when it does not end in HEAD_BYTES."""
    found = _HEAD_END.search(body, 0, HEAD_BYTES)
    return body[:found.start()] if found else None
