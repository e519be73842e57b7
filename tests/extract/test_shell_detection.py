"""Shell detection (spiderduck.extract.shell, issue 31): hand-written shells are rendered, near-misses
are not, hostile markup is read in bounded time, and no page of the shared corpus is rendered
(they all state their title and card tags)."""
from __future__ import annotations

import json

import pytest

from spiderduck.extract.shell import (EXTERNAL_SCRIPT_WEIGHT, FEW_TEXT_CHARS, PLENTY_TEXT_CHARS,
                                     SCAN_BYTES, ShellSignals, needs_render, signals)
from conftest import shared_path

ARTICLE = " ".join(["The harbour town voted on Tuesday to rebuild its sea wall before winter storms."] * 30)
BUNDLE = "!function(e){var t={};function n(r){if(t[r])return t[r].exports}}([]);" * 400   # ~28 KB
OG = ('<meta property="og:title" content="Sea wall vote">'
      '<meta property="og:description" content="The town votes.">'
      '<meta property="og:image" content="https://news.test/wall.jpg">')

CRA = ('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>React App</title>'
       '<meta name="description" content="Web site created using create-react-app">'
       '<link rel="manifest" href="/manifest.json"></head><body>'
       '<noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div>'
       f'<script>{BUNDLE[:3000]}</script><script src="/static/js/main.4f3c1b.js"></script></body></html>')
NEXT_EMPTY = ('<html><head><title>Shop</title><script src="/_next/static/chunks/webpack.js" defer></script>'
              '<script src="/_next/static/chunks/main.js" defer></script></head><body>'
              '<div id="__next"></div><script id="__NEXT_DATA__" type="application/json">'
              '{"props":{"pageProps":{}},"page":"/p/[id]","query":{}}</script></body></html>')
ANGULAR = ('<html><head><title>Console</title><base href="/"></head><body><app-root></app-root>'
           '<script src="runtime.js" type="module"></script><script src="main.js" type="module"></script>'
           '</body></html>')
VUE = ('<html><head><meta name="viewport" content="width=device-width"></head><body>'
       '<div id="app"><div class="spinner">Loading…</div></div>'
       '<script src="/js/chunk-vendors.js"></script><script src="/js/app.js"></script></body></html>')
NOSCRIPT_ONLY = ('<html><head><title>Dashboard</title></head><body><div class="container"></div>'
                 '<noscript>You need to enable JavaScript to run this app.</noscript></body></html>')
GERMAN = ('<html lang="de"><head><title>Mein Konto</title></head><body><main></main>'
          '<noscript>Bitte aktivieren Sie JavaScript in Ihrem Browser, um diese Seite zu nutzen.</noscript>'
          '</body></html>')
SCRIPT_HEAVY = f'<html><body><span>Hi</span><script>{BUNDLE}</script><script src="/app.js"></script></body></html>'


@pytest.mark.parametrize("markup, expected", [
    (CRA, ("no card tags", "empty app root div#root", "noscript asks for JavaScript", "scripts outweigh text")),
    (NEXT_EMPTY, ("no card tags", "empty app root div#__next", "scripts outweigh text")),
    (ANGULAR, ("no card tags", "empty app root app-root", "scripts outweigh text")),
    (VUE, ("no title", "no card tags", "empty app root div#app", "scripts outweigh text")),
    (NOSCRIPT_ONLY, ("no card tags", "noscript asks for JavaScript")),
    (GERMAN, ("no card tags", "noscript asks for JavaScript")),
    (SCRIPT_HEAVY, ("no title", "no card tags", "scripts outweigh text")),
], ids=["create-react-app", "next-empty", "angular", "vue-loading", "noscript-only", "german-noscript",
        "script-heavy"])
def test_shells_are_rendered_for_their_reasons(markup, expected):
    s = signals(markup)
    assert needs_render(s), s
    # the last reason's numbers are read in test_the_reasons_read_as_words
    assert tuple(r.split(" (")[0] for r in s.reasons) == expected


def test_the_reasons_read_as_words():
    assert signals(SCRIPT_HEAVY).reasons[-1] == (
        f"scripts outweigh text ({len(BUNDLE) + EXTERNAL_SCRIPT_WEIGHT} bytes of script, 2 characters of text)")
    s = signals(CRA)
    assert (s.has_title, s.has_card_tags, s.app_root, s.noscript_asks_js, s.text_chars) == \
        (True, False, "div#root", True, 0)
    assert s.script_bytes == 3000 + EXTERNAL_SCRIPT_WEIGHT


@pytest.mark.parametrize("plea", [
    "Please enable JavaScript to view this page.",
    "This site requires JavaScript.",
    "JavaScript ist deaktiviert. Bitte einschalten.",
    "Veuillez activer JavaScript pour utiliser ce site.",
    "Necesitas habilitar JavaScript para usar esta aplicación.",
    "Você precisa ativar o JavaScript para usar este site.",
    "Per favore abilita JavaScript.",
    "このサイトを利用するにはJavaScriptを有効にしてください。",
])
def test_a_noscript_asking_for_javascript_in_several_languages(plea):
    assert signals(f"<body><noscript><p>{plea}</p></noscript></body>").noscript_asks_js


ARTICLE_PAGE = (f'<html><head><title>Sea wall vote</title>{OG}'
                + "".join(f'<script src="https://ads{i}.test/tag.js" async></script>' for i in range(25))
                + f'<script>{BUNDLE}</script></head><body><div id="root"><article><h1>Sea wall vote</h1>'
                f'<p>{ARTICLE}</p></article></div></body></html>')
TITLE_AND_TEXT = f'<html><head><title>Notes</title></head><body><p>{ARTICLE}</p><script src="/a.js"></script></body></html>'
PIXEL = ('<html><head><title>Bakery</title><script>!function(f,b,e,v){f.fbq=function(){}}(window)</script>'
         '<noscript><img height="1" width="1" style="display:none" '
         'src="https://www.facebook.com/tr?id=1&ev=PageView&noscript=1"></noscript></head><body>'
         '<noscript><iframe src="https://www.googletagmanager.com/ns.html?id=GTM-XXXX" height="0" width="0">'
         f'</iframe></noscript><h1>Our bread</h1><p>{ARTICLE}</p></body></html>')
NEXT_SSR = ('<html><head><title>Sea wall vote</title>'
            + "".join(f'<script src="/_next/static/chunks/{i}.js" defer></script>' for i in range(8))
            + f'</head><body><div id="__next"><main><h1>Sea wall vote</h1><p>{ARTICLE}</p></main></div>'
            '<script id="__NEXT_DATA__" type="application/json">' + '{"x":"' + "y" * 50_000 + '"}'
            '</script></body></html>')
EMPTY_BODY_WITH_CARD = (f'<html><head><title>Sea wall vote</title>{OG}<script src="/bundle.js"></script>'
                        '</head><body><div id="root"></div><noscript>Enable JavaScript.</noscript></body></html>')
DISQUS = (f'<html><head><title>My blog</title></head><body><article><p>{ARTICLE}</p></article>'
          '<div id="disqus_thread"></div><script>var disqus_config=function(){};</script>'
          '<noscript>Please enable JavaScript to view the comments powered by Disqus.</noscript></body></html>')
WIDGET_ROOT = (f'<html><head><title>Town news</title></head><body><p>{ARTICLE}</p><div id="app"></div>'
               '<script src="/widget.js"></script></body></html>')
SHORT_STATIC = ('<html><head><title>Contact</title><script src="https://www.googletagmanager.com/gtag/js"></script>'
                '</head><body><h1>Contact us</h1><p>Write to hello@bakery.test or call 01 23 45 67 89, '
                'Monday to Friday, nine to five. We answer within two days.</p></body></html>')


@pytest.mark.parametrize("markup", [ARTICLE_PAGE, TITLE_AND_TEXT, PIXEL, NEXT_SSR, EMPTY_BODY_WITH_CARD,
                                    DISQUS, WIDGET_ROOT, SHORT_STATIC],
                         ids=["article-many-scripts", "title-and-text-no-card", "pixel-noscript", "next-ssr",
                              "empty-body-title-and-og", "disqus-noscript", "widget-on-empty-app-root",
                              "short-static-page"])
def test_near_misses_are_not_rendered(markup):
    s = signals(markup)
    assert not needs_render(s), s


def test_what_the_near_misses_read():
    assert not signals(PIXEL).noscript_asks_js
    s = signals(NEXT_SSR)
    assert s.app_root == "" and s.text_chars >= PLENTY_TEXT_CHARS and s.script_bytes == 8 * EXTERNAL_SCRIPT_WEIGHT
    s = signals(TITLE_AND_TEXT)
    assert s.has_title and not s.has_card_tags and s.text_chars >= PLENTY_TEXT_CHARS
    s = signals(EMPTY_BODY_WITH_CARD)
    assert s.has_title and s.has_card_tags and s.app_root == "div#root" and s.noscript_asks_js
    assert signals(SHORT_STATIC).text_chars < FEW_TEXT_CHARS and not signals(SHORT_STATIC).scripts_dominate
    assert signals(WIDGET_ROOT).app_root == "div#app"


def test_card_tags_and_titles_that_do_not_count():
    assert not signals('<meta name="description" content="A site"><meta name="twitter:card" content="summary">'
                       '<meta property="og:title" content="  ">').has_card_tags
    assert signals('<meta name="twitter:image" content="https://x.test/a.png">').has_card_tags
    assert signals('<meta name="og:title" content="Under name=">').has_card_tags
    assert not signals("<body><svg><title>Icon</title></svg></body>").has_title
    assert not signals("<title>  </title>").has_title


def test_data_blocks_are_not_script_weight():
    s = signals('<script type="application/ld+json">{"@type":"Article"}</script>'
                '<script type="text/template"><p>x</p></script>'
                '<script type="text/javascript; charset=utf-8">abc</script>'
                '<script type="a1b2-text/javascript">de</script>')
    assert s.script_bytes == 5


@pytest.mark.parametrize("body", [
    b"",
    bytes(range(256)) * 4_000,
    b"<title>Caf\xe9</title><div id=root>\xff\xfe\xc3</div><script>\x80\x81</script>",
    "<title>Lone \ud800</title><div id=app></div>",
    b"<div>" * 1_000_000 + b"text",
    b"<script>" + b"a<b;" * 1_000_000,
    b"<noscript>" * 50_000 + b"enable javascript",
    b"<title>x</title>" * 100_000 + b'<div id="root">' * 100_000,
], ids=["empty", "garbage", "invalid-utf8", "lone-surrogate", "5mb-nested-divs", "huge-script",
        "nested-noscripts", "many-titles-and-roots"])
def test_hostile_markup_is_read_in_bounded_work(body):
    s = signals(body)
    assert isinstance(s, ShellSignals) and isinstance(needs_render(s), bool)


def test_a_long_page_is_read_from_its_prefix_and_says_so():
    s = signals(b"<div>" * 1_000_000 + b"text")
    assert s.truncated and "only a prefix read" in s.reasons and not s.scripts_dominate
    assert not signals(b"<body>" + b" " * SCAN_BYTES + b"<script src=a.js></script>").scripts_dominate
    assert signals("<body><script src=a.js></script>").scripts_dominate
    assert needs_render(signals(b"")) is False


def test_no_page_of_the_shared_corpus_is_rendered():
    cases_path = shared_path("corpus", "metascraper", "cases.json")
    cases = json.loads(cases_path.read_text("utf-8"))
    rendered = [(case["name"], s.reasons) for case in cases
                if needs_render(s := signals((cases_path.parent / case["html"]).read_bytes()))]
    assert len(cases) >= 50 and rendered == []
