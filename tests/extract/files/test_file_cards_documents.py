"""PDF cards from real files (tests/files/pdf), read the way the File Reader stage reads them:
the head, at most two ranges, and never the whole of a file much larger than the head."""
from __future__ import annotations

import pytest
from file_reads import FILES, HEAD, pdf_of, read_as_stage, source

from spiderduck.core.record import Document
from spiderduck.extract.files import pdf

PDFS = FILES / "pdf"


def test_info_title_author_dates_and_pages_from_one_read():
    data = (PDFS / "pypdf_metadata.pdf").read_bytes()
    read = read_as_stage(data, "application/pdf", "https://example.com/docs/metadata.pdf")
    card = read.card
    assert (card.medium, card.title, card.author) == ("document", "The Title", "Martin Thoma")
    assert card.published_time == "2022-04-15T07:32:43Z"    # D:20220415093243+02'00'
    assert card.modified_time == "2022-04-15T07:32:43Z"
    assert card.document == Document(1)
    assert source(card, "title") == "pdf:Info/Title" and source(card, "document") == "pdf:Root/Pages/Count"
    assert read.ranges == [] and read.bytes_read == len(data) and not card.incomplete


def test_a_large_pdf_takes_its_tail_and_keeps_its_page_count():
    """us_constitution.pdf, 389,617 bytes: Info, Root and Pages at its start (in the head), the
    xref table in its last 4 KB: the tail is the one range; 19 pages read from /Count."""
    data = (PDFS / "pdflib_us_constitution.pdf").read_bytes()
    read = read_as_stage(data, "application/octet-stream", "https://example.com/constitution.pdf")
    card = read.card
    assert card.medium == "document" and card.title == "constitution_pdf2" and card.author == ""
    assert card.published_time == "2003-06-13T09:29:08Z"
    assert card.modified_time == "2003-09-12T14:08:04Z"       # D:20030912100804-04'00'
    assert card.document == Document(19)
    assert not card.incomplete
    assert read.ranges == [(len(data) - 32 * 1024, len(data) - 1)]
    assert read.requests == 2 and read.bytes_read == HEAD + 32 * 1024 < len(data)


def test_a_large_pdf_from_its_head_alone_is_named_from_its_url():
    """An origin that ignores Range: only the head was read, no trailer, so no Info."""
    data = (PDFS / "pdflib_us_constitution.pdf").read_bytes()
    read = read_as_stage(data, "application/pdf", "https://example.com/US_Constitution.pdf", ranges=0)
    assert read.card.medium == "document" and read.card.title == "US Constitution"
    assert source(read.card, "title") == "derived" and read.card.incomplete


def test_utf16_title_with_surrogates_in_an_object_stream():
    data = (PDFS / "pdflib_set_document_metadata.pdf").read_bytes()
    card = read_as_stage(data, "application/pdf", "https://example.com/egg.pdf").card
    assert card.title == "\U0001F95A The Life of an Egg \U0001F373"
    assert card.author == "Humpty Dumpty" and card.document == Document(1)
    assert card.published_time == "2018-06-24T01:58:37Z" and card.modified_time == "2019-12-21T07:00:11Z"


def test_empty_title_strings_count_as_none():
    data = (PDFS / "pypdf_pdflatex-outline.pdf").read_bytes()
    card = read_as_stage(data, "application/pdf", "https://example.com/papers/outline-v2.pdf").card
    assert card.title == "outline v2" and source(card, "title") == "derived"
    assert card.author == "" and card.document == Document(4)
    assert card.published_time == "2022-04-06T18:15:41Z" and not card.incomplete


def test_a_pdf_whose_objects_lie_past_the_tail_takes_a_second_range():
    """The us_constitution bytes moved 2 MiB into a file: its xref offsets now point to zeros
    in the middle, so next_range asks the tail, then the span of Info and Root."""
    data = (PDFS / "pypdf_metadata.pdf").read_bytes()
    padded = b"%PDF-1.5\n%" + b"\n" * (2 * 1024 * 1024) + data     # offsets shift: a broken file
    read = read_as_stage(padded, "application/pdf", "https://example.com/m.pdf")
    assert len(read.ranges) <= 2 and read.bytes_read < len(padded) // 10
    assert read.card.medium == "document"


@pytest.mark.parametrize("value, expected", [
    ("D:20030912100804-04'00'", "2003-09-12T14:08:04Z"),
    ("D:20220415093243+02'00'", "2022-04-15T07:32:43Z"),
    ("D:20180624015837Z", "2018-06-24T01:58:37Z"),
    ("D:2018", "2018-01-01T00:00:00Z"),
    ("20180624", "2018-06-24T00:00:00Z"),
    ("D:20181324", ""), ("garbage", ""), ("", ""), ("D:99999999999999", ""),
])
def test_pdf_dates_in_rfc3339(value, expected):
    assert pdf.rfc3339(value) == expected


def test_objects_before_the_tail_and_past_a_short_head_take_the_second_range():
    """With a 100-byte head (as if the head were short), Root (byte 16), Pages (130) and Info
    (211) lie in neither the head nor the tail: the xref table places them, one range takes them."""
    data = (PDFS / "pdflib_us_constitution.pdf").read_bytes()
    read = read_as_stage(data, "application/pdf", "https://example.com/c.pdf", head=100)
    assert len(read.ranges) == 2 and read.ranges[0] == (len(data) - 32 * 1024, len(data) - 1)
    start, end = read.ranges[1]
    assert start == 100 and end < 4096                     # Root, Pages and Info: a few hundred bytes
    assert read.card.title == "constitution_pdf2" and read.card.document == Document(19)


def test_xmp_fills_what_the_info_dictionary_lacks():
    xmp = (b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
           b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
           b'<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" '
           b'xmlns:xmp="http://ns.adobe.com/xap/1.0/">'
           b'<dc:title><rdf:Alt><rdf:li xml:lang="x-default">XMP Title</rdf:li></rdf:Alt></dc:title>'
           b'<dc:creator><rdf:Seq><rdf:li>Ada Lovelace</rdf:li></rdf:Seq></dc:creator>'
           b'<xmp:CreateDate>2021-03-04T05:06:07+01:00</xmp:CreateDate>'
           b'</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="r"?>')
    objects = [b"<< /Type /Catalog /Pages 2 0 R /Metadata 3 0 R >>",
               b"<< /Type /Pages /Kids [] /Count 7 >>",
               b"<< /Type /Metadata /Subtype /XML /Length %d >>\nstream\n%s\nendstream" % (len(xmp), xmp),
               b"<< /Title () /Producer (x) >>"]
    data = pdf_of(objects, b"/Root 1 0 R /Info 4 0 R")
    card = read_as_stage(data, "application/pdf", "https://example.com/x.pdf").card
    assert (card.title, card.author) == ("XMP Title", "Ada Lovelace")
    assert card.published_time == "2021-03-04T04:06:07Z" and card.document == Document(7)
    assert source(card, "title") == "xmp:dc:title" and source(card, "author") == "xmp:dc:creator"
