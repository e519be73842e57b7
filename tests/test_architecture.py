"""The whiteboard's `never` lines hold in the code: no module of one part imports a module of a
part the whiteboard (../shared/architecture-next.json) says it must never reach.

Every import counts, the ones inside functions too (a lazy import is still a dependency). A part
is the folders its `is` names; a module imported is found as a file of this tree (under src/, the
one import package `spiderduck`), or not at all (third-party code is on no part)."""
from __future__ import annotations

import ast
import json
import pathlib

from conftest import ROOT, shared_path

SRC = ROOT / "src"
WHITEBOARD = "architecture-next.json"
LIBRARIES = ("Core", "Wire", "Stores", "Bus", "Rpc", "Extract", "Query")
ROLES = ("Scheduler", "Fetcher", "MetadataApi", "Web", "Cli")

# Nevers still broken, each as (importing file, file imported). Remove a line when its import
# goes; never add one: a new import across a never is the bug this test is for.
KNOWN: set[tuple[str, str]] = set()


def _whiteboard() -> dict:
    return json.loads(shared_path(WHITEBOARD).read_text())


def _parts() -> dict[str, list[str]]:
    return {name: part["is"] for name, part in _whiteboard()["parts"].items()}


def _part_of(path: str, parts: dict[str, list[str]]) -> str | None:
    for name, folders in parts.items():
        if any(path.startswith(folder) for folder in folders):
            return name
    return None


def _file_of(module: str) -> str | None:
    """The file of this tree that `module` (dotted) names, or None."""
    base = SRC.joinpath(*module.split("."))
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
                folders = path.removeprefix("src/").split("/")[:-1]
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


def _sources() -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in SRC.rglob("*.py"))


def _edges() -> list[tuple[str, str, str, str]]:
    """(source part, target part, importing file, imported file) for every import between parts."""
    parts = _parts()
    out = []
    for path in _sources():
        here = _part_of(path, parts)
        for target in sorted(_imported_files(path)):
            there = _part_of(target, parts)
            if here and there and here != there:
                out.append((here, there, path, target))
    return out


def test_no_import_crosses_a_never_line():
    nevers = {(a, b): why for a, b, why in _whiteboard()["never"]}
    new = [f"{a} -> {b}: {src} imports {dst} ({nevers[(a, b)]!r})"
           for a, b, src, dst in _edges() if (a, b) in nevers and (src, dst) not in KNOWN]
    assert not new, "imports across the whiteboard's never lines:\n" + "\n".join(new)


def test_libraries_know_no_role_and_roles_never_import_the_command():
    """The whiteboard draws one wall of each kind (Core -> Scheduler, Scheduler -> Cli) and says
    they stand for all: no library imports a role, and no role imports the command."""
    crossings = [f"{a} -> {b}: {src} imports {dst}" for a, b, src, dst in _edges()
                 if (a in LIBRARIES and b in ROLES) or (a in ROLES and a != "Cli" and b == "Cli")]
    assert not crossings, "\n".join(crossings)


def test_every_module_is_in_a_part_of_the_whiteboard():
    parts = _parts()
    assert [path for path in _sources() if _part_of(path, parts) is None] == []
    assert not (ROOT / "common").exists(), "common/ is gone: its modules live in named libraries"
    tops = sorted(p.name for p in SRC.iterdir() if p.name != "__pycache__" and not p.name.endswith(".egg-info"))
    assert tops == ["spiderduck"], "one import package"
    assert not (SRC / "spiderduck" / "__init__.py").exists(), \
        "spiderduck is a namespace package, shared with spiderduck-client"


def test_the_reader_sees_modules_names_and_lazy_imports():
    """`from spiderduck.web import views` names the module src/spiderduck/web/views.py,
    `from spiderduck.stores.keys import lookup_key` the file it is in; an import inside a
    function counts, and so does a relative one."""
    assert {"src/spiderduck/web/views.py", "src/spiderduck/stores/keys.py",
            "src/spiderduck/rpc/fetcher_admin.py"} <= _imported_files("src/spiderduck/web/app.py")
    lazy = "def submit():\n    from spiderduck.bus.pending import mark_queued\n    from . import server\n"
    assert _imported_files("src/spiderduck/metadata_api/main.py", lazy) == {
        "src/spiderduck/bus/pending.py", "src/spiderduck/metadata_api/server.py"}


def test_a_crossing_is_seen():
    """The reader finds a library importing a role, so the tests above can fail."""
    source = "from spiderduck.scheduler.task import CrawlTask\nimport spiderduck.cli.up_lock\n"
    found = _imported_files("src/spiderduck/core/x.py", source)
    assert found == {"src/spiderduck/scheduler/task.py", "src/spiderduck/cli/up_lock.py"}
    parts = _parts()
    assert {(_part_of("src/spiderduck/core/x.py", parts), _part_of(f, parts)) for f in found} \
        == {("Core", "Scheduler"), ("Core", "Cli")}


UP_NAMES = ("running_up", "UpLock", "up_lock", "up.lock", "with_up_nats")   # reading up's lock


def test_libraries_neither_read_the_up_lock_nor_find_ups_nats():
    """The libraries are shared by every role: they neither read `up`'s lock nor find `up`'s NATS
    by themselves: the command resolves that and hands the settings over
    (src/spiderduck/cli/up_nats.py)."""
    parts = _parts()
    files = [path for path in _sources() if _part_of(path, parts) in LIBRARIES]
    assert "src/spiderduck/bus/streams.py" in files
    named = [f"{path} names {name!r}" for path in files for name in UP_NAMES
             if name in (ROOT / path).read_text()]
    assert not named, "\n".join(named)
