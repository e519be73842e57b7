"""How a page asks to be shown: what the link is (`medium`), the card it asks for (`card_style`),
the label pairs the card shows (`labels`), and, for an article, its words and reading time."""
from __future__ import annotations

import re
from typing import Any

from spiderduck.core.record import Image, Label
from spiderduck.extract import playback, values
from spiderduck.extract.jsonld import node_types
from spiderduck.extract.sources import Sources

# --- medium -----------------------------------------------------------------------------------

# og:type values (and their namespaces: `video.movie`, `music.song`) by the medium they state.
_OG_MEDIUMS = {"article": "article", "blog": "article", "news": "article", "video": "video",
               "music": "audio", "audio": "audio", "product": "product", "og:product": "product",
               "profile": "profile", "website": "website", "image": "image", "photo": "image"}
# JSON-LD types by the medium they state; a type not here (a Person, a BreadcrumbList) states none.
_LD_MEDIUMS = {
    **dict.fromkeys(("Article", "NewsArticle", "BlogPosting", "Report", "ScholarlyArticle",
                     "TechArticle", "OpinionNewsArticle", "ReportageNewsArticle", "AnalysisNewsArticle",
                     "BackgroundNewsArticle", "ReviewNewsArticle", "SocialMediaPosting", "LiveBlogPosting",
                     "DiscussionForumPosting", "Recipe", "HowTo", "AdvertiserContentArticle",
                     "SatiricalArticle"), "article"),
    **dict.fromkeys(playback.VIDEO_TYPES, "video"),
    **dict.fromkeys(playback.AUDIO_TYPES | {"MusicAlbum", "MusicPlaylist", "PodcastSeries"}, "audio"),
    **dict.fromkeys(("ImageObject", "Photograph", "ImageGallery"), "image"),
    **dict.fromkeys(("DigitalDocument", "TextDigitalDocument", "PresentationDigitalDocument",
                     "SpreadsheetDigitalDocument", "Thesis"), "document"),
    **dict.fromkeys(("Product", "ProductGroup", "IndividualProduct", "ProductModel", "Car", "Vehicle"),
                    "product"),
    "ProfilePage": "profile",
    **dict.fromkeys(("WebSite", "WebPage", "CollectionPage", "SearchResultsPage", "AboutPage", "ContactPage",
                     "ItemPage"), "website"),
}
MAX_LD_NODES = 64          # JSON-LD nodes looked at for their type


def medium_from(s: Sources) -> tuple[str, str]:
    """What the link is (MEDIUMS) and where it was read: og:type when it states more than
    `website`, else the first JSON-LD node whose @type states more (a page's Article or Product
    beside the WebSite and WebPage nodes every page of a site carries), else `website` when
    either states that; ('', '') when neither states any."""
    og = _OG_MEDIUMS.get(values.fold(s.doc.meta("og:type")).lower().partition(".")[0], "")
    if og and og != "website":
        return og, "og:type"
    stated = ""
    for node in s.graph.nodes[:MAX_LD_NODES] if s.graph else ():
        for kind in sorted(node_types(node)):
            found = _LD_MEDIUMS.get(kind, "")
            if found and found != "website":
                return found, "json-ld:@type"
            stated = stated or found
    if og:
        return og, "og:type"
    return (stated, "json-ld:@type") if stated else ("", "")


# --- card style -------------------------------------------------------------------------------

LARGE_IMAGE_WIDTH = 300    # pixels: an image at least this wide makes a large card
# twitter:card values, the retired ones (photo, gallery, product) as the card they became.
_CARDS = {"summary": "summary", "summary_large_image": "summary_large_image", "player": "player",
          "app": "app", "photo": "summary_large_image", "gallery": "summary_large_image", "product": "summary"}


def card_style_from(s: Sources, image: Image | None) -> tuple[str, str]:
    """The card the page asks for (twitter:card) and its source, else the one its image makes
    (`derived`: `card_style_of`), else ('', '')."""
    card = _CARDS.get(values.fold(s.doc.meta("twitter:card")).lower()[:40], "")
    if card:
        return card, "twitter:card"
    card = card_style_of(image)
    return card, "derived" if card else ""


def card_style_of(image: Image | None) -> str:
    """`summary_large_image` for an image known to be at least LARGE_IMAGE_WIDTH pixels wide,
    `summary` for another, '' for none (the related fetches derive it again once the image's probe
    knows its width, or another image is chosen)."""
    if image is None:
        return ""
    return "summary_large_image" if image.width >= LARGE_IMAGE_WIDTH else "summary"


# --- labels -----------------------------------------------------------------------------------

MAX_LABELS = 8             # label pairs kept (twitter:label1 ... twitter:label8)
LABEL_NAME_CHARS = 64
LABEL_VALUE_CHARS = 128


def labels_from(s: Sources) -> tuple[tuple[Label, ...], str]:
    """The card's label pairs (twitter:label1 / twitter:data1, and onwards), in order, as written
    (white space folded, cut at LABEL_NAME_CHARS / LABEL_VALUE_CHARS); a pair that lacks either
    is none. Its source: the first pair's label (`twitter:label1`)."""
    pairs = _label_pairs(s)
    return tuple(label for label, _ in pairs), pairs[0][1] if pairs else ""


def _label_pairs(s: Sources) -> list[tuple[Label, str]]:
    """Each label pair with the name of its label's meta."""
    found = []
    for n in range(1, MAX_LABELS + 1):
        name = _cut(s.doc.meta(f"twitter:label{n}"), LABEL_NAME_CHARS)
        value = _cut(s.doc.meta(f"twitter:data{n}"), LABEL_VALUE_CHARS) if name else ""
        if value:
            found.append((Label(name, value), f"twitter:label{n}"))
    return found


def _cut(text: str, limit: int) -> str:
    text = values.fold(text[:limit * 4])
    return text if len(text) <= limit else text[:limit - 1] + "…"


# --- an article's words and reading time ------------------------------------------------------

WORDS_PER_MINUTE = 230
MAX_WORDS = 1_000_000
MAX_READING_S = 24 * 3600  # a stated reading time longer than a day is none

_READING_LABEL = re.compile(r"read(?:ing)?[ -]?time|time to read|min(?:ute)?s? read|lesezeit|lesedauer"
                            r"|temps de lecture|tiempo de lectura|tempo di lettura|leestijd", re.I)
_MINUTES = re.compile(r"(\d{1,4}(?:[.,]\d{1,2})?)\s*(h|hours?|hrs?|stunden?|heures?|horas?|ore)?"
                      r"\s*(?:(\d{1,2})\s*)?(m\b|mins?|minutes?|minuten?|minutos?|minuti|sec|s\b|seconds?)?",
                      re.I)
_UNDER_A_MINUTE = re.compile(r"less than a minute|under a minute|< ?1 ?min", re.I)


def reading_from(s: Sources, medium: str) -> tuple[tuple[int, str], tuple[int, str]]:
    """((word_count, source), (reading_time_s, source)) of an article, ((0, ''), (0, '')) for any
    other medium. The words: JSON-LD wordCount, else counted in the main text (`text`,
    Document.main_words). The reading time: a label that states it (`twitter:labelN`), JSON-LD
    timeRequired (ISO 8601), else the words at WORDS_PER_MINUTE (`derived`); a stated one over
    MAX_READING_S is none."""
    if medium != "article":
        return (0, ""), (0, "")
    words, words_source = _stated_words(s), "json-ld:wordCount"
    if not words:
        words, words_source = min(s.doc.main_words(), MAX_WORDS), "text"
    stated = [(_label_seconds(label.value), key) for label, key in _label_pairs(s)
              if _READING_LABEL.search(label.name)]
    stated.append((playback.seconds(s.graph.get("timeRequired")) if s.graph else 0, "json-ld:timeRequired"))
    reading, source = next(((n, key) for n, key in stated if 0 < n <= MAX_READING_S), (0, ""))
    if not reading and words:
        reading, source = round(words * 60 / WORDS_PER_MINUTE), "derived"
    return (words, words_source if words else ""), (reading, source)


def _stated_words(s: Sources) -> int:
    value: Any = s.graph.get("wordCount") if s.graph else None
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 8:
        value = int(value.strip())
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_WORDS else 0


def _label_seconds(text: str) -> int:
    """A reading time as a label writes it (`5 minutes`, `5 min read`, `1 h 5 min`, `90 sec`,
    `Less than a minute`), in seconds; 0 when it says none."""
    if _UNDER_A_MINUTE.search(text):
        return 60
    m = _MINUTES.search(text)
    if not m or not (m.group(2) or m.group(4)):
        return 0
    number = float(m.group(1).replace(",", "."))
    if m.group(2):                       # hours, and perhaps minutes after them
        return round(number * 3600 + int(m.group(3) or 0) * 60)
    unit = m.group(4).lower()
    return round(number if unit.startswith("s") and not unit.startswith("m") else number * 60)
