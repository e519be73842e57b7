"""No stage imports another (issue 37): a module of src/spiderduck/scheduler/stages/ other than
chain.py (the machinery) and __init__.py may import chain and modules outside stages/, never a
stage; what two stages share lives beside them (scheduler/task.py, scheduler/storing.py). No
stage makes spans of its store calls (the stores are traced where the pipeline is wired)."""
from __future__ import annotations

import ast

from conftest import ROOT

STAGES = ROOT / "src" / "spiderduck" / "scheduler" / "stages"
PACKAGE = "spiderduck.scheduler.stages"
NOT_STAGES = ("__init__", "chain")


def _stage_modules() -> dict[str, str]:
    """Each stage module's name and source."""
    return {p.stem: p.read_text() for p in sorted(STAGES.glob("*.py")) if p.stem not in NOT_STAGES}


def _imported(source: str) -> set[str]:
    """The dotted names a module imports anywhere in it (`from a import b` gives a and a.b;
    relative imports are resolved against the stages package)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = PACKAGE.split(".")[: len(PACKAGE.split(".")) - node.level + 1]
                base = ".".join(package + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _stages_imported(source: str, stages: set[str]) -> set[str]:
    return {name.removeprefix(PACKAGE + ".").split(".")[0] for name in _imported(source)
            if name.startswith(PACKAGE + ".")} & stages


def _calls(source: str, name: str) -> bool:
    """Whether the module calls (or names) `name`."""
    return any(isinstance(node, ast.Name) and node.id == name or
               isinstance(node, ast.Attribute) and node.attr == name for node in ast.walk(ast.parse(source)))


def test_the_stages_are_the_modules_the_rule_reads():
    assert {"crawl_decision", "crawl_record", "record", "redirect_chain", "related",
            "sighting"} <= set(_stage_modules())


def test_no_stage_imports_another_stage():
    modules = _stage_modules()
    crossing = {(name, other) for name, source in modules.items()
                for other in _stages_imported(source, set(modules) - {name})}
    assert crossing == set()


def test_the_rule_sees_a_stage_importing_another():
    stages = {"crawl_decision", "crawl_record", "redirect_chain"}
    assert _stages_imported("from spiderduck.scheduler.stages.crawl_decision import record_key\n"
                            "from spiderduck.scheduler.stages.chain import Next\n", stages) == {"crawl_decision"}
    assert _stages_imported("def f():\n    from . import redirect_chain\n", stages) == {"redirect_chain"}
    assert _stages_imported("from .crawl_record import store_outcome\n", stages) == {"crawl_record"}
    assert _stages_imported("import spiderduck.scheduler.stages.crawl_record as r\n", stages) == {"crawl_record"}
    assert _stages_imported("from spiderduck.scheduler.stages import chain\n"
                            "from spiderduck.scheduler.storing import store_outcome\n", stages) == set()


def test_no_stage_makes_spans_of_its_store_calls():
    for name, source in _stage_modules().items():
        assert not _calls(source, "store_span"), name
        assert not any(i.startswith("spiderduck.scheduler.traced_stores") for i in _imported(source)), name


def test_the_rule_sees_a_stage_tracing_a_store_call():
    assert _calls("async def log(self, f):\n"
                  "    with store_span('content append', self._content, f.url):\n"
                  "        return await self._content.append(f)\n", "store_span")
