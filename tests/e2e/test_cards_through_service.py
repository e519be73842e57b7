"""Issue 41's cards through the whole service over real sockets, its extraction in worker
processes: a product page's labels, offer, theme colours, audio and medium, and a PDF read by byte
ranges (its next range and its card both made in a worker), each as `get` answers it. (Labels and
offers once failed to cross a worker's pipe: only a run through the pool shows that.)"""
from __future__ import annotations

import pathlib

from support.range_origin import RangeOrigin
from support.service import Client, RunningService, service_settings

FILES = pathlib.Path(__file__).resolve().parents[1] / "files"
PRODUCT = ('<!DOCTYPE html><html><head><title>Kettle</title>'
           '<meta property="og:type" content="product"><meta property="og:title" content="Steel kettle">'
           '<meta property="og:image" content="/k.jpg"><meta property="og:image" content="/k2.jpg">'
           '<meta name="twitter:label1" content="Price"><meta name="twitter:data1" content="€19.99">'
           '<meta property="product:price:amount" content="19.99"><meta property="product:price:currency" content="EUR">'
           '<meta property="product:availability" content="in stock">'
           '<meta name="theme-color" content="#0af"><meta name="theme-color" media="(prefers-color-scheme: dark)" '
           'content="rgb(16, 16, 16)"><meta property="og:audio" content="/jingle.mp3">'
           '<meta property="og:audio:type" content="audio/mpeg"></head><body><p>A kettle.</p></body></html>')


async def test_a_product_page_and_a_pdf_through_the_service(tmp_path, nats_server, localweb):
    page = localweb.page("shop.test", "/kettle", PRODUCT)
    pdf = (FILES / "pdf" / "pdflib_us_constitution.pdf").read_bytes()
    origin = RangeOrigin(pdf, content_type="application/pdf")
    document = localweb.route("docs.test", "/papers/US_Constitution.pdf", origin)
    settings = service_settings(tmp_path, nats_server.url)
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(page)
        await client.submit_url(document)
        await client.events.wait_for(2, timeout=60)
        product, paper = await client.get([page, document])

    assert product["status"] == "OK" and product["medium"] == "product", product
    assert product["labels"] == [{"name": "Price", "value": "€19.99"}]
    assert product["offer"] == {"price": "19.99", "currency": "EUR", "availability": "in_stock"}
    assert (product["theme_color"], product["theme_color_dark"]) == ("#00aaff", "#101010")
    assert [i["url"] for i in product["images"]] == [localweb.url("shop.test", "/k.jpg"),
                                                     localweb.url("shop.test", "/k2.jpg")]
    assert product["audio"] == {"url": localweb.url("shop.test", "/jingle.mp3"), "content_type": "audio/mpeg"}
    assert {p["field"] for p in product["provenance"]} >= {"medium", "images", "labels", "offer", "theme_color",
                                                           "theme_color_dark", "audio"}

    assert paper["status"] == "OK" and paper["medium"] == "document", paper
    assert (paper["title"], paper["document"], paper["file_size"]) == ("constitution_pdf2", {"pages": 19}, str(len(pdf)))
    assert paper["published_time"] == "2003-06-13T09:29:08Z"
    assert 2 <= len(origin.served) <= 3 and origin.served[1].status == 206
