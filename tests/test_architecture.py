"""The whiteboard's `never` lines hold in the code: no module of one part imports a module of a
part the whiteboard (../shared/architecture.json) says it must never reach.

Every import counts, the ones inside functions too (a lazy import is still a dependency). A part
is the folders its `is` names; a module imported is found as a file of this tree, or not at all
(third-party code is on no part)."""
from __future__ import annotations

import ast
import json
import pathlib

from conftest import ROOT, shared_path

# Nevers still broken (issue 28), each as (importing file, file imported). Remove a line when its
# import goes; never add one: a new import across a never is the bug this test is for.
KNOWN: set[tuple[str, str]] = set()


def _whiteboard() -> dict:
    return json.loads(shared_path("architecture.json").read_text())


def _part_of(path: str, parts: dict[str, list[str]]) -> str | None:
    for name, folders in parts.items():
        if any(path.startswith(folder) for folder in folders):
            return name
    return None


def _file_of(module: str) -> str | None:
    """The file of this tree that `module` (dotted) names, or None."""
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate.relative_to(ROOT).as_posix()
    return None


def _imported_files(path: str, source: str | None = None) -> set[str]:
    """The files of this tree that the module at `path` (its text: `source`, else the file's)
    imports, anywhere in it."""
    tree = ast.parse((ROOT / path).read_text() if source is None else source, filename=path)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                folders = path.split("/")[:-1]
                package = folders[: len(folders) - node.level + 1]
                base = ".".join(package + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # `from a import b` names the module a.b when there is one, else a name in a.
            names = [f"{base}.{alias.name}" if _file_of(f"{base}.{alias.name}") else base
                     for alias in node.names]
        else:
            continue
        for name in names:
            file = _file_of(name)
            if file is not None:
                found.add(file)
    return found


def _crossings() -> list[tuple[str, str, str, str, str]]:
    """(source part, target part, importing file, imported file, why) for every import that
    crosses a never."""
    board = _whiteboard()
    parts = {name: part["is"] for name, part in board["parts"].items()}
    nevers = {(a, b): why for a, b, why in board["never"]}
    sources = sorted({p for folders in parts.values() for folder in folders
                      for p in (ROOT / folder).rglob("*.py")})
    out = []
    for source in sources:
        path = source.relative_to(ROOT).as_posix()
        here = _part_of(path, parts)
        for target in sorted(_imported_files(path)):
            there = _part_of(target, parts)
            if here and there and (here, there) in nevers:
                out.append((here, there, path, target, nevers[(here, there)]))
    return out


def test_no_import_crosses_a_never_line():
    new = [f"{a} -> {b}: {src} imports {dst} ({why!r})"
           for a, b, src, dst, why in _crossings() if (src, dst) not in KNOWN]
    assert not new, "imports across the whiteboard's never lines:\n" + "\n".join(new)


def test_the_reader_sees_modules_names_and_lazy_imports():
    """`from web import views` names the module web/views.py, `from common.stores.keys import
    lookup_key` the file it is in; an import inside a function counts."""
    assert {"web/views.py", "common/stores/keys.py", "common/fetcher_admin.py"} <= _imported_files("web/app.py")
    lazy = "def submit():\n    from common.pending import mark_queued\n    from . import server\n"
    assert _imported_files("metadata_api/main.py", lazy) == {"common/pending.py", "metadata_api/server.py"}


UP_NAMES = ("running_up", "UpLock", "up_lock", "up.lock", "with_up_nats")   # reading up's lock


def test_common_knows_neither_the_command_nor_the_up_lock():
    """common/ is shared by every role: it imports no module of cli/ (the `spiderduck` command,
    which owns `up`), and it neither reads `up`'s lock nor finds `up`'s NATS by itself: the
    command resolves that and hands the settings over (cli/up_nats.py)."""
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "common").rglob("*.py"))
    assert "common/bus.py" in files
    imports = [f"{path} imports {dst}" for path in files for dst in sorted(_imported_files(path))
               if dst.startswith("cli/")]
    assert not imports, "\n".join(imports)
    named = [f"{path} names {name!r}" for path in files for name in UP_NAMES
             if name in (ROOT / path).read_text()]
    assert not named, "\n".join(named)
    assert _imported_files("common/x.py", "from cli.up_lock import running_up\nimport cli.nats_server\n") \
        == {"cli/up_lock.py", "cli/nats_server.py"}
