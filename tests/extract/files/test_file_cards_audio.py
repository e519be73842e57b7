"""Audio cards from real files (tests/files/audio): tags and duration, read the way the File
Reader stage reads them (the head, then at most two ranges)."""
from __future__ import annotations

import pytest
from file_reads import FILES, HEAD, read_as_stage, source

from spiderduck.core.record import Audio

AUDIO = FILES / "audio"
URL = "https://example.com/music/"

# file, declared type, title, author, (content type, duration ms), title source, ranges asked
CASES = [
    ("dhowden_sample.id3v24.mp3", "audio/mpeg", "Test Title", "Test Artist", ("audio/mpeg", 3448), "id3:TIT2", 0),
    ("dhowden_sample.id3v11.mp3", "application/octet-stream", "Test Title", "Test Artist", ("audio/mpeg", 3448), "id3v1:title", 0),
    ("tinytag_xmp_data.mp3", "audio/mpeg", "some title", "some artist", ("audio/mpeg", 130), "id3:TIT2", 0),
    ("tinytag_vbr_xing_header.mp3", "audio/mpeg", "tinytag vbr xing header", "", ("audio/mpeg", 3944), "derived", 1),
    ("dhowden_sample.m4a", "audio/mp4", "Test Title", "Test Artist", ("audio/mp4", 3414), "mp4:\u00a9nam", 0),
    ("tinytag_xmp_data.m4a", "application/octet-stream", "some title", "some artist", ("audio/mp4", 524), "mp4:\u00a9nam", 0),
    ("dhowden_sample.ogg", "audio/ogg", "Test Title", "Test Artist", ("audio/ogg", 3398), "vorbis:TITLE", 0),
    ("tinytag_ogg_with_image.ogg", "audio/ogg", "Sample Title", "Sample Artist", ("audio/ogg", 100), "vorbis:TITLE", 0),
    ("tinytag_8khz_5s.opus", "audio/ogg", "tinytag 8khz 5s", "", ("audio/ogg", 5000), "derived", 0),
    ("dhowden_sample.flac", "audio/flac", "Test Title", "Test Artist", ("audio/flac", 3399), "vorbis:TITLE", 0),
    ("tinytag_test-tagged.wav", "audio/wav", "thetitle", "theartisst", ("audio/wav", 1000), "riff:INAM", 1),
]


@pytest.mark.parametrize("name, declared, title, author, audio, title_source, ranges", CASES,
                         ids=[c[0] for c in CASES])
def test_audio_card_from_ranges(name, declared, title, author, audio, title_source, ranges):
    data = (AUDIO / name).read_bytes()
    read = read_as_stage(data, declared, URL + name)
    card = read.card
    assert card.medium == "audio"
    assert (card.title, card.author) == (title, author)
    assert card.audio == Audio(URL + name, *audio)
    assert source(card, "title") == title_source
    assert len(read.ranges) == ranges
    if len(data) > HEAD:
        assert read.bytes_read < len(data)
    assert not card.incomplete


def test_vbr_mp3_takes_the_id3v1_tail_only():
    """No ID3v2 title: the last 128 bytes (an ID3v1 tag's place) are the one range."""
    data = (AUDIO / "tinytag_vbr_xing_header.mp3").read_bytes()
    read = read_as_stage(data, "audio/mpeg", URL + "x.mp3")
    assert read.ranges == [(len(data) - 128, len(data) - 1)] and read.bytes_read == HEAD + 128


def test_wav_tags_after_the_audio_need_the_range_after_the_data_chunk():
    data = (AUDIO / "tinytag_test-tagged.wav").read_bytes()
    read = read_as_stage(data, "audio/wav", URL + "t.wav")
    assert read.ranges == [(176444, len(data) - 1)]                 # LIST/INFO, then id3
    head_only = read_as_stage(data, "audio/wav", URL + "t.wav", ranges=0).card
    assert head_only.audio.duration_ms == 1000 and head_only.title == "t"
    assert head_only.incomplete


def test_ogg_duration_from_the_last_page_of_a_long_file():
    """An Ogg file larger than the head: the duration is the last page's granule, in the tail."""
    data = (AUDIO / "dhowden_sample.ogg").read_bytes()
    pages = data.split(b"OggS")
    assert len(pages) > 3
    # Stretch: repeat the middle pages (same serial; granules stay those of the original) so the
    # last page lies 300 KB in; the card still reads its granule from the tail.
    middle = b"OggS" + b"OggS".join(pages[3:-1])
    stretched = b"OggS".join(pages[:3]) + middle * 20 + b"OggS" + pages[-1]
    read = read_as_stage(stretched, "audio/ogg", URL + "long.ogg")
    assert len(stretched) > 300_000
    assert read.card.audio.duration_ms == 3398 and read.card.title == "Test Title"
    assert read.ranges == [(len(stretched) - 64 * 1024, len(stretched) - 1)]
    head_only = read_as_stage(stretched, "audio/ogg", URL + "long.ogg", ranges=0).card
    assert head_only.title == "Test Title" and head_only.audio.duration_ms == 0 and head_only.incomplete


def test_cbr_mp3_duration_needs_the_total_size():
    """A CBR MP3 without a Xing header: duration = bytes x 8 / bitrate, so unknown without the
    file's size (0: unknown), and then the card says it is incomplete."""
    data = (AUDIO / "dhowden_sample.id3v24.mp3").read_bytes()
    card = read_as_stage(data[:40000], "audio/mpeg", URL + "a.mp3", total=0).card
    assert card.title == "Test Title" and card.audio.duration_ms == 0 and card.incomplete


def test_mp3_whose_id3v2_tag_pushes_the_first_frame_past_the_head():
    """A 200 KB picture in the tag: the first frame comes after the head; one range at it."""
    data = (AUDIO / "dhowden_sample.id3v24.mp3").read_bytes()
    size = int.from_bytes(bytes(data[6:10]), "big")
    size = (size >> 24 & 0x7F) << 21 | (size >> 16 & 0x7F) << 14 | (size >> 8 & 0x7F) << 7 | size & 0x7F
    pad = 200_000
    new = size + pad
    syncsafe = bytes([(new >> 21) & 0x7F, (new >> 14) & 0x7F, (new >> 7) & 0x7F, new & 0x7F])
    big = data[:6] + syncsafe + data[10:10 + size] + b"\x00" * pad + data[10 + size:]
    read = read_as_stage(big, "audio/mpeg", URL + "big.mp3")
    assert read.ranges == [(10 + new, 10 + new + 8 * 1024 - 1)]
    assert read.card.title == "Test Title" and read.card.audio.duration_ms == 3448
    assert read.bytes_read == HEAD + 8 * 1024
