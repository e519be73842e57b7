"""Issue 43, a redirect an inline script states with a literal URL when the page loads
(src/spiderduck/extract/script_redirect.py): what a browser follows and a preview crawler does
not. A click handler, a comparison, a URL built at run time and the page's own URL are none."""
import pytest

from spiderduck.extract.script_redirect import MAX_CANDIDATES, MAX_SCRIPTS, SCAN_BYTES, script_redirect

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
    # scripts that assign location only inside a function are read, up to MAX_SCRIPTS of them
    one = "<script>function go() { location.href = 'https://y.test/'; }</script>"
    many = one * MAX_SCRIPTS
    assert script_redirect(many + "<script>location.href = 'https://x.test/'</script>", URL) == ""
    assert script_redirect(many[:-len(one)]
                           + "<script>location.href = 'https://x.test/'</script>", URL) == "https://x.test/"
    # scripts that never assign location are not even parsed, and count for nothing
    plain = "".join("<script>var a = location.pathname;</script>" for _ in range(MAX_SCRIPTS * 4))
    assert script_redirect(plain + "<script>location.href = 'https://x.test/'</script>", URL) == "https://x.test/"


def test_a_script_in_any_case_is_read_and_a_template_literal_is_not_a_url():
    assert script_redirect("<SCRIPT>location.href = 'https://x.test/'</SCRIPT>", URL) == "https://x.test/"
    assert script_redirect("<Script type='text/javascript'>location.replace('https://x.test/')</Script>",
                           URL) == "https://x.test/"
    assert script_redirect("<script>location.href = `https://${host}/x`;</script>", URL) == ""


def test_candidates_outside_scripts_are_bounded_too():
    """`location="..."` outside any script (text, attributes) is looked at MAX_CANDIDATES times at
    most: a redirect past that many is not read, however the page repeats them."""
    junk = "<p>location = 'a'</p>" * MAX_CANDIDATES
    late = "<script>location.href = 'https://x.test/'</script>"
    assert script_redirect(junk + late, URL) == ""
    assert script_redirect(junk[:-len("<p>location = 'a'</p>")] + late, URL) == "https://x.test/"


def test_the_crawls_extraction_reads_the_pages_head_and_the_claimed_url():
    """extract_page notes a script redirect within TRIGGER_BYTES (a reason to look again as a
    browser) and the URL the card claims, believed or not; the browser's look reads further."""
    from spiderduck.extract.page import extract_page
    from spiderduck.extract.script_redirect import TRIGGER_BYTES
    redirect = "<script>location.href = 'https://x.test/'</script>"
    claim = '<meta property="og:url" content="https://bank.test/login">'
    early = extract_page(f"<html><head>{claim}{redirect}</head><body>Hi</body></html>".encode(), URL,
                         "text/html", parser="selectolax", robots_token="spiderduck")
    assert early.script_redirect == "https://x.test/" and early.claimed_url == "https://bank.test/login"
    assert early.canonical_url != "https://bank.test/login"        # not believed as the canonical URL
    late = f"<html><head></head><body><!-- {'x' * TRIGGER_BYTES} -->{redirect}</body></html>"
    page = extract_page(late.encode(), URL, "text/html", parser="selectolax", robots_token="spiderduck")
    assert page.script_redirect == "" and script_redirect(late, URL) == "https://x.test/"
