"""Issue 43, a redirect an inline script states with a literal URL when the page loads
(src/spiderduck/extract/script_redirect.py): what a browser follows and a preview crawler does
not. A click handler, a comparison, a URL built at run time and the page's own URL are none."""
import pytest

from spiderduck.extract.script_redirect import MAX_SCRIPTS, SCAN_BYTES, script_redirect

URL = "https://news.test/story"


def page(script: str, attrs: str = "") -> str:
    return f"<!doctype html><html><head><title>x</title></head><body><p>Hi</p><script{attrs}>{script}</script></body></html>"


@pytest.mark.parametrize("script, expected", [
    ('location.href = "https://elsewhere.test/";', "https://elsewhere.test/"),
    ("window.location='https://elsewhere.test/a'", "https://elsewhere.test/a"),
    ("document.location.href = '/next';", "https://news.test/next"),
    ("top.location.replace('https://elsewhere.test/r');", "https://elsewhere.test/r"),
    ("window.location.assign(`https://elsewhere.test/t`)", "https://elsewhere.test/t"),
    ("var a = 1; /* { */ location.href = 'https://elsewhere.test/c'", "https://elsewhere.test/c"),
    ('var s = "{"; location = "https://elsewhere.test/s"', "https://elsewhere.test/s"),
])
def test_a_redirect_the_page_states_when_it_loads(script, expected):
    assert script_redirect(page(script), URL) == expected
    assert script_redirect(page(script).encode(), URL) == expected


@pytest.mark.parametrize("script, attrs", [
    ("document.querySelector('a').addEventListener('click', function () { location.href = 'https://x.test/'; });", ""),
    ("function go() { location.replace('https://x.test/'); }", ""),
    ("if (location.href == 'https://x.test/') { console.log(1); }", ""),
    ("location.href = base + '/x';", ""),                                    # built at run time
    ("location.href = 'javascript:void(0)';", ""),
    ("location.href = 'https://news.test/story';", ""),                      # the page itself
    ('{"location": "https://x.test/"}', ' type="application/ld+json"'),
    ("", ' src="/app.js"'),
])
def test_what_is_no_redirect_on_load(script, attrs):
    assert script_redirect(page(script, attrs), URL) == ""


def test_only_a_bounded_part_of_the_page_is_read():
    late = page("location.href = 'https://x.test/';")
    assert script_redirect("<!-- " + "x" * SCAN_BYTES + " -->" + late, URL) == ""
    many = "".join("<script>var a = 1;</script>" for _ in range(MAX_SCRIPTS))
    assert script_redirect(many + "<script>location.href = 'https://x.test/'</script>", URL) == ""
    assert script_redirect(many[:-len("<script>var a = 1;</script>")]
                           + "<script>location.href = 'https://x.test/'</script>", URL) == "https://x.test/"
