"""Image cards from real files (tests/files/images, image-size's, MIT): the size from the head,
no range asked; and the format told by its magic bytes whatever the declared type."""
from __future__ import annotations

import pytest
from file_reads import FILES, read_as_stage, source

from spiderduck.core.record import Image
from spiderduck.extract.files import sniff

IMAGES = FILES / "images"
KINDS = {"jpg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
         "avif": "image/avif", "svg": "image/svg+xml"}
NAMES = sorted(p.name for p in IMAGES.iterdir() if p.suffix[1:] in KINDS)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("declared", ["", "application/octet-stream"])
def test_image_card_from_the_head(name, declared):
    data = (IMAGES / name).read_bytes()
    url = "https://example.com/img/" + name
    read = read_as_stage(data, declared, url)
    kind = KINDS[name.rsplit(".", 1)[1]]
    assert read.card.medium == "image"
    assert read.card.image == Image(url, 123, 456, kind)
    assert read.ranges == [] and source(read.card, "title") == "derived"


@pytest.mark.parametrize("head, declared, expected", [
    (b"%PDF-1.7\n", "application/octet-stream", sniff.PDF),
    (b"\x00\x00\x00\x18ftypmp42", "", sniff.MP4),
    (b"\x00\x00\x00\x18ftypavif", "", sniff.IMAGE),
    (b"\x1a\x45\xdf\xa3\x01", "binary/octet-stream", sniff.EBML),
    (b"OggS\x00\x02", "", sniff.OGG),
    (b"fLaC\x00", "", sniff.FLAC),
    (b"RIFF\x00\x00\x00\x00WAVE", "", sniff.WAV),
    (b"RIFF\x00\x00\x00\x00WEBP", "", sniff.IMAGE),
    (b"ID3\x04\x00", "application/octet-stream", sniff.MP3),
    (b"\xff\xfb\x90\x00", "", sniff.MP3),
    (b"\x89PNG\r\n\x1a\n", "text/plain", sniff.IMAGE),
    (b"nothing known", "audio/mpeg", sniff.MP3),
    (b"nothing known", "application/octet-stream", ""),
    (b"", "", ""),
    (b'<?xml version="1.0"?><svg width="1">', "image/svg+xml", sniff.IMAGE),
    (b'<svg width="1">', "", sniff.IMAGE),
    (b'{"icon": "<svg width=1>"}', "application/json", ""),        # quoting an SVG is no image
    (b"use <svg> for icons", "text/plain", ""),
])
def test_sniffing_by_magic_then_declared_type(head, declared, expected):
    assert sniff.kind(declared, head) == expected


def test_an_unknown_file_is_named_from_its_url():
    from spiderduck.extract.files import FileBytes, file_card, next_range
    have = FileBytes(10_000_000, ((0, b"\x00\x01binary" * 100),))
    assert next_range("application/octet-stream", "https://e.com/a/Annual%20Report.bin", have) is None
    card = file_card("application/octet-stream", "https://e.com/a/Annual%20Report.bin", have)
    assert card.medium == "file" and card.title == "Annual Report" and source(card, "title") == "derived"
