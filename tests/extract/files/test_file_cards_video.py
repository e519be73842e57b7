"""Video cards from real files (tests/files/video): MP4 from its moov box at either end, WebM and
Matroska from the Segment's Info and Tracks, read the way the File Reader stage reads them."""
from __future__ import annotations

import pytest
from file_reads import FILES, HEAD, read_as_stage, source

from spiderduck.core.record import Video

VIDEO = FILES / "video"
URL = "https://example.com/v/"

# file, declared type, title, (width, height, content type, duration ms), ranges asked
CASES = [
    ("mp4ff_prog_8s_faststart.mp4", "video/mp4", "mp4ff prog 8s faststart", (640, 360, "video/mp4", 8000), 0),
    ("gomp4_sample_moov_at_end.mp4", "application/octet-stream", "gomp4 sample moov at end", (320, 180, "video/mp4", 1024), 0),
    ("mp4ff_h264_moov_at_end.mp4", "video/mp4", "mp4ff h264 moov at end", (1920, 1080, "video/mp4", 1000), 0),
    ("nodeebml_test.webm", "video/webm", "nodeebml test", (320, 240, "video/webm", 6042), 0),
    ("ebmlgo_sample_noduration.webm", "video/webm", "ebmlgo sample noduration", (320, 240, "video/webm", 0), 0),
    ("mkvparse_example.mkv", "application/octet-stream", "Awesome Movie", (640, 480, "video/x-matroska", 40), 0),
]


@pytest.mark.parametrize("name, declared, title, video, ranges", CASES, ids=[c[0] for c in CASES])
def test_video_card_from_ranges(name, declared, title, video, ranges):
    data = (VIDEO / name).read_bytes()
    read = read_as_stage(data, declared, URL + name)
    card = read.card
    assert card.medium == "video" and card.title == title
    assert card.video == Video(URL + name, *video)
    assert len(read.ranges) == ranges
    if len(data) > HEAD:
        assert read.bytes_read == HEAD                       # the moov, Info and Tracks are in the head
    assert not card.incomplete


def test_matroska_title_source():
    data = (VIDEO / "mkvparse_example.mkv").read_bytes()
    card = read_as_stage(data, "video/x-matroska", URL + "e.mkv").card
    assert source(card, "title") == "matroska:Title" and source(card, "video") == "matroska:Tracks"


def _moov_after_a_large_mdat(pad: int) -> tuple[bytes, int]:
    """gomp4's sample (ftyp, free, mdat at 40, moov at 6442) with `pad` bytes more of mdat."""
    data = (VIDEO / "gomp4_sample_moov_at_end.mp4").read_bytes()
    mdat = data.index(b"mdat") - 4
    size = int.from_bytes(data[mdat:mdat + 4], "big")
    grown = data[:mdat] + (size + pad).to_bytes(4, "big") + data[mdat + 4:mdat + size] + b"\x00" * pad
    moov = len(grown)
    return grown + data[mdat + size:], moov


def test_moov_at_the_end_after_a_large_mdat_is_one_exact_range():
    data, moov = _moov_after_a_large_mdat(3 * 1024 * 1024)
    read = read_as_stage(data, "video/mp4", URL + "late.mp4")
    assert read.card.video == Video(URL + "late.mp4", 320, 180, "video/mp4", 1024)
    assert read.ranges == [(moov, min(len(data), moov + 1024 * 1024) - 1)]
    assert read.bytes_read < HEAD + 8 * 1024 and not read.card.incomplete


def test_moov_at_the_end_from_the_head_alone():
    """An origin that ignores Range: the head holds no moov; the card is a video named from its URL."""
    data, _ = _moov_after_a_large_mdat(3 * 1024 * 1024)
    card = read_as_stage(data, "video/mp4", URL + "late.mp4", ranges=0).card
    assert card.medium == "video" and card.video is None and card.title == "late" and card.incomplete


def test_moov_at_the_end_with_an_unknown_size_asks_nothing():
    data, _ = _moov_after_a_large_mdat(3 * 1024 * 1024)
    read = read_as_stage(data, "video/mp4", URL + "late.mp4", total=0)
    assert read.ranges == [] and read.card.incomplete


def test_an_mp4_declared_audio_without_a_video_track_is_audio():
    data = (FILES / "audio" / "dhowden_sample.m4a").read_bytes()
    card = read_as_stage(data, "video/mp4", URL + "s.mp4").card
    assert card.medium == "audio" and card.video is None and card.audio.duration_ms == 3414


def _element(ident: int, payload: bytes) -> bytes:
    size = len(payload) | (1 << 56)                       # an 8-byte size
    return ident.to_bytes((ident.bit_length() + 7) // 8, "big") + size.to_bytes(8, "big") + payload


def test_webm_whose_info_and_tracks_lie_past_the_head_are_found_by_the_seek_head():
    """Info and Tracks after 200 KB of Void: the SeekHead places them; one range reads them."""
    info = _element(0x1549A966, _element(0x2AD7B1, (1_000_000).to_bytes(3, "big"))
                    + _element(0x4489, b"\x40\xc3\x88\x00\x00\x00\x00\x00")      # 10000.0 ticks
                    + _element(0x7BA9, b"Far Title"))
    video = _element(0xE0, _element(0xB0, (1280).to_bytes(2, "big")) + _element(0xBA, (720).to_bytes(2, "big")))
    tracks = _element(0x1654AE6B, _element(0xAE, _element(0x83, b"\x01") + video))

    def seek_head(info_at: int, tracks_at: int) -> bytes:
        def seek(ident: int, at: int) -> bytes:
            return _element(0x4DBB, _element(0x53AB, ident.to_bytes(4, "big")) + _element(0x53AC, at.to_bytes(8, "big")))
        return _element(0x114D9B74, seek(0x1549A966, info_at) + seek(0x1654AE6B, tracks_at))

    void = _element(0xEC, b"\x00" * 200_000)
    placeholder = seek_head(0, 0)
    info_at = len(placeholder) + len(void)
    body = seek_head(info_at, info_at + len(info)) + void + info + tracks
    header = _element(0x1A45DFA3, _element(0x4282, b"webm"))
    data = header + b"\x18\x53\x80\x67\x01\xff\xff\xff\xff\xff\xff\xff" + body      # unknown size
    read = read_as_stage(data, "video/webm", URL + "far.webm")
    assert read.card.video == Video(URL + "far.webm", 1280, 720, "video/webm", 10000)
    assert read.card.title == "Far Title" and not read.card.incomplete
    assert len(read.ranges) == 1 and read.bytes_read < HEAD + 70 * 1024
    head_only = read_as_stage(data, "video/webm", URL + "far.webm", ranges=0).card
    assert head_only.video is None and head_only.title == "far" and head_only.incomplete
