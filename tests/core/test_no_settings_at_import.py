"""No settings object is built at import time (issue 37): a value that comes from the settings
comes from the settings the role was started with, handed down by its wiring, never from a
`FetcherSettings()` of the defaults built when a module is imported.

Code that runs at import is a module's statements, a class's body, decorators and the default
values of parameters (evaluated once, when the `def` runs); a function's body is not. In it, no
call of a name ending in `Settings` and no `config.load(...)`. The one exception: the settings'
own declarations (src/spiderduck/core/settings*.py), whose dataclass fields are where the defaults
are declared. The client distribution (client/, v1/) has no settings and is not scanned."""
from __future__ import annotations

import ast

from conftest import ROOT

PACKAGE = ROOT / "src" / "spiderduck"
NOT_SCANNED = ("client", "v1")
DECLARATIONS = ("core/settings.py", "core/settings_tls.py")


def _builds_settings(call: ast.Call) -> bool:
    """A call of a name ending in Settings, or of config.load."""
    name = ast.unparse(call.func)
    return name.rsplit(".", 1)[-1].endswith("Settings") or name == "config.load" or name.endswith(".config.load")


def _at_import(node: ast.AST, declarations: bool) -> list[ast.Call]:
    """The settings-building calls in `node` that run when its module is imported. In the
    settings' own declarations (`declarations`), a class's field defaults are allowed."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parts = [*node.decorator_list, *node.args.defaults, *filter(None, node.args.kw_defaults)]
    elif isinstance(node, ast.Lambda):
        parts = [*node.args.defaults, *filter(None, node.args.kw_defaults)]
    elif isinstance(node, ast.ClassDef):
        body = [s for s in node.body if not (declarations and isinstance(s, (ast.AnnAssign, ast.Assign)))]
        parts = [*node.decorator_list, *node.bases, *node.keywords, *body]
    else:
        parts = list(ast.iter_child_nodes(node))
    found = [node] if isinstance(node, ast.Call) and _builds_settings(node) else []
    for part in parts:
        found += _at_import(part, declarations)
    return found


def _defaults(tree: ast.AST, declarations: bool) -> list[ast.Call]:
    """The settings-building calls in the default values of every function, nested ones too
    (a method's defaults run when its class is built, a nested function's each time its
    enclosing function runs: either way not from the caller's settings)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for value in (*node.args.defaults, *filter(None, node.args.kw_defaults)):
                found += _at_import(value, declarations)
    return found


def violations(source: str, path: str) -> list[str]:
    """`path:line: call` for each settings object `source` builds at import or as a default."""
    tree = ast.parse(source, filename=path)
    declarations = path.endswith(DECLARATIONS)
    calls = {id(c): c for c in _at_import(tree, declarations) + _defaults(tree, declarations)}
    return [f"{path}:{c.lineno}: {ast.unparse(c)}" for c in sorted(calls.values(), key=lambda c: c.lineno)]


def _modules() -> list[str]:
    return sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
                  if p.relative_to(PACKAGE).parts[0] not in NOT_SCANNED)


def test_no_module_builds_settings_at_import_or_as_a_default():
    modules = _modules()
    assert "fetcher/politeness.py" in modules and "extract/page.py" in modules and "core/settings.py" in modules
    found = [v for m in modules for v in violations((PACKAGE / m).read_text("utf-8"), m)]
    assert found == [], "settings built at import time:\n" + "\n".join(found)


SYNTHETIC = '''
from spiderduck.core import config
from spiderduck.core.config import FetcherSettings, ProcessSettings

_DEFAULTS = FetcherSettings()
if True:
    TOKEN = token(FetcherSettings().user_agent)

def parse(markup, parser=ProcessSettings().parser, *, limit=config.load(env={}).fetcher.queue_size):
    return FetcherSettings()            # at call time: allowed

class Pool:
    budget = ProcessSettings().extract_timeout
    def __init__(self, size=lambda: FetcherSettings()):   # the lambda's body runs later: allowed
        self.settings = ProcessSettings()

def outer():
    def inner(x=ProcessSettings().parser):
        return x
'''


def test_the_scan_finds_module_level_class_body_and_default_argument_settings():
    assert [v.split(": ", 1)[0] for v in violations(SYNTHETIC, "extract/x.py")] == [
        "extract/x.py:5", "extract/x.py:7", "extract/x.py:9", "extract/x.py:9", "extract/x.py:13",
        "extract/x.py:18"]
    assert violations("def f(settings):\n    return settings.fetcher.queue_size\n", "extract/y.py") == []


def test_the_settings_declarations_may_default_fields_but_not_build_at_import():
    source = ("@dataclass\nclass Settings:\n    tls: TlsSettings = TlsSettings()\n"
              "    fetcher: FetcherSettings = field(default_factory=FetcherSettings)\n\n"
              "DEFAULTS = Settings()\n")
    assert violations(source, "core/settings.py") == ["core/settings.py:6: Settings()"]
    assert violations(source, "core/other.py") == ["core/other.py:3: TlsSettings()",
                                                   "core/other.py:6: Settings()"]
