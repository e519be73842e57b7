"""embed_html: one rebuilt iframe from an allowed host, or nothing (src/spiderduck/extract/embeds.py).

Every fixture here is written for these tests."""
import json
import time

import pytest

from spiderduck.extract import embeds
from spiderduck.extract.embeds import from_oembed_html, from_player, host_allowed
from spiderduck.extract.oembed import parse
from support.embed_cases import HOSTS, TAIL, YT, frame


# --- the players of the major sites ------------------------------------------------------------

def test_a_video_sites_oembed_iframe_is_rebuilt_attribute_by_attribute():
    html = ('<iframe width="480" height="270" src="https://www.youtube.com/embed/Abc123_-x?feature=oembed" '
            'frameborder="0" allow="accelerometer; autoplay; clipboard-write; encrypted-media; gyroscope; '
            'picture-in-picture; web-share" referrerpolicy="strict-origin-when-cross-origin" allowfullscreen '
            'title="My cat &amp; the piano"></iframe>')
    assert from_oembed_html(html, HOSTS) == (
        '<iframe src="https://www.youtube.com/embed/Abc123_-x?feature=oembed" width="480" height="270" '
        'title="My cat &amp; the piano" frameborder="0" allow="accelerometer; autoplay; '
        'encrypted-media; gyroscope; picture-in-picture; web-share" allowfullscreen '
        'referrerpolicy="strict-origin-when-cross-origin" ' + TAIL)


def test_a_second_player_host_with_query_ampersands():
    html = ('<iframe src="https://player.vimeo.com/video/12345?h=0f0f0f&amp;app_id=999" width="640" '
            'height="360" frameborder="0" allow="autoplay; fullscreen; picture-in-picture; clipboard-write" '
            'title="Sunrise over the bay"></iframe>')
    assert from_oembed_html(html, HOSTS) == (
        '<iframe src="https://player.vimeo.com/video/12345?h=0f0f0f&amp;app_id=999" width="640" height="360" '
        'title="Sunrise over the bay" frameborder="0" allow="autoplay; fullscreen; picture-in-picture" '
        + TAIL)


def test_an_audio_player_with_a_percentage_width_and_an_inline_style():
    html = ('<iframe style="border-radius: 12px" width="100%" height="152" title="Spotify Embed: Some Song" '
            'frameborder="0" allowfullscreen allow="autoplay; clipboard-write; encrypted-media; fullscreen; '
            'picture-in-picture" loading="lazy" '
            'src="https://open.spotify.com/embed/track/4xYz?utm_source=oembed"></iframe>')
    assert from_oembed_html(html, HOSTS) == (
        '<iframe src="https://open.spotify.com/embed/track/4xYz?utm_source=oembed" width="100%" height="152" '
        'title="Spotify Embed: Some Song" frameborder="0" allow="autoplay; encrypted-media; '
        'fullscreen; picture-in-picture" allowfullscreen ' + TAIL)


def test_the_oembed_document_keeps_its_html_for_the_embed():
    doc = {"type": "video", "version": "1.0", "title": "Clip", "html": frame(YT, 'width="320" height="180"')}
    got = parse(json.dumps(doc).encode(), "https://www.youtube.com/oembed")
    assert from_oembed_html(got.html, HOSTS) == \
        f'<iframe src="{YT}" width="320" height="180" ' + TAIL


# --- what is no embed --------------------------------------------------------------------------

def test_a_blockquote_and_a_script_hold_no_iframe():
    html = ('<blockquote class="post-embed"><p lang="en">Hello, world</p>&mdash; Someone (@someone) '
            '<a href="https://social.test/someone/status/1">May 1, 2024</a></blockquote>\n'
            '<script async src="https://platform.twitter.com/widgets.js" charset="utf-8"></script>')
    assert from_oembed_html(html, HOSTS) == ""
    assert from_oembed_html('<script src="https://www.youtube.com/x.js"></script>', HOSTS) == ""
    assert from_oembed_html("just text", HOSTS) == ""
    assert from_oembed_html("", HOSTS) == ""


def test_an_iframe_from_another_host_gives_nothing():
    assert from_oembed_html(frame("https://player.evil.test/embed/1"), HOSTS) == ""
    assert from_oembed_html(frame("https://youtube.com/embed/1"), HOSTS) == ""     # not listed


def test_only_the_first_iframe_counts():
    allowed, other = frame(YT), frame("https://evil.test/x")
    assert from_oembed_html(other + allowed, HOSTS) == ""
    assert from_oembed_html(allowed + other, HOSTS) == f'<iframe src="{YT}" ' + TAIL


def test_scripts_and_other_elements_around_the_iframe_are_left_out():
    html = (f'<div class="wrap"><script>alert(1)</script><iframe src="{YT}" width="560" height="315">'
            '<script>alert(2)</script></iframe><img src=x onerror=alert(3)><style>*{}</style></div>'
            '<script src="https://www.youtube.com/iframe_api"></script>')
    assert from_oembed_html(html, HOSTS) == \
        f'<iframe src="{YT}" width="560" height="315" ' + TAIL


def test_handlers_srcdoc_style_and_unknown_attributes_are_dropped():
    html = (f'<iframe src="{YT}" onload="alert(1)" onerror="alert(2)" ONMOUSEOVER="alert(3)" '
            'srcdoc="<script>alert(4)</script>" style="position:fixed;inset:0" '
            'sandbox="allow-top-navigation" '
            'name="x" id="y" class="z" csp="none" data-x="1" credentialless></iframe>')
    assert from_oembed_html(html, HOSTS) == f'<iframe src="{YT}" ' + TAIL


def test_an_iframe_without_src_is_none_even_with_srcdoc():
    assert from_oembed_html('<iframe srcdoc="<script>alert(1)</script>"></iframe>', HOSTS) == ""
    assert from_oembed_html('<iframe></iframe>', HOSTS) == ""


# --- the src ------------------------------------------------------------------------------------

@pytest.mark.parametrize("src", [
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "java&#x09;script:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "vbscript:msgbox(1)",
    "about:blank",
    "blob:https://www.youtube.com/1234",
    "file:///etc/passwd",
    "ftp://www.youtube.com/embed/x",
    "http://www.youtube.com/embed/x",          # not upgraded: refused
    "/embed/x",                                 # relative: no base
    "embed/x",
    "www.youtube.com/embed/x",
])
def test_only_absolute_https_urls(src):
    assert from_oembed_html(frame(src.replace('"', "&quot;")), HOSTS) == ""
    assert from_player(src, 640, 360, HOSTS) == ""


@pytest.mark.parametrize("src", [
    "https://www.youtube.com.evil.test/embed/x",
    "https://evil.test/?www.youtube.com",
    "https://evil.test/#www.youtube.com",
    "https://evil.test/www.youtube.com",
    "https://www.youtube.com@evil.test/embed/x",
    "https://www.youtube.com:443@evil.test/embed/x",
    "https://user@www.youtube.com/embed/x",                # user info even on the right host
    "https://user:pass@www.youtube.com/embed/x",
    "https://www.youtube.com:8443/embed/x",                # another port
    "https://evil.test\\@www.youtube.com/embed/x",
    "https://www.youtube.com\\.evil.test/",
    "https:\\\\www.youtube.com/embed/x",
    "https://www.youtube.com%2eevil.test/embed/x",
    "https://www.youtube.com./embed/x",                    # trailing dot
    "https://www.youtube.com../embed/x",
    "https://www.yоutube.com/embed/x",                     # Cyrillic о: xn--
    "https://www.youtubе.com/embed/x",                     # Cyrillic е
    "https://evilyoutube.com/embed/x",
    "https://wwwyoutube.com/embed/x",
    "https://www.youtube.com\x00.evil.test/",
    "https://www.you tube.com/embed/x",
    "https://www.youtube.com/embed/x\n<script>",
    "https://www.youtube.com/emb\ted/x",
    "https://[::1]/embed/x",
    "https://127.0.0.1/embed/x",
    "https://0x7f.1/embed/x",
    "https://",
    "https:///www.evil.test",
])
def test_host_confusion_gives_nothing(src):
    assert from_oembed_html(f'<iframe src="{src}"></iframe>', HOSTS) == ""
    assert from_player(src, 640, 360, HOSTS) == ""


def test_same_host_spellings_are_accepted_and_written_the_one_way():
    for src in ("HTTPS://WWW.YOUTUBE.COM/embed/Abc123_-x", "//www.youtube.com/embed/Abc123_-x",
                "  https://www.youtube.com/embed/Abc123_-x\n", "https://www.youtube.com:443/embed/Abc123_-x",
                "https://www.youtube.com/embed/./Abc123_-x",
                "https://www\uff0eyoutube\uff0ecom/embed/Abc123_-x",     # IDNA maps these as browsers do:
                "https://www.you\u200btube.com/embed/Abc123_-x"):         # what is written is what is loaded
        assert from_oembed_html(frame(src), HOSTS) == f'<iframe src="{YT}" ' + TAIL, src


def test_the_src_written_is_escaped_ascii_that_parses_to_the_checked_host():
    got = from_oembed_html(frame('https://www.youtube.com/embed/ü&quot;x?a=1&amp;b=<2>#t'), HOSTS)
    assert got == '<iframe src="https://www.youtube.com/embed/%C3%BC%22x?a=1&amp;b=%3C2%3E#t" ' + TAIL
    assert got.isascii()


def test_a_punycode_host_is_compared_as_it_is():
    assert from_oembed_html(frame("https://bücher.test/embed/1"), ["xn--bcher-kva.test"]) == \
        '<iframe src="https://xn--bcher-kva.test/embed/1" ' + TAIL
    assert from_oembed_html(frame("https://bücher.test/embed/1"), ["bucher.test", "bücher.test"]) == ""


def test_a_long_src_is_refused():
    assert from_oembed_html(frame(YT + "?q=" + "a" * embeds.SRC_MAX), HOSTS) == ""


# --- host globs ---------------------------------------------------------------------------------

def test_host_globs():
    allow = ["*.example.com", "player.test"]
    assert host_allowed("a.example.com", allow)
    assert host_allowed("a.b.example.com", allow)
    assert host_allowed("A.Example.COM", allow)
    assert not host_allowed("example.com", allow)                   # the bare domain: not unless listed
    assert host_allowed("example.com", allow + ["example.com"])
    assert not host_allowed("badexample.com", allow)
    assert not host_allowed("a.example.com.evil.test", allow)
    assert not host_allowed("example.com.evil.test", allow)
    assert not host_allowed(".example.com", allow)
    assert not host_allowed("a..example.com", allow)
    assert not host_allowed("a.example.com.", allow)
    assert host_allowed("player.test", allow)
    assert not host_allowed("www.player.test", allow)               # exact names are exact
    assert not host_allowed("layer.test", allow)
    assert not host_allowed("", allow)
    assert not host_allowed("[::1]", ["[::1]"])
    assert not host_allowed("a.example.com", [])
    assert not host_allowed("a.example.com", [None, 5, "*."])       # junk entries match nothing


def test_globs_through_the_iframe():
    allow = ["*.player.test"]
    assert from_oembed_html(frame("https://eu.cdn.player.test/v/1"), allow) == \
        '<iframe src="https://eu.cdn.player.test/v/1" ' + TAIL
    assert from_oembed_html(frame("https://player.test/v/1"), allow) == ""


def test_an_empty_allow_list_allows_nothing():
    assert from_oembed_html(frame(YT), []) == ""
    assert from_oembed_html(frame(YT), ()) == ""
    assert from_player(YT, 640, 360, []) == ""


# --- attributes ---------------------------------------------------------------------------------

def test_attribute_values_are_escaped():
    html = f'<iframe src="{YT}" title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; \'x\'"></iframe>'
    got = from_oembed_html(html, HOSTS)
    assert got == (f'<iframe src="{YT}" title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; '
                   '&#x27;x&#x27;" ' + TAIL)
    assert "<script" not in got
    raw = f"<iframe src={YT} title='\"><script>alert(1)</script>'></iframe>"
    assert "<script" not in from_oembed_html(raw, HOSTS)
    assert from_player(YT, 0, 0, HOSTS, title='"><script>alert(1)</script>').count("<") == 2


def test_titles_are_folded_and_bounded():
    got = from_oembed_html(frame(YT, f'title="  a\tb\x01c\n{"d" * 500}"'), HOSTS)
    assert f'title="a b c {"d" * (embeds.TITLE_MAX - 6)}"' in got


@pytest.mark.parametrize("stated, written", [
    ("560", "560"), ("560px", "560"), (" 560.7 ", "560"), ("99999", "4096"), ("9" * 40, ""),
    ("100%", "100%"), ("250%", "100%"), ("0", ""), ("-5", ""), ("auto", ""), ("1e3", ""),
    ("560 onload=alert(1)", ""), ("", ""),
])
def test_sizes_are_integers_or_percentages_clamped(stated, written):
    got = from_oembed_html(frame(YT, f'width="{stated}"'), HOSTS)
    width = f' width="{written}"' if written else ""
    assert got == f'<iframe src="{YT}"{width} ' + TAIL


def test_allow_keeps_known_features_only_without_origins():
    html = frame(YT, 'allow="autoplay *; camera; microphone; geolocation; Fullscreen \'self\'; '
                     'payment; clipboard-read; autoplay; x&quot;y; usb; encrypted-media https://evil.test"')
    assert 'allow="autoplay; fullscreen; encrypted-media"' in from_oembed_html(html, HOSTS)
    assert "allow=" not in from_oembed_html(frame(YT, 'allow="camera; microphone"'), HOSTS)


def test_frameborder_and_referrerpolicy_are_kept_only_when_known():
    got = from_oembed_html(frame(YT, 'frameborder="7" referrerpolicy="unsafe-url"'), HOSTS)
    assert got == f'<iframe src="{YT}" ' + TAIL
    got = from_oembed_html(frame(YT, 'frameborder=" 0 " referrerpolicy="No-Referrer"'), HOSTS)
    assert got == f'<iframe src="{YT}" frameborder="0" referrerpolicy="no-referrer" ' + TAIL


def test_the_output_is_one_iframe_element():
    html = (f'<iframe src="{YT}" width="1" height="2" title="t" frameborder="0" allow="autoplay" '
            'allowfullscreen referrerpolicy="origin"></iframe>')
    got = from_oembed_html(html, HOSTS)
    assert got.startswith("<iframe ") and got.endswith("></iframe>")
    assert got.count("<") == 2 and got.count(">") == 2


# --- bounds -------------------------------------------------------------------------------------

def test_huge_html_is_ignored():
    padding = "<p>" + "x" * embeds.HTML_MAX + "</p>"
    assert from_oembed_html(frame(YT) + padding, HOSTS) == ""
    assert from_oembed_html("x" * 10_000_000, HOSTS) == ""
    many_tags = "<br>" * (embeds.TAGS_MAX + 1)
    assert from_oembed_html(frame(YT) + many_tags, HOSTS) == ""


@pytest.mark.parametrize("tag", ["div", "ul", "table", "b", "svg", "blockquote"])
def test_deeply_nested_html_is_quick_and_does_not_raise(tag):
    start = time.monotonic()
    deepest = f"<{tag}>" * embeds.TAGS_MAX + frame(YT)
    assert from_oembed_html(deepest, HOSTS) == ""                  # over TAGS_MAX with the iframe
    nested = f"<{tag}>" * (embeds.TAGS_MAX - 10) + frame(YT)
    from_oembed_html(nested, HOSTS)
    assert from_oembed_html(f"<{tag}>" * (embeds.HTML_MAX // (len(tag) + 2)), HOSTS) == ""
    assert time.monotonic() - start < 1.0


def test_nested_within_bounds_is_found():
    nested = "<div>" * 400 + frame(YT) + "</div>" * 400
    assert from_oembed_html(nested, HOSTS) == f'<iframe src="{YT}" ' + TAIL


def test_odd_input_gives_nothing():
    for html in (None, 5, b"<iframe src='https://www.youtube.com/embed/x'>", "<", "<iframe", "\x00" * 100,
                 "<iframe src=\"https://www.youtube.com/embed/x\"", "<!-- <iframe src=x> -->"):
        got = from_oembed_html(html, HOSTS)
        assert got == "" or got.startswith('<iframe src="https://www.youtube.com/embed/x"')


def test_an_iframe_in_a_comment_or_script_text_is_no_iframe():
    assert from_oembed_html(f"<!-- {frame(YT)} -->", HOSTS) == ""
    assert from_oembed_html(f"<script>document.write('{frame(YT)}')</script>", HOSTS) == ""
    assert from_oembed_html(f'<div title=\'{frame(YT)}\'></div>', HOSTS) == ""
