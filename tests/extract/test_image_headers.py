"""The image probe on real files (tests/files/images, from image-size's test images, MIT): every
format's size and type from the whole file and from its first 512 bytes, which is all a related
fetch's probe or a file read by ranges may have; SVG sizes from the root element; hostile
headers bounded."""
from __future__ import annotations

import pathlib
import time

import pytest

from spiderduck.extract import image_headers
from spiderduck.extract.images import ImageInfo, probe

FILES = pathlib.Path(__file__).resolve().parent.parent / "files" / "images"
KINDS = {".jpg": "image/jpeg", ".png": "image/png", ".gif": "image/gif", ".webp": "image/webp",
         ".avif": "image/avif", ".svg": "image/svg+xml"}
REAL = sorted(p.name for p in FILES.iterdir() if p.suffix in KINDS)


def test_every_format_is_here():
    assert {pathlib.Path(name).suffix for name in REAL} == set(KINDS)
    assert (FILES / "LICENSE").read_text().startswith("The MIT License")


@pytest.mark.parametrize("name", REAL)
def test_a_real_file_gives_its_size_and_type_from_its_first_512_bytes(name):
    data = (FILES / name).read_bytes()
    want = ImageInfo(123, 456, KINDS[pathlib.Path(name).suffix])
    assert probe(data) == want
    assert probe(data[:512]) == want


@pytest.mark.parametrize("svg, size", [
    (b'<svg width="10" height="20"/>', (10, 20)),
    (b'<?xml version="1.0"?><!-- <svg width="1" height="1"> --><!DOCTYPE svg>'
     b"<svg xmlns='http://www.w3.org/2000/svg' width='2.5cm' height='1in'>", (94, 96)),
    (b'<svg width="100%" height="100%" viewBox="0,0,300,150">', (300, 150)),
    (b'<svg width="600" viewBox="0 0 300 150">', (600, 300)),          # the box's aspect
    (b'<svg height="75pt" viewBox="0 0 300 150">', (200, 100)),
    (b'\xef\xbb\xbf<SVG WIDTH="12" HEIGHT="34">', (12, 34)),
])
def test_an_svg_gives_the_size_its_root_states(svg, size):
    assert probe(svg) == ImageInfo(*size, "image/svg+xml")


@pytest.mark.parametrize("svg", [
    b"<svg/>", b'<svg width="100%" height="100%">', b'<svg width="1em" height="2em">',
    b'<svg width="&w;" height="&h;">', b'<svg viewBox="0 0 0 10">', b'<svg viewBox="a b c d">',
    b'<svg width="9e99" height="10">', b'<svg width="-5" height="10">',
    b"<html><body>no image</body></html>", b'<!-- <svg width="1" height="1">',
])
def test_an_svg_that_states_no_usable_size_has_none(svg):
    assert probe(svg) is None


def test_an_svg_root_past_the_prefix_is_not_looked_for():
    padding = b"<!--" + b"x" * image_headers.SVG_PREFIX + b"-->"
    assert probe(padding + b'<svg width="10" height="10">') is None


def test_an_entity_bomb_is_never_expanded():
    bomb = (b'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "' + b"a" * 1000 + b'">'
            + b"".join(b'<!ENTITY %c "&%c;&%c;&%c;&%c;">' % (c, c - 1, c - 1, c - 1, c - 1)
                       for c in range(ord("b"), ord("k")))
            + b']><svg width="&j;" height="5" viewBox="0 0 10 5">&j;</svg>')
    started = time.process_time()
    assert probe(bomb) == ImageInfo(10, 5, "image/svg+xml")
    assert time.process_time() - started < 0.5


@pytest.mark.parametrize("data", [
    b"GIF89a\x00\x00\x00\x00",                                   # zero size
    b"RIFF\xff\xff\xff\xffWEBPVP8X" + b"\xff" * 30,              # 16,777,216 a side
    b"RIFF\x00\x00\x00\x00WEBPVP8 " + b"\x00" * 20,              # no key frame start code
    b"RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00\x00",         # cut short
    b"\x00\x00\x00\x18ftypavif" + b"\x00" * 8 + b"\xff\xff\xff\xffmeta",   # a box past the data
    b"\x00\x00\x00\x10ftypavif\x00\x00\x00\x00" + b"\x00\x00\x00\x01meta" + b"\x00" * 8,
    b"\x00\x00\x00\x10ftypqt  \x00\x00\x00\x00",                 # a video, not an image
])
def test_a_hostile_or_truncated_header_gives_nothing(data):
    assert probe(data) is None


def test_endless_boxes_are_walked_a_bounded_number_of_times():
    boxes = b"\x00\x00\x00\x08free" * 1_000_000                  # 8 MB of empty boxes
    data = b"\x00\x00\x00\x10ftypavif\x00\x00\x00\x00" + boxes
    started = time.process_time()
    assert probe(data) is None
    assert time.process_time() - started < 0.5


@pytest.mark.parametrize("data", [
    b'<svg width="100" viewBox="0 0 1e-320 100">',               # a side overflowing to inf
    b'<svg height="100" viewBox="0 0 100 1e-320">',
    b"GIF89a\xff\xff\xff\xff",                                    # 65,535 a side: past the area
    b'<svg width="65536" height="65536">',
])
def test_an_absurd_size_is_no_size(data):
    assert probe(data) is None


@pytest.mark.parametrize("svg", [
    b"<svg " + b"a" * (image_headers.SVG_PREFIX - 6) + b">",      # one long attribute name
    b"<svg " + b"a:" * (image_headers.SVG_PREFIX // 2 - 4) + b">",
    b'<svg a="' + b"b" * (image_headers.SVG_PREFIX - 9),          # a value never closed
    b"<svg" * (image_headers.SVG_PREFIX // 4),                    # roots never closed
    b"<SVG " + b"w=1 " * (image_headers.SVG_PREFIX // 4 - 2) + b">",
])
def test_a_hostile_svg_prefix_is_read_in_linear_time(svg):
    started = time.process_time()
    assert probe(svg) is None
    assert time.process_time() - started < 0.2
