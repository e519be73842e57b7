"""docs/configuration.md is scripts/gen_config_reference.py's output for src/spiderduck/core/settings.py, so
every key's default and words are stated once, in the settings' declarations."""
from __future__ import annotations

import dataclasses
import importlib.util
import pathlib
import sys
import typing

from spiderduck.core.config import is_duration
import spiderduck.core.settings as settings

ROOT = pathlib.Path(__file__).resolve().parents[1]
REGENERATE = "docs/configuration.md is stale: run `python scripts/gen_config_reference.py`"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_config_reference",
                                                  ROOT / "scripts" / "gen_config_reference.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gen = _generator()
SOURCE = gen.SETTINGS.read_text("utf-8")
COMMITTED = gen.OUTPUT.read_text("utf-8")


def _leaves(cls: type, prefix: str = "") -> dict[str, tuple[object, bool]]:
    """Every leaf key of the settings, imported (not parsed): path -> (default, is a duration)."""
    out = {}
    hints = typing.get_type_hints(cls, include_extras=True)
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if dataclasses.is_dataclass(hint):
            out.update(_leaves(hint, f"{prefix}{f.name}."))
        else:
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            out[prefix + f.name] = (default, is_duration(hint))
    return out


def _rows(text: str) -> dict[str, list[str]]:
    """key -> its table row's cells, from a rendered reference."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip("|").split(" | ")]
            rows[cells[0].strip("`")] = cells
    return rows


def test_the_committed_reference_is_the_generators_output():
    assert COMMITTED == gen.render(SOURCE), REGENERATE
    assert gen.main(["--check"]) == 0, REGENERATE


def test_every_key_of_every_settings_section_is_there_with_its_default():
    rows = _rows(COMMITTED)
    keys = _leaves(settings.Settings)
    missing = sorted(set(keys) - set(rows))
    assert not missing, f"keys not in docs/configuration.md: {missing}; {REGENERATE}"
    assert not set(rows) - set(keys), f"docs/configuration.md names keys that do not exist; {REGENERATE}"
    for key, (default, duration) in keys.items():
        assert rows[key][2] == f"`{gen.render_default(default, duration).replace('|', chr(92) + '|')}`", \
            f"{key}: docs say {rows[key][2]}, src/spiderduck/core/settings.py {default!r}; {REGENERATE}"
    # Every section dataclass of src/spiderduck/core/settings.py (and the sections split off it, which it
    # re-exports: src/spiderduck/core/settings_tls.py) is reached from Settings, so none is left out.
    sections = {cls for cls in vars(settings).values()
                if isinstance(cls, type) and dataclasses.is_dataclass(cls)
                and cls.__module__.startswith(settings.__name__)}
    reached = {settings.Settings} | {hint for cls in sections
                                     for hint in typing.get_type_hints(cls).values() if dataclasses.is_dataclass(hint)}
    assert sections == reached


def test_a_durations_default_reads_as_the_config_writes_it():
    assert gen.render_default(7 * 86_400.0, True) == "7d"
    assert gen.render_default(300.0, True) == "5m"
    assert gen.render_default(60.0, True) == "60s"
    assert gen.render_default(0.2, True) == "200ms"
    assert gen.render_default(0.0, True) == "0"
    assert gen.render_default(["a"], False) == '["a"]'


def test_a_changed_default_or_comment_changes_the_reference():
    declared = "    max_redirects: int = 10           # hops followed after the first before TOO_MANY_REDIRECTS\n"
    assert declared in SOURCE
    changed_default = SOURCE.replace(declared, declared.replace("= 10 ", "= 11 "))
    rows = _rows(gen.render(changed_default))
    assert rows["fetcher.max_redirects"][2] == "`11`"
    changed_words = SOURCE.replace(declared, declared.replace("hops followed", "Hops taken"))
    assert _rows(gen.render(changed_words))["fetcher.max_redirects"][3].startswith("Hops taken")
    # A continuation line (a comment-only line aligned under the field) is part of its words.
    assert "(gRPC clients' default receive limit is 4 MiB)" in _rows(COMMITTED)["metadata_api.max_response_bytes"][3]
    added = SOURCE.replace(declared, declared + "    max_things: Duration = 90.0      # a new key\n"
                                                "                                      # on two lines\n")
    rows = _rows(gen.render(added))
    assert rows["fetcher.max_things"][1:] == ["duration", "`90s`", "a new key on two lines"]
    assert gen.render(added) != COMMITTED
