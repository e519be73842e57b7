"""No hand-written module over 400 lines (issue 28): a module that long holds more than one
subject, and splits along them (as src/spiderduck/core/settings.py left src/spiderduck/core/config.py)."""
from __future__ import annotations

from conftest import ROOT

LIMIT = 400
NOT_OURS = (".venv", ".git", "build", "spiderduck.egg-info")


def _lines(path) -> int:
    return path.read_bytes().count(b"\n")


def _too_long(root=ROOT) -> dict[str, int]:
    found = {}
    for path in root.rglob("*.py"):
        name = path.relative_to(root).as_posix()
        if name.startswith(NOT_OURS) or name.endswith(("_pb2.py", "_pb2_grpc.py", "_pb2.pyi")):
            continue
        if _lines(path) > LIMIT:
            found[name] = _lines(path)
    return found


def test_no_hand_written_module_is_over_400_lines():
    assert _too_long() == {}, f"split these by subject (at most {LIMIT} lines each)"


def test_a_long_module_is_found_and_generated_stubs_are_not(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * 401)
    (tmp_path / "pkg" / "ok.py").write_text("x = 1\n" * 400)
    (tmp_path / "pkg" / "big_pb2.py").write_text("x = 1\n" * 900)
    assert _too_long(tmp_path) == {"pkg/long.py": 401}
