"""The Post Processor's extraction: fetched HTML bytes -> PageMetadata.

    bytes --charset.decode--> text --document.parse--> Document --rules--> PageMetadata

`extract_cases` runs the same path over a saved corpus (`spiderduck extract --cases`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from spiderduck.core.record import FieldSource, Image, PageMetadata
from spiderduck.wire.record_proto import page_to_dict
from spiderduck.extract import authors, cards, charset, colors, dates, jsonld, manifest, media, microdata, oembed, \
    pictures, playback, prices, publisher, rules, signals, values, walls
from spiderduck.extract.script_redirect import TRIGGER_BYTES, script_redirect
from spiderduck.extract.parsers import MAX_HTML_BYTES, parse
from spiderduck.extract.sources import Sources


def extract_page(body: bytes, url: str, content_type: str | None = None, *, parser: str,
                 robots_token: str, http_status: int = 200) -> PageMetadata:
    """The metadata of one fetched HTML page. `url` is the page's (final) URL.

    Only the first MAX_HTML_BYTES of `body` are read. The caller passes its settings' values:
    `parser` is process.parser, `robots_token` the name of the robots meta for us (the product
    token of fetcher.user_agent: `<meta name="spiderduck">`, signals.robots_token).
    `http_status` is the response's (a wall may come with a 403 or a 503: `interstitial`).
    """
    return page_of(*sources(body, url, content_type, parser=parser), robots_token, http_status)


def page_of(s: Sources, encoding: str, markup: str | bytes, robots_token: str,
            http_status: int = 200) -> PageMetadata:
    """The metadata of a page's parsed sources (extract_page's rules, after the parse)."""
    doc, base, url = s.doc, s.base, s.url
    images, image_sources = media.image_candidates_from(s)
    title, description = rules.title_from(s), rules.description_from(s)
    site_name, author = publisher.site_name_from(s), authors.author_from(s)
    published, canonical = dates.published_time_from(s), rules.canonical_url_from(s)
    lang, favicon = rules.lang_from(s), media.favicon_from(s)
    card = _card(s, images[0] if images else None)
    # One source per filled field, in the order of PROVENANCE_FIELDS; a page that names no
    # canonical URL gets its own URL as the record's (derived).
    provenance = tuple(FieldSource(name, source) for name, (value, source) in (
        ("title", title), ("description", description),
        ("image", (images, image_sources[0] if images else "")), ("site_name", site_name),
        ("author", author), ("published_time", published),
        ("canonical_url", (True, canonical[1] or "derived")), ("lang", lang), ("favicon", favicon),
        *card.items())
        if value)
    return PageMetadata(
        title=title[0],
        description=description[0],
        site_name=site_name[0],
        author=author[0],
        published_time=published[0],
        modified_time=rules.modified_time(s),
        lang=lang[0],
        canonical_url=canonical[0],
        image=images[0] if images else None,
        image_candidates=images,
        image_sources=image_sources,
        players=media.players(s),
        favicon=favicon[0],
        type=rules.type_(s),
        video=card["video"][0],
        structured_data=rules.structured_data(s),
        charset=encoding,
        robots_directives=signals.meta_directives(doc, robots_token),
        sensitive=signals.sensitive(doc, s.graph),
        fediverse_creator=signals.fediverse_creator(doc),
        oembed_url=oembed.discover(doc, base),
        manifest_url=manifest.discover(doc, base),
        interstitial=walls.interstitial(markup, doc, http_status, url),
        provenance=provenance,
        medium=card["medium"][0],
        images=card["images"][0],
        logo=card["logo"][0],
        theme_color=card["theme_color"][0],
        theme_color_dark=card["theme_color_dark"][0],
        card_style=card["card_style"][0],
        labels=card["labels"][0],
        offer=card["offer"][0],
        word_count=card["word_count"][0],
        reading_time_s=card["reading_time_s"][0],
        audio=card["audio"][0],
        claimed_url=rules.claimed_url_from(s),
        script_redirect=script_redirect(markup, url, TRIGGER_BYTES),
    )


def _card(s: Sources, image: Image | None) -> dict[str, tuple[Any, str]]:
    """The card's fields (issue 41), each (value, source), in PROVENANCE_FIELDS' order."""
    medium, labels = cards.medium_from(s), cards.labels_from(s)
    theme_color, theme_color_dark = colors.theme_colors_from(s)
    word_count, reading_time_s = cards.reading_from(s, medium[0])
    return {"medium": medium, "images": pictures.images_from(s), "logo": pictures.logo_from(s),
            "theme_color": theme_color, "theme_color_dark": theme_color_dark,
            "card_style": cards.card_style_from(s, image), "labels": labels, "offer": prices.offer_from(s),
            "word_count": word_count, "reading_time_s": reading_time_s, "audio": playback.audio_from(s),
            "video": playback.video_from(s)}


def sources(body: bytes, url: str, content_type: str | None = None, *,
            parser: str) -> tuple[Sources, str, str | bytes]:
    """The page's parsed sources, its encoding and its markup (the first MAX_HTML_BYTES decoded)."""
    body = body[:MAX_HTML_BYTES]
    encoding = charset.sniff(body, content_type)
    # UTF-8 bytes go to the parser as they are: decoding them here only to re-encode is wasted work.
    markup = charset.strip_bom(body, encoding) if encoding == "utf-8" else charset.decode_as(body, encoding)
    doc = parse(markup, parser)
    blocks = jsonld.load(doc.jsonld)
    base = (values.join(url, doc.base_href) if doc.base_href else None) or url
    s = Sources(doc=doc, graph=jsonld.Graph(blocks), url=url, base=base, blocks=blocks,
                microdata=microdata.extract(markup, base, doc.item_html()) if doc.has_items else [])
    return s, encoding, markup


def load_cases(cases_json_path: str | Path) -> list[dict[str, Any]]:
    """A corpus cases file: a list of {name, url, html (relative to the file's folder), expected}."""
    return json.loads(Path(cases_json_path).read_text(encoding="utf-8"))


def page_json(body: bytes, url: str, content_type: str | None = None, *, parser: str,
              robots_token: str) -> dict[str, Any]:
    """One saved page's record in its JSON shape (`spiderduck extract`)."""
    return page_to_dict(url, extract_page(body, url, content_type, parser=parser, robots_token=robots_token))


def extract_cases(cases_json_path: str | Path, *, parser: str, robots_token: str) -> dict[str, dict[str, Any]]:
    """{case name: the page's record as JSON} for every case of a corpus cases file (parser and
    robots_token as for extract_page)."""
    folder = Path(cases_json_path).parent
    out: dict[str, dict[str, Any]] = {}
    for case in load_cases(cases_json_path):
        body = (folder / case["html"]).read_bytes()
        out[case["name"]] = page_json(body, case["url"], case.get("content_type"), parser=parser,
                                      robots_token=robots_token)
    return out
