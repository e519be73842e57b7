"""A declared charset the bytes contradict (issue 29): the bytes decide, and a declaration they
agree with is kept. Pages written here in one encoding and labelled (header or meta) another."""
import pytest

from spiderduck.extract import charset
from spiderduck.extract.page import extract_page
from support.extraction import EXTRACTION

RUSSIAN_TITLE = "Погода в Москве на неделю"
RUSSIAN = ("Сегодня в столице ожидается облачная погода с прояснениями, без существенных осадков. "
           "Температура воздуха днём составит около пяти градусов тепла, ночью до минус двух.")
JAPANESE_TITLE = "東京の天気予報"
JAPANESE = ("今日の東京は晴れのち曇りでしょう。午後からは北風が強まり、夜には雨が降る所がありそうです。"
            "最高気温は二十度くらいの見込みです。")
FRENCH_TITLE = "Café crème à côté de l’Opéra"
FRENCH = ("Où déjeuner près de l'Opéra ? Les meilleures brasseries de la rive droite, élues par nos "
          "lecteurs : œufs mimosa, crème brûlée et façade rénovée, à deux pas des Grands Boulevards.")


def _page(title: str, text: str, meta: str = "") -> str:
    return (f'<!doctype html><html><head>{meta}<title>{title}</title>'
            f'<meta name="description" content="{text[:60]}"><script>var n = 1;</script></head>'
            f'<body><h1>{title}</h1><p>{text}</p></body></html>')


def _meta(label: str) -> str:
    return f'<meta http-equiv="Content-Type" content="text/html; charset={label}">'


CONTRADICTED = [
    # (what the bytes are, the meta's label, the header's label, the WHATWG name they really are)
    ("cp1251", "utf-8", None, "windows-1251"),
    ("cp1251", None, "iso-8859-1", "windows-1251"),
    ("cp1251", None, "utf-8", "windows-1251"),
    ("koi8-r", "windows-1251", None, "koi8-r"),
    ("cp1251", "koi8-r", None, "windows-1251"),
    ("koi8-r", None, "iso-8859-1", "koi8-r"),
    ("shift_jis", "euc-jp", None, "shift_jis"),
    ("shift_jis", "utf-8", None, "shift_jis"),
    ("euc-jp", "shift_jis", None, "euc-jp"),
]


@pytest.mark.parametrize("written, meta, header, actual", CONTRADICTED,
                         ids=[f"{w}-as-{m or h}" for w, m, h, _ in CONTRADICTED])
def test_a_declaration_the_bytes_contradict_gives_way(written, meta, header, actual):
    japanese = written in ("shift_jis", "euc-jp")
    title, text = (JAPANESE_TITLE, JAPANESE) if japanese else (RUSSIAN_TITLE, RUSSIAN)
    body = _page(title, text, _meta(meta) if meta else "").encode(written)
    content_type = f"text/html; charset={header}" if header else "text/html"
    assert charset.sniff(body, content_type) == actual
    page = extract_page(body, "http://a.test/", content_type, **EXTRACTION)
    assert (page.title, page.charset) == (title, actual)      # the record says what was used
    assert page.description == text[:60].strip()


AGREED = [
    ("cp1251", "windows-1251", RUSSIAN_TITLE, RUSSIAN),
    ("koi8-r", "koi8-r", RUSSIAN_TITLE, RUSSIAN),
    ("shift_jis", "shift_jis", JAPANESE_TITLE, JAPANESE),
    ("euc-jp", "euc-jp", JAPANESE_TITLE, JAPANESE),
    # These bytes are also strictly valid windows-1250, windows-1251, koi8-r, iso-8859-2...
    ("cp1252", "windows-1252", FRENCH_TITLE, FRENCH),
]


@pytest.mark.parametrize("written, label, title, text", AGREED, ids=[a[1] for a in AGREED])
@pytest.mark.parametrize("where", ["meta", "header"])
def test_a_declaration_the_bytes_agree_with_is_kept(written, label, title, text, where):
    body = _page(title, text, _meta(label) if where == "meta" else "").encode(written)
    content_type = f"text/html; charset={label}" if where == "header" else None
    page = extract_page(body, "http://a.test/", content_type, **EXTRACTION)
    assert (page.title, page.charset) == (title, label)


def test_the_bytes_of_the_french_page_are_valid_in_other_encodings_too():
    body = _page(FRENCH_TITLE, FRENCH).encode("cp1252")
    for other in ("windows-1250", "windows-1251", "koi8-r", "iso-8859-2"):
        assert charset.decode_as(body, other) != body.decode("cp1252")
        body.decode(charset.codec(other))                      # no error: only plausibility tells
    assert charset.sniff(body, "text/html; charset=iso-8859-1") == "windows-1252"


def test_undeclared_legacy_bytes_are_detected():
    body = _page(RUSSIAN_TITLE, RUSSIAN).encode("koi8-r")
    assert extract_page(body, "http://a.test/", **EXTRACTION).title == RUSSIAN_TITLE
    french = _page(FRENCH_TITLE, FRENCH).encode("cp1252")
    assert charset.sniff(french) == "windows-1252"             # the default, which the bytes fit


def test_ascii_and_utf8_pages_never_reach_the_detector(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the detector ran")
    monkeypatch.setattr(charset.charset_normalizer, "from_bytes", refuse)
    utf8 = _page(RUSSIAN_TITLE, RUSSIAN).encode("utf-8")
    assert charset.sniff(utf8, "text/html; charset=utf-8") == "utf-8"
    assert charset.sniff(utf8, "text/html; charset=windows-1251") == "utf-8"   # stale header
    assert charset.sniff(_page("Plain", "ascii only").encode(), "text/html; charset=koi8-r") == "koi8-r"
    assert charset.sniff(b" " * (charset.DETECT_BYTES + 10) + "é".encode("utf-8")) == "utf-8"


def test_the_detector_sees_a_bounded_text(monkeypatch):
    seen = []
    real = charset.charset_normalizer.from_bytes
    monkeypatch.setattr(charset.charset_normalizer, "from_bytes",
                        lambda data, **kw: seen.append(len(data)) or real(data, **kw))
    line = f"<p>{RUSSIAN}</p>\n<script>{'x = 1; ' * 200}</script>\n"
    body = _page(RUSSIAN_TITLE, RUSSIAN, _meta("utf-8")) + line * 2000       # ~3 MB
    assert charset.sniff(body.encode("cp1251")) == "windows-1251"
    assert seen and max(seen) <= charset.DETECT_TEXT_BYTES


def test_a_page_with_an_ascii_head_is_judged_on_its_first_non_ascii_text():
    """Past an ASCII head, the bytes judged are DETECT_BYTES from the first non-ASCII byte, not
    the whole page (up to 2 MiB decoded for each such page): a stray byte further on does not
    turn a UTF-8 page into windows-1252, and the first non-ASCII text is found wherever it starts."""
    window = charset.DETECT_BYTES
    late = b" " * (window + 10) + "é".encode("utf-8") * 50 + b" " * window + b"\xe9 stray"
    assert charset.sniff(late) == "utf-8"
    for start in (window, window + 1, 3 * window + 7):
        assert charset.sniff(b"a" * start + FRENCH.encode("utf-8") + b"z" * window) == "utf-8"
        assert charset.sniff(b"a" * start + FRENCH.encode("cp1252") + b"z" * window) == "windows-1252"
    # the line the first non-ASCII byte stands in is read from its start: "Zaz" belongs to the word
    polish = b" " * (window + 4_000) + "<p>Zazółć gęślą jaźń</p>\n".encode("cp1250") + b"y" * 100
    assert charset.sniff(polish) == "windows-1250"
