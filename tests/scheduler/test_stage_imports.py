"""No stage imports another (issue 37): a module of src/spiderduck/scheduler/stages/ other than
chain.py (the machinery) and __init__.py may import chain and modules outside stages/, never a
stage; what two stages share lives beside them (scheduler/task.py, scheduler/storing.py). No stage
asks extraction whether a page may be archived (the Post Processor's outcome says it), and no
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


# The stages that may read the publisher's robots directives (spiderduck.extract.signals): the Post
# Processor, which turns them into the record and says whether the page may be archived, and the
# Related Fetcher, which honours max-image-preview on the image it finds.
READS_DIRECTIVES = {"record", "related"}
# The stages that store, which ask extraction nothing.
STORING = {"crawl_decision", "crawl_record", "sighting"}


def _extraction_asked(source: str) -> set[str]:
    """What the module takes from spiderduck.extract."""
    return {name for name in _imported(source) if name.startswith("spiderduck.extract")}


def _asks_no_archive(source: str) -> bool:
    """Whether the module imports or calls no_archive (spiderduck.extract.signals)."""
    return any(name.endswith(".no_archive") for name in _imported(source)) or _calls(source, "no_archive")


def test_storage_asks_extraction_nothing_and_only_the_post_processor_says_archivable():
    modules = _stage_modules()
    assert STORING <= set(modules) and READS_DIRECTIVES <= set(modules)
    for name in STORING:
        assert _extraction_asked(modules[name]) == set(), name
    for name, source in modules.items():
        if name not in READS_DIRECTIVES:
            assert not any(i.startswith("spiderduck.extract.signals") for i in _imported(source)), name
        assert _asks_no_archive(source) is (name == "record"), name


def test_no_stage_makes_spans_of_its_store_calls():
    for name, source in _stage_modules().items():
        assert not _calls(source, "store_span"), name
        assert not any(i.startswith("spiderduck.scheduler.traced_stores") for i in _imported(source)), name


def test_the_rules_see_a_stage_asking_extraction_or_tracing_a_store_call():
    source = ("from spiderduck.extract.signals import no_archive\n"
              "async def log(self, f):\n"
              "    with store_span('content append', self._content, f.url):\n"
              "        return await self._content.append(f)\n")
    assert _asks_no_archive(source) and _calls(source, "store_span")
    assert _extraction_asked(source) == {"spiderduck.extract.signals", "spiderduck.extract.signals.no_archive"}
    assert _asks_no_archive("from spiderduck.extract import signals\n"
                            "archive = not signals.no_archive(record.robots_directives)\n")
    assert not _asks_no_archive("archive = outcome.archivable\n")
