"""Stages and their composition (Finagle's filters, in Python).

A stage is an object with one async method, `__call__(task, next)`, that returns
the outcome: a `Stage[In, Out]`, its task an In and its answer an Out. It may call `next(task)` (zero, one or many times) or answer on its
own. `compose(a, b, c)` joins stages into one callable `service(task)`, and its
repr lists the chain: each stage's `name` if it has one (a wrapper, as scheduler.trace's,
keeps the name of the stage it wraps), else its class's name. The joining code turns
unexpected exceptions into a retryable `StageFailed`, so stage authors need not. With traces on
(src/spiderduck/core/telemetry.py) each call of a stage is a span named after it, a child of the stage that
called it (the message's span for the outermost).
"""
from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable, Protocol, TypeVar

from spiderduck.core import telemetry
from spiderduck.core.errors import SpiderDuckError

In = TypeVar("In")
Out = TypeVar("Out")

# What a stage hands its task on to: Next[In, Out] takes the task and answers the outcome.
Next = Callable[[In], Awaitable[Out]]
log = logging.getLogger("spiderduck.scheduler")


class Stage(Protocol[In, Out]):
    """Stage[In, Out]: takes an In, may hand it (or another In) on to next, answers an Out.
    Every stage of the pipeline states its two types (tests/scheduler/test_stage_types.py)."""

    async def __call__(self, task: In, next: Next[In, Out]) -> Out: ...


class StageFailed(SpiderDuckError):
    """A stage raised something unexpected: retried, then dead-lettered with this reason."""
    retryable = True


class Pipeline:
    def __init__(self, stages: tuple[Stage[Any, Any], ...]):
        self.stages = stages
        call: Next[Any, Any] = _end_async
        for stage in reversed(stages):
            call = _bind(stage, call)
        self._call = call

    async def __call__(self, task: Any) -> Any:
        return await self._call(task)

    def __repr__(self) -> str:
        return " -> ".join(stage_name(s) for s in self.stages)

    async def close(self) -> None:
        """Close stages in reverse order (the ones that have `close`)."""
        for stage in reversed(self.stages):
            close = getattr(stage, "close", None)
            if close is not None:
                await close()


def stage_name(stage: Stage[Any, Any]) -> str:
    return getattr(stage, "name", None) or type(stage).__name__


async def _end_async(task: Any) -> Any:
    raise RuntimeError(f"the last stage called next() with {type(task).__name__}")


def _bind(stage: Stage[Any, Any], next_call: Next[Any, Any]) -> Next[Any, Any]:
    name = stage_name(stage)

    async def call(task: Any) -> Any:
        try:
            if telemetry.enabled():
                with telemetry.span(name):
                    return await stage(task, next_call)
            return await stage(task, next_call)
        except SpiderDuckError:
            raise
        except Exception as exc:
            log.exception("stage %s failed", name)
            raise StageFailed(f"{name}: {type(exc).__name__}: {exc}") from exc
    return call


def compose(*stages: Stage[Any, Any]) -> Pipeline:
    return Pipeline(tuple(stages))
