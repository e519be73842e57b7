"""The environment of every process a benchmark starts: this tree's code, not the installed one.

`.venv` installs the package editable from the clone that made it, so a benchmark run from
another worktree (an A/B of two commits) would otherwise start the service from the first
clone's src/ whatever tree the benchmark's own file is in. PYTHONPATH puts this tree's src/
first, and the tree itself for the bench's own modules.
"""
from __future__ import annotations

import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join((str(ROOT / "src"), str(ROOT))), **extra}


def use_this_tree() -> None:
    """This process imports spiderduck from this tree's src/ (call before importing it)."""
    import sys
    src = str(ROOT / "src")
    if src not in sys.path[:1]:
        sys.path.insert(0, src)
