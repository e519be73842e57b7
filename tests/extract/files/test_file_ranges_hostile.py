"""Hostile files: each gives what was read (or nothing), never raises, and its work is bounded by
a count the parsers keep (boxes, elements, frames, xref sections), not by a clock."""
from __future__ import annotations

import random
import re

import pytest
from file_reads import FILES, MAX_RANGE, pdf_of, read_as_stage

from spiderduck.extract.files import FileBytes, ebml, file_card, id3, mp4, next_range, pdfxref, sparse

URL = "https://example.com/f/hostile.bin"
GiB = 1 << 30


@pytest.mark.timeout(60)
def test_pdf_whose_xref_prev_chain_loops():
    data = pdf_of([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 2 >>",
                 b"<< /Title (Loop) >>"], b"/Root 1 0 R /Info 3 0 R", prev_self=True)
    table, refs = pdfxref.sections([(0, data)], len(data))
    assert refs == {"Root": 1, "Info": 3} and len(table) == 3
    padded = data[:-40] + b" " * (3 * 1024 * 1024) + data[-40:]    # a large file whose end loops
    read = read_as_stage(padded, "application/pdf", URL)
    assert len(read.ranges) <= 2
    card = read_as_stage(data, "application/pdf", URL).card
    assert card.title == "Loop" and card.document.pages == 2


@pytest.mark.timeout(60)
def test_pdf_two_sections_pointing_at_each_other():
    data = pdf_of([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 1 >>"],
                b"/Root 1 0 R")
    xref = int(re.findall(rb"startxref\s+(\d+)", data)[-1])
    second = data + b"xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 3 /Root 1 0 R /Prev %d >>\n" % xref
    looped = second.replace(b"/Size 3 /Root 1 0 R >>", b"/Size 3 /Root 1 0 R /Prev %d >>" % len(data), 1)
    looped += b"startxref\n%d\n%%%%EOF\n" % len(data)
    table, refs = pdfxref.sections([(0, looped)], len(looped))
    assert refs["Root"] == 1
    card = file_card("application/pdf", URL, FileBytes(len(looped), ((0, looped),)))
    assert card.medium == "document"


@pytest.mark.timeout(60)
def test_pdf_with_a_huge_count_and_a_circular_parent():
    huge = pdf_of([b"<< /Type /Catalog /Pages 2 0 R >>",
                 b"<< /Type /Pages /Kids [3 0 R] /Count 99999999999999 >>",
                 b"<< /Type /Page /Parent 3 0 R /Kids [2 0 R] >>"], b"/Root 1 0 R")
    card = file_card("application/pdf", URL, FileBytes(len(huge), ((0, huge),)))
    assert card.medium == "document" and card.document.pages == 0        # not believed
    circular = huge.replace(b"/Count 99999999999999", b"/Count 3             ")
    card = file_card("application/pdf", URL, FileBytes(len(circular), ((0, circular),)))
    assert card.document.pages == 3                                      # /Count read, no walk


@pytest.mark.timeout(60)
def test_pdf_declared_huge_with_only_its_head():
    data = (FILES / "pdf" / "pdflib_us_constitution.pdf").read_bytes()
    for total in (10 * GiB, 1 << 62):
        have = FileBytes(total, ((0, data[:65536]),))
        start, end = next_range("application/pdf", URL, have)
        assert end == total - 1 and end - start < MAX_RANGE
        card = file_card("application/pdf", URL, have)
        assert card.medium == "document" and card.incomplete
        tail = FileBytes(total, ((0, data[:65536]), (total - 32768, data[-32768:])))
        assert file_card("application/pdf", URL, tail).medium == "document"


def _box(kind: bytes, payload: bytes = b"") -> bytes:
    return (8 + len(payload)).to_bytes(4, "big") + kind + payload


def test_mp4_box_declaring_2_to_the_63_bytes():
    huge = (1).to_bytes(4, "big") + b"mdat" + (1 << 63).to_bytes(8, "big")
    data = _box(b"ftyp", b"isom\x00\x00\x00\x00") + huge + b"\x00" * 1000
    for total in (len(data), 10 * GiB):
        assert next_range("video/mp4", URL, FileBytes(total, ((0, data),))) is None
        card = file_card("video/mp4", URL, FileBytes(total, ((0, data),)))
        assert card.medium == "video" and card.video is None and card.incomplete
    moov = (1).to_bytes(4, "big") + b"moov" + (1 << 63).to_bytes(8, "big") + _box(b"mvhd", bytes(100))
    data = _box(b"ftyp", b"isom\x00\x00\x00\x00") + moov
    start, end = next_range("video/mp4", URL, FileBytes(10 * GiB, ((0, data),)))
    assert start == len(data) and end - start + 1 <= MAX_RANGE


def test_mp4_nested_10000_deep_and_wide():
    deep = b""
    for _ in range(10_000):
        deep = _box(b"trak", deep)
    movie = mp4.parse_moov(deep)
    assert movie.visited <= mp4.BOX_BUDGET and movie.width == 0
    wide = _box(b"free") * 100_000
    movie = mp4.parse_moov(wide)
    assert movie.visited <= mp4.CHILD_BOXES
    data = _box(b"ftyp", b"isom\x00\x00\x00\x00") + _box(b"moov", deep) + _box(b"free") * 50_000
    boxes, pending = mp4.top_level([(0, data)], len(data))
    assert len(boxes) <= mp4.TOP_BOXES
    card = file_card("video/mp4", URL, FileBytes(len(data), ((0, data),)))
    assert card.medium == "video" and card.video is None


def test_ebml_sizes_of_2_to_the_56_and_endless_elements():
    big = b"\x01\xff\xff\xff\xff\xff\xff\xfe"                    # 2^56 - 2: the largest known size
    header = b"\x1a\x45\xdf\xa3\x84\x42\x82\x81w"                # EBML, DocType "w"
    data = header + b"\x18\x53\x80\x67" + big + b"\x15\x49\xa9\x66" + big + b"\x2a\xd7\xb1\x81\x01"
    for total in (len(data), 1 << 60):
        assert next_range("video/webm", URL, FileBytes(total, ((0, data),))) is None
        card = file_card("video/webm", URL, FileBytes(total, ((0, data),)))
        assert card.medium == "video" and card.incomplete
    endless = header + b"\x18\x53\x80\x67\xff" + b"\xec\x80" * 60_000        # 60,000 Void elements
    found = ebml.scan([(0, endless)])
    assert not found.info
    budget = [ebml.ELEMENT_BUDGET]
    assert sum(1 for _ in ebml.elements(endless, 0, len(endless), budget, (ebml.SEGMENT,))) <= ebml.ELEMENT_BUDGET


def test_id3_tag_declaring_256_mib():
    size = 256 * 1024 * 1024 - 1                  # the most a syncsafe size states
    syncsafe = bytes([(size >> 21) & 0x7F, (size >> 14) & 0x7F, (size >> 7) & 0x7F, size & 0x7F])
    frames = (b"TXXX" + (1).to_bytes(4, "big") + b"\x00\x00" + b"\x00") * 6000
    data = b"ID3\x03\x00\x00" + syncsafe + frames
    total = 300 * 1024 * 1024
    start, end = next_range("audio/mpeg", URL, FileBytes(total, ((0, data[:65536]),)))
    assert start == 10 + size and end - start + 1 == 8 * 1024
    card = file_card("audio/mpeg", URL, FileBytes(total, ((0, data[:65536]),)))
    assert card.medium == "audio" and card.incomplete and card.title == "hostile"
    assert id3.read_v2(data) == {}


REAL = sorted(p for d in ("pdf", "audio", "video", "images") for p in (FILES / d).iterdir()
              if p.suffix in (".pdf", ".mp3", ".m4a", ".ogg", ".opus", ".flac", ".wav", ".mp4",
                              ".webm", ".mkv", ".jpg", ".png", ".gif", ".webp", ".avif", ".svg"))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("path", REAL, ids=[p.name for p in REAL])
def test_truncated_headers_of_every_format(path):
    data = path.read_bytes()
    for cut in (0, 1, 3, 4, 8, 11, 12, 16, 27, 40, 64, 100, 300, 1000, 4096):
        cut_file = data[:cut]
        for total in (0, len(data)):
            read = read_as_stage(cut_file, "", URL, total=total)     # a file that ends early
            assert read.card.medium in ("file", "image", "audio", "video", "document")
            read_as_stage(data, "", URL, head=cut, total=total)      # a head cut short


MAGICS = [b"%PDF-1.4\n", b"\x00\x00\x00\x18ftypisom", b"\x1a\x45\xdf\xa3", b"OggS\x00\x02",
          b"fLaC", b"RIFF\x00\x00\x00\x00WAVE", b"ID3\x03\x00\x00", b"\xff\xfb", b"\x89PNG\r\n\x1a\n",
          b"GIF89a", b"\xff\xd8\xff", b"RIFF\x00\x00\x00\x00WEBP", b"<svg ", b""]


@pytest.mark.timeout(120)
def test_random_bytes_after_every_magic():
    rng = random.Random(41)
    for round_ in range(400):
        blob = MAGICS[round_ % len(MAGICS)] + rng.randbytes(rng.choice((10, 100, 2000, 65536)))
        total = rng.choice((0, len(blob), len(blob) * 3, 1 << 40))
        have = FileBytes(total, ((0, blob[:65536]),))
        declared = rng.choice(("", "application/octet-stream", "audio/mpeg", "video/mp4"))
        card = file_card(declared, URL, have)
        assert card.medium in ("file", "image", "audio", "video", "document")
        r = next_range(declared, URL, have)
        if r is not None:
            assert 0 <= r[0] <= r[1] and r[1] - r[0] + 1 <= MAX_RANGE
            assert not total or r[1] < total


def test_sparse_reads_are_capped_and_budgeted():
    f = sparse.Sparse([(0, b"abc"), (1 << 40, b"xyz")], 1 << 41, budget=20 * 1024 * 1024)
    assert f.read(3) == b"abc"
    assert len(f.read()) == sparse.READ_CAP
    f.seek(1 << 40)
    assert f.read(3) == b"xyz"
    with pytest.raises(OSError):
        for _ in range(10):
            f.read()
    assert sparse.slice_of([(5, b"hello")], 3, 9) == b"\x00\x00hell"
    assert sparse.merged([(4, b"efgh"), (0, b"abcd"), (6, b"XY")]) == [(0, b"abcdefXY")]


@pytest.mark.timeout(60)
def test_pdf_xref_streams_chained_share_one_inflate_budget(monkeypatch):
    """16 xref streams in the tail, each /Prev to the next, each deflating to 4 MiB with a PNG
    predictor: undone one byte at a time, that was 22 s of next_range. The sections share
    XREF_INFLATE: what is inflated and unpredicted in all stays within it."""
    import zlib
    bomb = zlib.compress(b"\x02" + b"\x00" * 4 * 1024 * 1024, 9)
    size = 100 * 1024 * 1024
    objects, at = [], size - 16 * (len(bomb) + 200)     # where the tail starts
    start = at
    for n in range(16):
        prev = b" /Prev %015d" % (at - len(objects[-1])) if objects else b""
        obj = (b"%d 0 obj\n<< /Type /XRef /W [1 2 1] /Size 100000 /Filter /FlateDecode "
               b"/DecodeParms << /Columns 4 /Predictor 12 >> /Length %d%s >>\nstream\n"
               % (n + 1, len(bomb), prev)) + bomb + b"\nendstream\nendobj\n"
        objects.append(obj)
        at += len(obj)
    body = b"".join(objects)
    last = at - len(objects[-1])
    tail = body + b"startxref\n%d\n%%%%EOF\n" % last
    total = start + len(tail)
    unpredicted = []
    original = pdfxref._unpredict
    monkeypatch.setattr(pdfxref, "_unpredict", lambda raw, columns: unpredicted.append(len(raw)) or original(raw, columns))
    inflated = []
    real = zlib.decompressobj

    class Counting:
        def __init__(self):
            self._d = real()

        def decompress(self, data, limit=0):
            out = self._d.decompress(data, limit)
            inflated.append(len(out))
            return out
    monkeypatch.setattr(pdfxref.zlib, "decompressobj", Counting)
    table, _ = pdfxref.sections([(0, b"%PDF-1.7\n"), (start, tail)], total)
    assert len(inflated) >= 1 and sum(inflated) <= pdfxref.XREF_INFLATE
    assert sum(unpredicted) <= pdfxref.XREF_INFLATE
