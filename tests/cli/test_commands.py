"""The command table of src/spiderduck/cli/main.py: each command is defined by the module it names, and running
one loads only that module (a probe's `spiderduck health` never loads the pipeline)."""
from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from spiderduck.cli import main


@pytest.mark.parametrize("module", main.MODULES)
def test_each_module_defines_exactly_the_commands_the_table_gives_it(module):
    top = argparse.ArgumentParser()
    sub = top.add_subparsers(dest="command")
    importlib.import_module(f"spiderduck.cli.{module}").add_commands(sub, argparse.ArgumentParser(add_help=False))
    assert set(sub.choices) == {c for c, m in main.COMMANDS.items() if m == module}


def test_health_loads_neither_the_pipeline_nor_nats():
    code = ("import sys; from spiderduck.cli.main import main; "
            "rc = main(['health', '--address', '127.0.0.1:1', '--timeout', '0.5']); "
            "print(rc, sorted(m for m in ('spiderduck.scheduler.worker', 'spiderduck.scheduler.pipeline', 'nats', 'spiderduck.cli.client') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["1", "[]"], out.stderr


def test_help_lists_every_command():
    out = subprocess.run([sys.executable, "-m", "spiderduck.cli.main", "--help"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0
    for command in main.COMMANDS:
        assert command in out.stdout
