"""The card shows issue 41's fields: what the link is, its labels, offer, reading time, lengths,
pages, size, theme colours and logo; a refresh hop's kind in the chain; each field's value in
"why this preview". Rendered through the page's own template (autoescaped), no service needed."""
from __future__ import annotations

from spiderduck.core.record import (Audio, Document, FieldSource, Image, Label, Offer, Redirect,
                                    UrlRecord, Video)
from spiderduck.core.status import Status
from spiderduck.web.app import _environment
from spiderduck.web.card_facts import duration_text, facts_of, size_text
from spiderduck.web.views import card_of, chain_of, why_of

RECORD = UrlRecord(
    url="http://shop.test/p", status=Status.OK, final_url="http://shop.test/p", title="Kettle",
    redirects=(Redirect("http://shop.test/old", 301), Redirect("http://shop.test/wait", 200, "meta-refresh")),
    medium="product", labels=(Label("Price", "€19.99"), Label("Ships", "<b>today</b>")),
    offer=Offer("19.99", "EUR", "in_stock"), reading_time_s=300,
    video=Video("http://shop.test/v.mp4", 640, 360, "video/mp4", 8_000),
    audio=Audio("http://shop.test/a.mp3", "audio/mpeg", 3_723_000), document=Document(19),
    file_size=389_617, theme_color="#00aaff", logo=Image("http://cdn.test/logo.png"),
    provenance=(FieldSource("title", "og:title"), FieldSource("offer", "json-ld:offers"),
                FieldSource("labels", "twitter:label1"), FieldSource("document", "pdf:/Root/Pages/Count")))


def test_the_facts_follow_the_labels_in_order():
    assert facts_of(RECORD) == (
        ("Price", "€19.99"), ("Ships", "<b>today</b>"), ("Price", "19.99 EUR, in stock"),
        ("Reading time", "5 min"), ("Video", "0:08"), ("Audio", "1:02:03"), ("Pages", "19"),
        ("Size", "380.5 KiB"), ("Theme colour", "#00aaff"))
    assert facts_of(UrlRecord(url="http://a.test/", status=Status.OK)) == ()
    assert duration_text(59_999) == "0:59" and size_text(1023) == "1023 bytes" and size_text(2**50) == "1024.0 TiB"


def test_the_page_shows_the_new_fields_escaped():
    card = card_of(RECORD, ())
    html = _environment().get_template("url.html").render(
        admin=False, live=False, asked=RECORD.url, record=RECORD, card=card, chain=chain_of(RECORD),
        record_json="{}", freshness=type("F", (), {"state": "fresh", "expires_at": "", "explanation": ""}),
        submit=False, why=why_of(RECORD))
    assert '<span class="medium" id="card-medium">product</span>' in html
    assert "<dt>Ships</dt><dd>&lt;b&gt;today&lt;/b&gt;</dd>" in html
    assert "<dt>Pages</dt><dd>19</dd>" in html
    assert '<img class="logo" src="http://cdn.test/logo.png"' in html
    assert card.origins["img-src"] == ["http://cdn.test"]
    assert '<span class="kind">meta-refresh</span>' in html
    assert html.count('<span class="kind">') == 1          # a plain 3xx hop names no kind
    rows = {row.field: row.value for row in why_of(RECORD).fields}
    assert rows == {"title": "Kettle", "offer": "19.99 EUR in_stock", "labels": "Price: €19.99; Ships: <b>today</b>",
                    "document": "19 pages"}
