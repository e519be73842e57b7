"""oEmbed (https://oembed.com): where a page's JSON oEmbed document is, and what it says.

A page names its document with `<link rel="alternate" type="application/json+oembed" href>`;
the related fetches read it and fill the title, author, site name and thumbnail the page lacks,
and its `html` (a "video" or "rich" document's embed markup) becomes, through
`embeds.from_oembed_html`, the record's `embed_html` when it holds an iframe from an allowed host.
"""
from __future__ import annotations

import json
from typing import Any, NamedTuple

from spiderduck.core.record import Image
from spiderduck.extract import values
from spiderduck.extract.document import Document
from spiderduck.extract.embeds import HTML_MAX
from spiderduck.extract.typography import typeset

JSON_TYPE = "application/json+oembed"


class OEmbed(NamedTuple):
    title: str
    author: str
    site_name: str
    thumbnail: Image | None
    html: str = ""      # a video's or rich document's embed markup, as sent (untrusted: never
                        # output as it is, see embeds.from_oembed_html); '' when over HTML_MAX


def discover(doc: Document, base: str) -> str:
    """The absolute URL of the page's JSON oEmbed document, or ''."""
    for link in doc.links:
        if link.type == JSON_TYPE:
            url = values.absolute_url(link.href, base)
            if url:
                return url
    return ""


def parse(body: bytes, base: str) -> OEmbed | None:
    """An oEmbed JSON document's useful fields; None when it is not one (bad JSON included)."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    thumbnail = _image(data, "thumbnail_url", "thumbnail_width", "thumbnail_height", base)
    if thumbnail is None and data.get("type") == "photo":     # a photo's `url` is the photo
        thumbnail = _image(data, "url", "width", "height", base)
    return OEmbed(title=typeset(values.text(data.get("title"))),
                  author=values.text(data.get("author_name")),
                  site_name=values.text(data.get("provider_name")),
                  thumbnail=thumbnail,
                  html=_html(data))


def _html(data: dict[str, Any]) -> str:
    """The document's `html`, when it is a video or rich document's and not over HTML_MAX."""
    html = data.get("html")
    if data.get("type") not in ("video", "rich") or not isinstance(html, str) or len(html) > HTML_MAX:
        return ""
    return html


def _image(data: dict[str, Any], url_key: str, width_key: str, height_key: str, base: str) -> Image | None:
    url = values.absolute_url(data.get(url_key), base)
    if not url:
        return None
    return Image(url, _dimension(data.get(width_key)), _dimension(data.get(height_key)))


def _dimension(value: Any) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return values.integer(value)
