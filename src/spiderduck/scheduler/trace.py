"""Each stage's decision for one URL: the pipeline with every stage watched.

    runs: list[StageRun] = []
    outcome = await traced(pipeline, runs.append)(submission)

`traced(pipeline, sink)` composes the same stage objects again, each wrapped, and leaves
`pipeline` as it was. Every call of a stage gives `sink` one StageRun as the stage is entered
(so the runs come outer first), completed as the stage returns: what it received, what it
passed to next and what next returned (each call of next), what it returned or raised, its
time in all and its own (less the time inside next). `task_changes` and `outcome_changes` say
what the stage changed, field by field, of the dataclasses that flow through the chain
(src/spiderduck/scheduler/task.py's CrawlTask and Outcome, and the Outcome's record); a stage that never
called next `answered`. A stage whose input and output types differ (the Decoder: a Submission
in, one CrawlTask per URL to next, a tuple of Outcomes out) shows what it passed and returned
as they are. Nothing here renders or cuts: src/spiderduck/cli/trace_view.py prints a trace, escaping what
sites sent.

The stages are the service's own, with their state (the decider's in-flight crawls, the
related fetches' cache): a traced run does what an untraced one does.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, NamedTuple

from spiderduck.scheduler.stages.chain import Next, Pipeline, Stage, compose, stage_name

MAX_DEPTH = 3       # dataclasses inside dataclasses compared field by field: outcome.record.image


class Change(NamedTuple):
    """One field a stage changed: `path` as `record.share_count` (empty: the value as a whole,
    when the types differ); `before` what it received, `after` what it passed on."""
    path: str
    before: Any
    after: Any


@dataclasses.dataclass(eq=False)
class StageRun:
    """One call of one stage. `position` is its place in the chain, 0 the outermost."""
    name: str
    position: int
    received: Any
    passed: list[Any] = dataclasses.field(default_factory=list)    # to next, per call
    inner: list[Any] = dataclasses.field(default_factory=list)     # next's value or exception
    returned: Any = None
    error: BaseException | None = None
    done: bool = False
    total: float = 0.0          # seconds from entry to return
    in_next: float = 0.0        # seconds while at least one call of next ran

    @property
    def own(self) -> float:
        return max(0.0, self.total - self.in_next)

    @property
    def answered(self) -> bool:
        """Returned without calling next."""
        return self.done and self.error is None and not self.passed

    @property
    def error_from_inside(self) -> bool:
        """The stage raised what next raised (passed an inner stage's failure on)."""
        return self.error is not None and any(self.error is i for i in self.inner)

    def task_changes(self) -> list[list[Change]]:
        """Per call of next: what the stage changed of the task it received."""
        return [changes(self.received, p) for p in self.passed]

    def outcome_changes(self) -> list[Change]:
        """What the stage changed of what next returned, on the way out (nothing when it
        answered or raised). A tuple returned for as many values from next (the Decoder's) is
        compared item by item, `[i].` before the paths when there are several."""
        if not self.done or self.error is not None or not self.inner:
            return []
        if len(self.inner) == 1 and not isinstance(self.returned, tuple):
            return changes(self.inner[0], self.returned)
        if isinstance(self.returned, tuple) and len(self.returned) == len(self.inner):
            if len(self.inner) == 1:
                return changes(self.inner[0], self.returned[0])
            pairs = enumerate(zip(self.inner, self.returned))
            return [Change(f"[{i}].{c.path}" if c.path else f"[{i}]", c.before, c.after)
                    for i, (a, b) in pairs for c in changes(a, b)]
        return [Change("", tuple(self.inner), self.returned)]


def changes(before: Any, after: Any, prefix: str = "", depth: int = 0) -> list[Change]:
    """The fields that differ between two dataclasses of one type (dataclasses inside them
    compared the same way, to MAX_DEPTH); values of different types differ as a whole."""
    if before is after:
        return []
    same_kind = (dataclasses.is_dataclass(before) and not isinstance(before, type)
                 and type(before) is type(after))
    if not same_kind or depth >= MAX_DEPTH:
        return [] if _equal(before, after) else [Change(prefix.rstrip("."), before, after)]
    return [c for f in dataclasses.fields(before)
            for c in changes(getattr(before, f.name), getattr(after, f.name),
                             f"{prefix}{f.name}.", depth + 1)]


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:   # noqa: BLE001 -- a value that cannot compare counts as changed
        return False


class _Watched:
    """A stage, reporting each call of it to the sink."""

    def __init__(self, stage: Stage, position: int, sink: Callable[[StageRun], Any]):
        self._stage = stage
        self._position = position
        self._sink = sink
        self.name = stage_name(stage)
        close = getattr(stage, "close", None)
        if close is not None:
            self.close = close

    async def __call__(self, task: Any, next: Next[Any, Any]) -> Any:   # as the stage it wraps
        run = StageRun(self.name, self._position, task)
        self._sink(run)
        clock = time.perf_counter
        started = clock()
        inside = {"calls": 0, "since": 0.0}

        async def watched_next(inner_task: Any) -> Any:
            run.passed.append(inner_task)
            slot = len(run.inner)
            run.inner.append(None)
            if inside["calls"] == 0:
                inside["since"] = clock()
            inside["calls"] += 1
            try:
                run.inner[slot] = value = await next(inner_task)
                return value
            except BaseException as exc:
                run.inner[slot] = exc
                raise
            finally:
                inside["calls"] -= 1
                if inside["calls"] == 0:
                    run.in_next += clock() - inside["since"]

        try:
            run.returned = await self._stage(task, watched_next)
            return run.returned
        except BaseException as exc:
            run.error = exc
            raise
        finally:
            run.total = clock() - started
            run.done = True


def traced(pipeline: Pipeline, sink: Callable[[StageRun], Any]) -> Pipeline:
    """`pipeline`'s stages composed again, each reporting its calls to `sink` (see above)."""
    return compose(*(_Watched(stage, i, sink) for i, stage in enumerate(pipeline.stages)))
