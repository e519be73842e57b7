"""What the commands print of what sites sent: no terminal control gets through, and the JSON
lines `get` and `resolve` print still parse to the same values."""
from __future__ import annotations

import json

from spiderduck.cli.client import json_line
from spiderduck.cli.text import cut, printable

HOSTILE = "Title \x1b[31mred\x9b2J\x7f\x00 é 日本"


def test_printable_escapes_c0_del_and_c1_and_keeps_text():
    assert printable(HOSTILE) == "Title \\x1b[31mred\\x9b2J\\x7f\\x00 é 日本"


def test_cut_says_how_long_a_long_value_was():
    assert cut("x" * 50, 10, "'") == "'xxxxxxxxxx'... (50 chars)"
    assert cut("\x9bshort", 10) == "\\x9bshort"


def test_json_lines_carry_no_raw_control_characters_and_parse_back():
    line = json_line({"title": HOSTILE, "url": "http://a.test/"})
    assert not any(0x7f <= ord(c) < 0xa0 or ord(c) < 0x20 for c in line)
    assert json.loads(line) == {"title": HOSTILE, "url": "http://a.test/"}
    assert "日本" in line            # not ASCII-escaped: names stay readable
