"""One hop's result: what a fetcher answers for one URL (shared by fetcher and scheduler)."""
from __future__ import annotations

from dataclasses import dataclass

from spiderduck.core.status import Status

HTML_TYPES = ("text/html", "application/xhtml+xml")
RENDERED_TYPE = "text/html; charset=utf-8"      # a rendered DOM's type, as the fetcher hands it over
RENDER_OK, RENDER_TIMEOUT = "ok", "timeout"     # FetchResult.render_outcome (fetcher.render)
MAX_COOKIE_CHARS = 8 * 1024     # FetchRequest.cookie, at most (the browser profile's, issue 43)


def declared_type(content_type: str | None) -> str:
    """The media type alone, lower-case: `Text/HTML; charset=x` -> `text/html`; '' for none."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def looks_like_html(body: bytes) -> bool:
    """Whether an untyped body's first bytes are HTML markup (a doctype, <html> or a <head>)."""
    head = body[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html")) or b"<head" in head


@dataclass(frozen=True)
class FetchResult:
    url: str
    status: Status                          # OK when the origin answered (any HTTP code)
    http_status: int = 0
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    truncated: bool = False
    error: str = ""
    remote_address: str = ""
    fetched_at: float = 0.0                 # epoch seconds at the start of the request
    queued_seconds: float = 0.0             # waiting for the domain's turn
    robots_seconds: float = 0.0
    origin_seconds: float = 0.0             # connect + request + body at the origin
    fetcher_id: str = ""
    rendered: bytes = b""                   # the page's DOM after a headless browser ran it (UTF-8 HTML),
                                            # when it was rendered (issue 31: a shell); else empty
    render_outcome: str = ""                # "" not rendered; else the renderer's outcome (ok, timeout, ...)

    def header(self, name: str) -> str | None:
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None
