"""Encoding choice in WHATWG order: BOM, header, <meta> prescan, default."""
import codecs

from spiderduck.extract import charset

RUSSIAN = "Привет, мир"
JAPANESE = "日本語のページ"


def _page(meta: str, body: str) -> str:
    return f"<!doctype html><html><head>{meta}<title>{body}</title></head><body><p>{body}</p></body></html>"


def test_utf8_bom_wins_over_header_and_meta():
    body = codecs.BOM_UTF8 + _page('<meta charset="windows-1251">', RUSSIAN).encode("utf-8")
    text, name = charset.decode(body, "text/html; charset=iso-8859-1")
    assert name == "utf-8"
    assert RUSSIAN in text and not text.startswith("\ufeff")


def test_utf16_bom():
    body = codecs.BOM_UTF16_LE + _page("", RUSSIAN).encode("utf-16-le")
    text, name = charset.decode(body)
    assert name == "utf-16le" and RUSSIAN in text


def test_header_charset():
    body = _page("", RUSSIAN).encode("koi8-r")
    text, name = charset.decode(body, 'text/html; charset="KOI8-R"')
    assert name == "koi8-r" and RUSSIAN in text


def test_meta_charset_only_windows_1251():
    body = _page('<meta charset="windows-1251">', RUSSIAN).encode("cp1251")
    text, name = charset.decode(body, "text/html")
    assert name == "windows-1251" and RUSSIAN in text


def test_meta_http_equiv_shift_jis():
    meta = '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
    text, name = charset.decode(_page(meta, JAPANESE).encode("shift_jis"))
    assert name == "shift_jis" and JAPANESE in text


def test_header_wins_over_lying_meta():
    body = _page('<meta charset="shift_jis">', RUSSIAN).encode("cp1251")
    text, name = charset.decode(body, "text/html; charset=windows-1251")
    assert name == "windows-1251" and RUSSIAN in text


def test_meta_naming_legacy_encoding_over_valid_utf8_is_overruled():
    body = _page('<meta charset="windows-1251">', RUSSIAN).encode("utf-8")
    text, name = charset.decode(body)
    assert name == "utf-8" and RUSSIAN in text


def test_meta_beyond_1024_bytes_is_not_seen():
    body = ("<html><head>" + "<!-- padding -->" * 100 + '<meta charset="koi8-r">').encode() + RUSSIAN.encode("cp1251")
    assert charset.prescan(body) is None
    # Undeclared, and not UTF-8: the windows-1252 default is checked against the bytes, which
    # read as windows-1251 (never as the unseen meta's koi8-r).
    assert charset.sniff(body) == "windows-1251"


def test_meta_inside_comment_is_ignored():
    body = b'<!-- <meta charset="koi8-r"> --><meta charset="utf-8">'
    assert charset.prescan(body) == "utf-8"


def test_invalid_labels_are_ignored():
    body = _page('<meta charset="no-such-charset">', "café").encode("utf-8")
    text, name = charset.decode(body, "text/html; charset=bogus")
    assert name == "utf-8" and "café" in text


def test_replacement_encodings_are_treated_as_unknown():
    assert charset.lookup("iso-2022-kr") is None
    assert charset.lookup("hz-gb-2312") is None
    assert charset.lookup("x-user-defined") is None
    assert charset.lookup('"utf-8"') == "utf-8"                # quoted, as in a header


def test_decoders_are_the_whatwg_supersets():
    """GBK text decodes with gb18030 (its four-byte sequences included), Shift_JIS with cp932
    (NEC and IBM extensions), Big5 with HKSCS, EUC-KR with cp949."""
    assert charset.decode_as(b"\x81\x30\x81\x30", "gbk") == "\x80"       # gb18030-only
    assert charset.decode_as("\u2460".encode("cp932"), "shift_jis") == "\u2460"  # NEC circled 1
    assert charset.decode_as("\u5803".encode("big5hkscs"), "big5") == "\u5803"
    assert charset.decode_as("\uac02".encode("cp949"), "euc-kr") == "\uac02"   # UHC-only
    assert charset.codec("no-such-encoding") == "utf-8"


def test_whatwg_label_table():
    assert charset.lookup("ISO-8859-1") == "windows-1252"
    assert charset.lookup(" latin1 ") == "windows-1252"
    assert charset.lookup("ascii") == "windows-1252"
    assert charset.lookup("x-sjis") == "shift_jis"
    assert charset.lookup("gb2312") == "gbk"
    assert charset.lookup("utf8") == "utf-8"


def test_default_is_utf8_else_windows_1252():
    assert charset.decode("café".encode("utf-8")) == ("café", "utf-8")
    assert charset.decode("café crème".encode("cp1252")) == ("café crème", "windows-1252")


def test_utf8_cut_inside_a_character_is_still_utf8():
    body = "<p>ok é".encode("utf-8")[:-1]
    assert charset.sniff(body) == "utf-8"


def test_meta_declaring_utf16_means_utf8():
    assert charset.prescan(b'<meta charset="utf-16">') == "utf-8"


def test_never_raises_on_garbage():
    for body in (b"", b"\xff\xfe\x00", bytes(range(256)), b"<meta charset=", b"<meta content='charset="):
        text, name = charset.decode(body, "text/html; charset=")
        assert isinstance(text, str) and name


def test_detection_reads_a_bounded_prefix_when_it_holds_non_ascii_text():
    padding = b" " * charset.DETECT_BYTES
    # Non-ASCII UTF-8 in the prefix decides, whatever lies beyond it; so does invalid UTF-8.
    assert charset.sniff("<p>café".encode("utf-8") + padding + b"\xe9") == "utf-8"
    assert charset.sniff("<p>café".encode("cp1252") + padding + "é".encode("utf-8")) == "windows-1252"
    # A prefix cut inside a character is still UTF-8.
    cut = b"x" * (charset.DETECT_BYTES - 1) + "é".encode("utf-8") + padding
    assert charset.sniff(cut) == "utf-8"
    # An ASCII prefix proves nothing: the whole body is read.
    assert charset.sniff(padding + "café</p>".encode("cp1252")) == "windows-1252"
    assert charset.sniff(padding + "café".encode("utf-8")) == "utf-8"
