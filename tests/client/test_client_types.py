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
