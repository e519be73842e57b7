"""embed_html from a player URL (og:video, twitter:player) and from an oEmbed document: one
rebuilt iframe from an allowed host, or nothing (src/spiderduck/extract/embeds.py). The iframe's own rules are in
test_embeds.py.

Every fixture here is written for these tests."""
import json

import pytest

from spiderduck.core import urls
from spiderduck.core.record import Video
from spiderduck.extract import embeds
from spiderduck.extract.embeds import first_player, from_oembed_html, from_player, host_allowed, may_embed
from spiderduck.extract.oembed import parse
from support.embed_cases import HOSTS, TAIL, YT, frame


# --- player URLs (og:video, twitter:player) ----------------------------------------------------

def test_a_player_url_becomes_an_iframe():
    assert from_player(YT, 1280, 720, HOSTS, content_type="text/html", title='Clip "one"') == (
        f'<iframe src="{YT}" width="1280" height="720" title="Clip &quot;one&quot;" frameborder="0" '
        'allow="autoplay; encrypted-media; fullscreen; picture-in-picture" allowfullscreen '
        'referrerpolicy="strict-origin-when-cross-origin" ' + TAIL)


def test_a_player_of_unknown_size_states_none_and_huge_sizes_are_clamped():
    got = from_player("https://player.vimeo.com/video/7", 0, 0, HOSTS)
    assert got.startswith('<iframe src="https://player.vimeo.com/video/7" frameborder="0" ')
    got = from_player("https://player.vimeo.com/video/7", 10**9, -3, HOSTS)
    assert got.startswith('<iframe src="https://player.vimeo.com/video/7" width="4096" frameborder="0" ')


@pytest.mark.parametrize("url, content_type", [
    ("https://www.youtube.com/media/clip.mp4", ""),
    ("https://www.youtube.com/media/clip.MP4?sig=1", ""),
    ("https://www.youtube.com/live/index.m3u8", ""),
    ("https://www.youtube.com/a/sound.mp3#t=3", ""),
    ("https://www.youtube.com/v/Abc123", "application/x-shockwave-flash"),
    ("https://www.youtube.com/file", "video/mp4"),
    ("https://www.youtube.com/file", "audio/mpeg; codecs=x"),
])
def test_media_files_are_not_players(url, content_type):
    assert from_player(url, 640, 360, HOSTS, content_type=content_type) == ""


def test_a_player_from_another_host_gives_nothing():
    assert from_player("https://videos.evil.test/embed/1", 640, 360, HOSTS) == ""
    assert from_player("https://www.youtube.com.evil.test/embed/1", 640, 360, HOSTS) == ""


def test_every_accepted_src_reparses_to_an_allowed_host():
    for src in ("https://www.youtube.com/embed/a?b=c&d=%22#x", "https://open.spotify.com/embed/episode/Z",
                "https://w.soundcloud.com/player/?url=https%3A//api.soundcloud.com/tracks/1"):
        got = from_player(src, 1, 1, HOSTS)
        href = got.split('"')[1].replace("&amp;", "&")
        assert host_allowed(urls.parse(href).hostname, HOSTS)


def test_the_first_player_that_gives_an_iframe():
    players = [Video("https://cdn.video.test/clip.mp4", 640, 360, "video/mp4"),
               Video("https://www.youtube.com/embed/Abc123_-x?autoplay=1", 640, 360, "video/mp4"),
               Video("https://player.evil.test/e/1", 640, 360, "text/html"),
               Video(YT, 640, 360, "text/html"),
               Video("https://player.vimeo.com/video/7", 640, 360, "text/html")]
    assert first_player(players, HOSTS, title="T") == from_player(YT, 640, 360, HOSTS, title="T")
    assert first_player(players[:3], HOSTS) == ""
    assert first_player(players, []) == ""
    assert first_player((), HOSTS) == ""


def test_an_oembed_document_is_worth_reading_for_its_iframe_only_under_an_allowed_domain():
    assert may_embed("https://www.youtube.com/oembed?url=x&format=json", HOSTS)
    assert may_embed("https://vimeo.com/api/oembed.json?url=x", HOSTS)             # player.vimeo.com
    assert may_embed("https://cdn.player.test/oembed", ["*.player.test"])
    assert not may_embed("https://blog.example.test/wp-json/oembed/1.0/embed?url=x", HOSTS)
    assert not may_embed("https://www.youtube.com.evil.test/oembed", HOSTS)
    assert not may_embed("https://www.youtube.com/oembed", [])
    assert not may_embed("not a url", HOSTS)


def test_a_size_padded_with_white_space_is_read_in_linear_time():
    # A quadratic pattern took minutes here (and the oEmbed html is parsed on the event loop).
    pad = " " * 300_000
    assert embeds._size("1" + pad + "x") == ""
    assert embeds._size(pad + "640" + pad) == "640"


def test_an_iframe_longer_than_the_records_limit_is_none():
    src = YT + "?q=" + "&" * (embeds.SRC_MAX - len(YT) - 10)       # each & is written &amp;
    assert from_oembed_html(frame(src), HOSTS) == ""


def test_code_playgrounds_are_not_allowed_by_default():
    assert not embeds.host_allowed("codepen.io", HOSTS)
