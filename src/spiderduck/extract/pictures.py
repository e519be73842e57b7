"""The extraction rules for a card's pictures beyond its image (`media.image_candidates`): every
image the page declares for its card (`images`), and its publisher's logo (`logo`).

The web app manifest's icons (a separate fetch) are not read: the logo is the page's own statement."""
from __future__ import annotations

from typing import Any, Iterator

from spiderduck.core.record import Image
from spiderduck.extract import media, publisher, values
from spiderduck.extract.jsonld import node_types
from spiderduck.extract.sources import Sources

MAX_IMAGES = 16          # card images kept per page
MAX_IMAGE_TAGS = 64      # image metas read per page: a page of 10,000 og:image tags costs no more
MAX_ITEM_DEPTH = 4       # microdata items looked into for a logo (an item's publisher's logo)
MAX_LD_NODES = 64        # JSON-LD nodes looked at for an organisation's logo
MAX_URL_CHARS = 8_192    # a longer URL is none (the record's limit for its image: wire.record_limits)

_TWITTER_IMAGES = frozenset({"twitter:image", "twitter:image:src"})
_OG_IMAGE_PARTS = ("og:image", "og:image:url", "og:image:secure_url", "og:image:width", "og:image:height",
                   "og:image:type")


def images_from(s: Sources) -> tuple[tuple[Image, ...], str]:
    """Every card image the page declares, each URL once, at most MAX_IMAGES: its og:image
    structures (with their `:width`, `:height` and `:type`) and twitter:image, in the page's
    order, then its JSON-LD image; and the source of the first (`og:image`, `twitter:image`,
    `json-ld:image`). A URL that is no image (a video, a sound) or names a tracking pixel is
    left out, as from the image candidates."""
    found, sources = media.usable(((image, source) for image, source in _declared(s)
                                   if len(image.url) <= MAX_URL_CHARS), MAX_IMAGES, tiny=True)
    return found, sources[0] if sources else ""


def _declared(s: Sources) -> Iterator[tuple[Image, str]]:
    """The image metas' images in page order (an og:image structure where it starts), then the
    JSON-LD image's; at most MAX_IMAGE_TAGS metas read."""
    found: list[tuple[Image | dict[str, str], str]] = []
    read = 0
    for m in s.doc.metas:
        key = m.key
        if not key.startswith(("og:image", "twitter:image")):
            continue
        read += 1
        if read > MAX_IMAGE_TAGS:
            break
        group = found[-1][0] if found and found[-1][1] == "og:image" else None
        if key in _TWITTER_IMAGES:
            found.append((Image(values.absolute_url(m.content, s.base)), "twitter:image"))
        elif key in ("og:image", "og:image:url"):
            if not isinstance(group, dict) or "url" in group:
                found.append((group := {}, "og:image"))
            group["url"] = m.content
        elif key in _OG_IMAGE_PARTS:
            if not isinstance(group, dict):
                found.append((group := {}, "og:image"))
            group.setdefault(key[len("og:image:"):], m.content)
    for entry, source in found:
        yield (_og_image(entry, s) if isinstance(entry, dict) else entry), source
    for image in media._ld_images(s, "image"):
        yield image, "json-ld:image"


def _og_image(group: dict[str, str], s: Sources) -> Image:
    url = values.absolute_url(group.get("secure_url"), s.base) or values.absolute_url(group.get("url"), s.base)
    return Image(url, values.integer(group.get("width")), values.integer(group.get("height")),
                 values.fold(group.get("type", "")).lower()[:100])


# --- the publisher's logo -----------------------------------------------------------------------

def logo_from(s: Sources) -> tuple[Image | None, str]:
    """The publisher's logo and where it was read: the JSON-LD publisher's `logo`, else the first
    organisation's (`json-ld:logo`), else a microdata item's `logo` (`microdata:logo`)."""
    if s.graph:
        logo = _ld_logo(s, s.graph.get("publisher.logo"))
        if logo:
            return logo, "json-ld:publisher.logo"
        for node in s.graph.nodes[:MAX_LD_NODES]:
            if publisher._is_organization(node_types(node)):
                logo = _ld_logo(s, node.get("logo"))
                if logo:
                    return logo, "json-ld:logo"
    for item in s.microdata:           # (at most microdata.MAX_ITEMS)
        logo = _item_logo(s, item, MAX_ITEM_DEPTH)
        if logo:
            return logo, "microdata:logo"
    return None, ""


def _ld_logo(s: Sources, value: Any) -> Image | None:
    if isinstance(value, list):
        value = next((v for v in value if v), None)
    if isinstance(value, dict):
        node = s.graph.resolve(value)
        url = _url(values.text(node.get("url")) or values.text(node.get("contentUrl")), s)
        return Image(url, media._pixels(node.get("width")), media._pixels(node.get("height"))) if url else None
    url = _url(values.text(value), s)
    return Image(url) if url else None


def _url(ref: str, s: Sources) -> str:
    url = values.absolute_url(ref, s.base)
    return url if len(url) <= MAX_URL_CHARS else ""


def _item_logo(s: Sources, item: Any, depth: int) -> Image | None:
    """A microdata item's logo (a URL, or an ImageObject item's url), or that of an item among its
    properties (its publisher's), looked into `depth` levels down."""
    props = item.get("properties") if isinstance(item, dict) else None
    if not isinstance(props, dict) or depth <= 0:
        return None
    logo = props.get("logo")
    if isinstance(logo, list):
        logo = logo[0] if logo else None
    if isinstance(logo, dict):
        inner = logo.get("properties")
        logo = (inner.get("url") or inner.get("contentUrl")) if isinstance(inner, dict) else None
    url = _url(values.text(logo), s)
    if url:
        return Image(url)
    for key in ("publisher", "brand", "author"):
        value = props.get(key)
        for inner in (value if isinstance(value, list) else [value])[:4]:
            found = _item_logo(s, inner, depth - 1)
            if found:
                return found
    return None
