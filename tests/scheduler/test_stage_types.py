"""Every stage of the pipeline states what it takes and what it answers (Stage[In, Out]), and
what passes between stages are typed records, not string-keyed dicts (issue 28)."""
from __future__ import annotations

import dataclasses
import typing

from spiderduck.core import config

from spiderduck.core import metrics
from spiderduck.scheduler.pipeline import build_pipeline
from spiderduck.scheduler.stages.chain import Next
from spiderduck.scheduler.task import CrawlTask, Outcome, Submission


def _stages():
    async def nothing(*a):
        return None
    return build_pipeline(config.load(env={}), metadata=None, content=None, fetch_hop=nothing,
                          publish=nothing, metrics=metrics.recorder("test")).stages


def test_every_stage_names_its_input_its_next_and_its_answer():
    for stage in _stages():
        hints = typing.get_type_hints(type(stage).__call__)
        name = type(stage).__name__
        task_hint = next(h for k, h in hints.items() if k not in ("next", "return"))
        assert task_hint in (CrawlTask, Submission), (name, task_hint)
        next_hint = hints["next"]
        args = typing.get_args(next_hint)
        if type(None) in args:                               # the innermost stage: next unused
            next_hint = next(a for a in args if a is not type(None))
        assert next_hint == Next[CrawlTask, Outcome], (name, next_hint)
        assert hints["return"] in (Outcome, tuple[Outcome, ...]), (name, hints["return"])


def test_what_passes_between_stages_holds_no_untyped_dicts():
    for record in (CrawlTask, Outcome, Submission):
        for f in dataclasses.fields(record):
            hint = typing.get_type_hints(record)[f.name]
            assert typing.get_origin(hint) is not dict and hint is not dict, (record.__name__, f.name, hint)
            assert hint is not typing.Any, (record.__name__, f.name)
