"""The client is typed: mypy checks it and its examples with every function annotated, and an
integrator's mistake is caught through its types (src/spiderduck/client/py.typed)."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]')")

ROOT = pathlib.Path(__file__).resolve().parents[2]
MYPY = [sys.executable, "-m", "mypy", "--no-incremental", "--ignore-missing-imports", "--explicit-package-bases",
        "--follow-imports=silent", "--python-version", "3.11"]


def mypy(*args: str) -> subprocess.CompletedProcess:
    # src/ is where spiderduck (a namespace package) lives; mypy does not follow editable installs
    return subprocess.run([*MYPY, *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MYPYPATH": str(ROOT / "src")})


def test_the_client_and_its_examples_are_fully_annotated_and_check():
    done = mypy("--disallow-untyped-defs", "--disallow-incomplete-defs", "--check-untyped-defs",
                "src/spiderduck/client", "examples")
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_integrators_type_mistake_is_caught(tmp_path):
    use = tmp_path / "use_spiderduck.py"
    use.write_text(
        "from spiderduck.client import Client, Lookup\n"
        "def titles(client: Client) -> list[str]:\n"
        "    found: list[Lookup] = client.get(['https://example.com/'])\n"
        "    return [lookup.found for lookup in found]\n"          # bool, not str
        "def wait(client: Client) -> None:\n"
        "    client.resolve('https://example.com/', timeout='soon')\n")   # not a number
    done = mypy(str(use))
    assert done.returncode == 1, done.stdout
    lines = done.stdout.lower()            # mypy versions spell list[bool] as List[bool] or not
    assert re.search(r"use_spiderduck.py:4: error: list comprehension has incompatible type list\[bool\]", lines)
    assert re.search(r'use_spiderduck.py:6: error: argument "timeout" to "resolve" of "client"', lines)


def test_the_card_fields_are_typed(tmp_path):
    """Issue 41's fields reach an integrator typed: a label's name is text, a file's size and an
    audio's length are ints, `images` a list of Image; using them wrongly is caught."""
    use = tmp_path / "use_card.py"
    use.write_text(
        "from spiderduck.client import Lookup\n"
        "def card(lookup: Lookup) -> str:\n"
        "    assert lookup.record is not None\n"
        "    r = lookup.record\n"
        "    sizes: list[int] = [r.file_size, r.audio.duration_ms, r.video.duration_ms, r.document.pages,\n"
        "                        r.word_count, r.reading_time_s, len(r.images), r.logo.width]\n"
        "    texts: list[str] = [r.medium, r.theme_color, r.theme_color_dark, r.card_style, r.offer.price,\n"
        "                        r.offer.currency, r.offer.availability, r.redirects[0].kind, r.images[0].url]\n"
        "    return ', '.join(f'{l.name}: {l.value}' for l in r.labels) + str(sizes) + ''.join(texts)\n"
        "def wrong(lookup: Lookup) -> str:\n"
        "    assert lookup.record is not None\n"
        "    return lookup.record.file_size\n")                 # an int, not str
    done = mypy(str(use))
    assert done.returncode == 1, done.stdout
    assert re.search(r"use_card.py:12: error: incompatible return value type \(got \"int\", expected \"str\"\)",
                     done.stdout.lower()), done.stdout
    assert done.stdout.lower().count("error:") == 1, done.stdout
