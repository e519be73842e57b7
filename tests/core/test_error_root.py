"""One root of errors (issue 37): every exception class a module of src/spiderduck defines
derives from SpiderDuckError, so `retryable` means the same everywhere and a catch of the root
knows what it catches. The client (spiderduck.client, with the generated spiderduck.v1) installs
alone and has its own root, spiderduck.client.errors.Error: both are left out.

The modules are found in the source folder, not through `spiderduck.__path__`: under the
editable install that namespace path holds the installer's finder hooks, which pkgutil cannot
list, so a walk over it finds no module at all (and the check would pass on nothing)."""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import types

from conftest import ROOT

import spiderduck.core.errors
from spiderduck.core.errors import SpiderDuckError

PACKAGE = ROOT / "src" / "spiderduck"
LEFT_OUT = ("spiderduck.client", "spiderduck.v1")

def _left_out(name: str) -> bool:
    return any(name == top or name.startswith(top + ".") for top in LEFT_OUT)


def _raise(name: str) -> None:
    raise ImportError(f"{name} does not import")


def module_names() -> list[str]:
    """Every module and package under src/spiderduck but the client's, each package imported
    as it is walked (one that does not import fails the walk rather than hiding its modules)."""
    names = []
    for top in pkgutil.iter_modules([str(PACKAGE)], "spiderduck."):
        if _left_out(top.name):
            continue
        names.append(top.name)
        if top.ispkg:
            package = importlib.import_module(top.name)
            names += [info.name for info in pkgutil.walk_packages(package.__path__, top.name + ".",
                                                                   onerror=_raise)]
    return sorted(names)


def defined_errors(module: types.ModuleType) -> dict[str, type]:
    """The exception classes `module` defines (its own, not those it imports), by dotted name."""
    return {f"{module.__name__}.{name}": value for name, value in vars(module).items()
            if inspect.isclass(value) and issubclass(value, BaseException)
            and value.__module__ == module.__name__}


def off_the_root(modules) -> list[str]:
    """The exception classes of `modules` that do not derive from SpiderDuckError."""
    return sorted(name for module in modules for name, cls in defined_errors(module).items()
                  if not issubclass(cls, SpiderDuckError))


def test_the_walk_finds_this_tree_and_every_part_of_it():
    names = module_names()
    assert spiderduck.core.errors.__file__.startswith(str(PACKAGE))   # the code these tests run
    for expected in ("spiderduck.core.errors", "spiderduck.wire.record_migrations",
                     "spiderduck.fetcher.render.cdp", "spiderduck.web.feed", "spiderduck.cli.main",
                     "spiderduck.scheduler.stages.chain", "spiderduck.query.explainer"):
        assert expected in names
    assert not any(_left_out(name) for name in names)
    assert len(names) > 100


def test_every_exception_class_derives_from_the_root():
    modules = [importlib.import_module(name) for name in module_names()]
    assert len([e for m in modules for e in defined_errors(m)]) > 30    # it saw the classes
    assert off_the_root(modules) == []


def test_an_exception_class_off_the_root_is_found():
    module = types.ModuleType("spiderduck.synthetic")
    exec("from spiderduck.core.errors import BusError, SpiderDuckError\n"
         "class Halted(Exception): pass\n"
         "class Missing(LookupError): pass\n"
         "class Rooted(SpiderDuckError, ValueError): pass\n"
         "class Nested(BusError): pass\n"
         "class NotAnError: pass\n", vars(module))
    assert off_the_root([module]) == ["spiderduck.synthetic.Halted", "spiderduck.synthetic.Missing"]
    assert "spiderduck.synthetic.BusError" not in defined_errors(module)     # imported, not defined


def test_the_classes_moved_under_the_root_keep_their_builtin_base_and_retryable():
    from spiderduck.fetcher.politeness import DomainHalted
    from spiderduck.query.explainer import NeverSeen
    from spiderduck.query.resolver import StillResolving
    from spiderduck.web.api import ApiError
    from spiderduck.wire.record_migrations import Malformed

    assert isinstance(Malformed("x"), ValueError) and isinstance(NeverSeen("x"), LookupError)
    halted = DomainHalted("example.com", "too many errors")
    assert not halted.retryable and "spiderduck domains resume example.com" in str(halted)
    assert StillResolving("x").retryable
    assert ApiError(503, "down").retryable and not ApiError(404, "never seen").retryable
    assert str(ApiError(404, "never seen")) == "never seen" and ApiError(404, "x").status == 404
