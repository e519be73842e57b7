"""The extraction rules for a page's media: its image candidates and image, favicon, video and
players (for embed_html), from OpenGraph structures, Twitter cards, JSON-LD and the body."""
from __future__ import annotations

import re
from typing import Any, Iterable, Iterator, NamedTuple

from spiderduck.core.record import Image, Video
from spiderduck.extract import values
from spiderduck.extract.sources import Sources


# --- images -----------------------------------------------------------------------------------

# Smaller than this in a stated width or height (pixels), an image is an icon, a spacer or a
# tracking pixel, never a preview. It is the default of `process.min_image_size`, which the
# related fetches apply to the sizes they read; the extraction has no settings, so the sizes a
# page states are held to the default.
MIN_IMAGE_SIZE = 50
MAX_IMAGE_CANDIDATES = 8     # images a page offers that are kept (and, at most, probed)

_ICON_RELS = ("icon", "apple-touch-icon", "apple-touch-icon-precomposed")   # in order of preference
_ICON_SIZES = range(32, 193)  # pixels: an icon stated this size suits a preview best


def favicon(s: Sources) -> str:
    """The page's icon: a `<link rel=icon>` (or "shortcut icon"), else its Apple touch icon; one
    whose stated `sizes` fits a preview (32 to 192 pixels, or "any": scalable) before one that
    states none, and that before one stated only smaller or larger. Safari's `mask-icon`, a
    one-colour silhouette, is none. '' when the page names none: the related fetches then try
    the site's /favicon.ico."""
    return favicon_from(s)[0]


def favicon_from(s: Sources) -> tuple[str, str]:
    """`favicon` and where it was read (`<link rel=icon>`, `<link rel=apple-touch-icon>`), or ('', '')."""
    best, best_rank = "", None
    for order, link in enumerate(s.doc.links):
        kind = next((k for k, rel in enumerate(_ICON_RELS) if rel in link.rel), None)
        if kind is None:
            continue
        url = values.absolute_url(link.href, s.base)
        rank = (_icon_size_rank(link.sizes), kind, order)
        if url and (best_rank is None or rank < best_rank):
            best, best_rank = url, rank
    return (best, _ICON_SOURCES[best_rank[1]]) if best else ("", "")


_ICON_SOURCES = tuple(f"<link rel={rel}>" for rel in _ICON_RELS)


def _icon_size_rank(sizes: str) -> int:
    """0: a size in _ICON_SIZES, or "any"; 1: no size stated; 2: only other sizes."""
    if not sizes:
        return 1
    for size in sizes.split():
        width, _, height = size.partition("x")
        if size == "any" or (width.isdigit() and height.isdigit()
                             and int(width) in _ICON_SIZES and int(height) in _ICON_SIZES):
            return 0
    return 2


def image_candidates(s: Sources) -> tuple[Image, ...]:
    """Every image the page offers for its preview, best first (`image` is the first), each URL
    once, at most MAX_IMAGE_CANDIDATES: its og:image structures (with their stated size and
    type), the Twitter card's image, `<meta name=image>`, every JSON-LD image and thumbnailUrl,
    `<link rel=image_src>`; then guesses from the body: the `<img>` that state a width and a
    height, largest first, then the others in page order, then a `<video poster>`.

    Left out: an image stated smaller than MIN_IMAGE_SIZE in either dimension, a URL that names
    a tracking pixel (`_PIXEL`) or a file that is no image (a video, a sound). The related
    fetches try them in order, and keep the first that loads and is large enough."""
    return image_candidates_from(s)[0]


def image_candidates_from(s: Sources) -> tuple[tuple[Image, ...], tuple[str, ...]]:
    """`image_candidates`, and where each was read (`og:image`, `twitter:image`, `json-ld:image`,
    `<img>`, ...: provenance sources), in the same order."""
    return usable(_images(s), MAX_IMAGE_CANDIDATES)


def usable(images: Iterable[tuple[Image, str]], limit: int,
           tiny: bool = False) -> tuple[tuple[Image, ...], tuple[str, ...]]:
    """The first `limit` of (image, source) pairs with a URL, each URL once, but for those that
    name no image (a video, a sound) or a tracking pixel, and (unless `tiny`) those stated
    smaller than MIN_IMAGE_SIZE; and their sources."""
    found: list[Image] = []
    sources: list[str] = []
    seen: set[str] = set()
    for image, source in images:
        url = image.url
        if not url or url in seen:
            continue
        seen.add(url)
        if _NOT_IMAGE.search(url) or _is_pixel(url) or (not tiny and _tiny(image)):
            continue      # a URL left out once stays out, whoever names it again
        found.append(image)
        sources.append(source)
        if len(found) == limit:
            break
    return tuple(found), tuple(sources)


def image(s: Sources) -> Image | None:
    candidates = image_candidates(s)
    return candidates[0] if candidates else None


def _images(s: Sources) -> Iterator[tuple[Image, str]]:
    """What `image_candidates` chooses from, in order, with their sources; URLs absolute, or ''
    when unusable."""
    for media in _og_media(s, "og:image"):
        yield Image(*media), "og:image"
    for key in ("twitter:image", "twitter:image:src", "image"):
        yield Image(values.absolute_url(s.doc.meta(key), s.base)), key
    for image in _ld_images(s, "image"):
        yield image, "json-ld:image"
    for image in _ld_images(s, "thumbnailUrl"):
        yield image, "json-ld:thumbnailUrl"
    for link in s.doc.links:
        if "image_src" in link.rel:
            yield Image(values.absolute_url(link.href, s.base)), "<link rel=image_src>"
    for image in _body_images(s):
        yield image, "<img>"
    yield Image(values.absolute_url(s.doc.video_poster, s.base)), "<video poster>"


def _body_images(s: Sources) -> Iterator[Image]:
    """Guesses from the body: the `<img>` that state a width and a height, largest first, then the
    others in page order. Each URL is resolved only when the candidates reach it (a page has up to
    16, and a few candidates usually come before them); an `<img>` already given among the
    stated-size ones is not given again (its URL is `seen` by then, so it would be skipped)."""
    imgs = s.doc.images
    sizes = [(_pixels(img.width), _pixels(img.height)) for img in imgs]   # one stated alone counts (_tiny)
    stated = sorted((n for n, (width, height) in enumerate(sizes) if width and height),
                    key=lambda n: -sizes[n][0] * sizes[n][1])
    for n in stated:
        yield Image(values.absolute_url(imgs[n].src, s.base), *sizes[n])
    given = set(stated)
    for n, img in enumerate(imgs):
        if n not in given:
            yield Image(values.absolute_url(img.src, s.base), *sizes[n])


def _tiny(image: Image) -> bool:
    return 0 < image.width < MIN_IMAGE_SIZE or 0 < image.height < MIN_IMAGE_SIZE


_NOT_IMAGE = re.compile(r"\.(?:mp4|m4v|webm|mov|avi|mkv|ogv|mp3|m4a|wav|ogg|oga|flac|aac)(?:[?#]|$)", re.I)
# Tracking pixels and beacons, by the names they commonly go by: a file named pixel, 1x1, spacer,
# blank or beacon (`/t/pixel.gif`, `/img/1x1.png`), Meta's pixel (facebook.com/tr) and Adobe
# Analytics' beacons (`/b/ss/`).
_PIXEL = re.compile(r"/(?:[\w.-]*[_.-])?(?:pixel|1x1|spacer|blank|beacon)\.(?:gif|png)(?:[?#]|$)"
                    r"|^https?://(?:www\.)?facebook\.com/tr(?:[/?#]|$)|/b/ss/", re.I)
# Words one of which a URL must hold for _PIXEL to match it (lower-cased, ASCII).
_PIXEL_WORDS = ("pixel", "1x1", "spacer", "blank", "beacon", "facebook.com/tr", "/b/ss/")


def _is_pixel(url: str) -> bool:
    """_PIXEL.search(url), sooner: most URLs hold none of _PIXEL_WORDS, and the pattern costs some
    12 µs a URL (it is tried at every position). The words are looked for in an ASCII URL only
    (every URL resolved is): IGNORECASE also matches some other letters (K, ſ, ı) to ASCII ones."""
    if url.isascii():
        low = url.lower()
        if not any(word in low for word in _PIXEL_WORDS):
            return False
    return _PIXEL.search(url) is not None


_PIXELS = re.compile(r"(\d{1,6})(?:\.\d{0,12})?\s{0,4}(?:px)?$", re.I)   # on a stripped, cut value


def _pixels(value: Any) -> int:
    """A stated size in pixels: `<img width="640">`, "640px", JSON-LD's 640 or {"value": 640};
    0 for a relative size ("100%", "auto") or none."""
    if not value:            # most <img> state no size
        return 0
    if isinstance(value, dict):
        value = value.get("value")
    if isinstance(value, bool):
        return 0
    if isinstance(value, (int, float)):
        return int(value) if 0 < value < 1_000_000 else 0
    m = _PIXELS.match(value.strip()[:32]) if isinstance(value, str) else None
    return int(m.group(1)) if m else 0


def _ld_images(s: Sources, key: str) -> Iterator[Image]:
    """Every entry of the first JSON-LD `key` (a URL, or an ImageObject with its stated size)."""
    value = s.graph.get(key) if s.graph else None
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, dict):
            item = s.graph.resolve(item)
            yield Image(values.absolute_url(item.get("url") or item.get("contentUrl"), s.base),
                        _pixels(item.get("width")), _pixels(item.get("height")))
        elif isinstance(item, str):
            yield Image(values.absolute_url(item, s.base))


def video(s: Sources) -> Video | None:
    for media in _og_media(s, "og:video"):
        return Video(*media)
    url = values.absolute_url(s.doc.meta("twitter:player:stream"), s.base)
    if not url or is_audio(url, values.fold(s.doc.meta("twitter:player:stream:content_type")).lower()):
        return None          # a sound's stream is the page's audio (playback.audio_from)
    return Video(url)


_AUDIO_FILE = re.compile(r"\.(?:mp3|m4a|aac|oga|ogg|opus|wav|flac|weba)(?:[?#]|$)", re.I)


def is_audio(url: str, content_type: str) -> bool:
    """Whether a media file is a sound: typed audio/*, or untyped and named as one."""
    return content_type.startswith("audio/") or (not content_type and bool(_AUDIO_FILE.search(url)))


def players(s: Sources) -> tuple[Video, ...]:
    """The page's players, for its embed: each og:video, then its twitter:player (an HTML page
    made to be framed; twitter:player:stream is a media file, not a player). Which may be framed
    is decided later, against process.embed_allow_hosts (extraction.embeds)."""
    found = [Video(*m) for m in _og_media(s, "og:video")]
    url = values.absolute_url(s.doc.meta("twitter:player"), s.base)
    if url:
        found.append(Video(url, values.integer(s.doc.meta("twitter:player:width")),
                           values.integer(s.doc.meta("twitter:player:height")), "text/html"))
    return tuple(found[:MAX_PLAYERS])


MAX_PLAYERS = 8


class _Media(NamedTuple):
    url: str
    width: int
    height: int
    content_type: str


def _og_media(s: Sources, prefix: str) -> tuple[_Media, ...]:
    """The page's og:image (or og:video, og:audio) structures, in order, with a usable URL.

    A structure starts at `og:image` (or `og:image:url`); the `:secure_url`, `:width`,
    `:height` and `:type` properties after it belong to it. Made once per page and prefix: the
    video, its source and the players all read og:video's.
    """
    made = s.made.get(("og_media", prefix))
    if made is None:
        made = s.made[("og_media", prefix)] = tuple(_og_structures(s, prefix))
    return made


def _og_structures(s: Sources, prefix: str) -> list[_Media]:
    groups: list[dict[str, str]] = []
    starts = (prefix, prefix + ":url")
    sub = prefix + ":"
    for m in [m for m in s.doc.metas if m.key.startswith(prefix)]:   # usually none for og:video
        key = m.key
        if key in starts:
            if not groups or "url" in groups[-1]:
                groups.append({})
            groups[-1]["url"] = m.content
        elif key.startswith(sub):
            if not groups:
                groups.append({})
            groups[-1].setdefault(key[len(sub):], m.content)
    found = []
    for g in groups:
        url = values.absolute_url(g.get("secure_url"), s.base) or values.absolute_url(g.get("url"), s.base)
        if url:
            found.append(_Media(url, values.integer(g.get("width")), values.integer(g.get("height")),
                               values.fold(g.get("type", "")).lower()))
    return found
