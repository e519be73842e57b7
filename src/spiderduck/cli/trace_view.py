"""A pipeline trace (scheduler.trace) as text: one stage a header line, then what it did.

    4. CrawlDecider      next      -> CRAWLED OK          own    0.9ms  total  812.3ms
         task  url = 'http://news.example/a'

The header says whether the stage called next (`next`, `next x3`), `answered` on its own or
`raised`, what it returned (the resolution and status of an Outcome), and its time: `own` in
the stage itself, `total` with the stages inside it. Below it: the task's fields it changed on
the way in (`task`), the outcome's on the way out (`out`), its answer and the record's main
fields when it answered, the error when it raised one of its own. Hops and other fetches are
`URL -> HTTP code` lines; bodies are never printed, only their length; long values are cut, and
what sites sent has its control characters escaped (cli.text). A stage the URL never reached
is `not run`.
"""
from __future__ import annotations

import dataclasses
import datetime
import enum
from collections.abc import Mapping
from typing import Any, Iterable

from spiderduck.cli.text import cut
from spiderduck.core.fetch import FetchResult
from spiderduck.core.record import HTTP_REDIRECT, Redirect, UrlRecord
from spiderduck.scheduler.task import Outcome
from spiderduck.scheduler.trace import Change, StageRun

VALUE_LIMIT = 100               # characters of one value
ERROR_LIMIT = 300               # characters of an error message
TIMES = ("received_at", "fetched_at", "first_seen", "expires_at", "last_modified")  # epoch seconds, as UTC
ANSWER_FIELDS = ("http_status", "content_type", "title", "fetched_at", "error")
_INDENT = " " * 5
_HOP_INDENT = " " * 11


def render(runs: Iterable[StageRun], names: list[str]) -> str:
    """The trace of `runs` (in the order the stages were entered) over the chain's stage
    `names`, outer first."""
    runs = list(runs)
    lines = []
    for position, name in enumerate(names):
        mine = [r for r in runs if r.position == position]
        if not mine:
            lines.append(f"{position + 1}. {name:<17} not run")
        for run in mine:
            lines += _stage(run)
    return "\n".join(lines) + "\n"


def _stage(run: StageRun) -> list[str]:
    lines = [f"{run.position + 1}. {run.name:<17} {_action(run):<9} -> {_result(run):<18} "
             f"own {_ms(run.own):>9}  total {_ms(run.total):>9}"]
    for calls in run.task_changes():
        for change in calls:
            lines += _change("task", change)
    if run.answered:
        lines += _answer(run.returned)
    for change in run.outcome_changes():
        lines += _change("out", change)
    if run.error is not None and not run.error_from_inside:
        lines.append(f"{_INDENT}error {cut(_error(run.error), ERROR_LIMIT)}")
    return lines


def _action(run: StageRun) -> str:
    if run.passed:
        return "next" if len(run.passed) == 1 else f"next x{len(run.passed)}"
    if not run.done:
        return "running"
    return "raised" if run.error is not None else "answered"


def _result(run: StageRun) -> str:
    if not run.done:
        return "(not returned)"
    if run.error is not None:
        return f"! {type(run.error).__name__}" + (" (inside)" if run.error_from_inside else "")
    value = run.returned
    if isinstance(value, Outcome):
        return f"{value.resolution.name} {value.record.status.name}"
    if isinstance(value, tuple):
        return f"{len(value)} outcome" + ("" if len(value) == 1 else "s")
    return type(value).__name__


def _answer(outcome: Any) -> list[str]:
    if not isinstance(outcome, Outcome):
        return [f"{_INDENT}answer {_value(outcome)}"]
    lines = [f"{_INDENT}answer {outcome.resolution.name}, {outcome.record.status.name}, "
             f"key {_value(outcome.key)}"]
    for name in ANSWER_FIELDS:
        value = getattr(outcome.record, name)
        if value:
            lines.append(f"{_INDENT}  record.{name} = {_value(value, name)}")
    return lines


def _change(label: str, change: Change) -> list[str]:
    path, before, after = change
    field = path.rsplit(".", 1)[-1]
    head = f"{_INDENT}{label:<5} {path}"
    fetches = _fetch_lines(after)
    if fetches is not None:
        return [f"{head} = {len(fetches)}" if path else f"{head}{len(fetches)}",
                *(f"{_HOP_INDENT}{line}" for line in fetches)]
    if not path:                # another type (the Decoder's): each on a line of its own
        return [f"{head}{_value(before)}", f"{_INDENT}   -> {_value(after)}"]
    if _empty(before):
        return [f"{head} = {_value(after, field)}"]
    return [f"{head}: {_value(before, field)} -> {_value(after, field)}"]


def _fetch_lines(value: Any) -> list[str] | None:
    """Hops, redirects or fetches, one `URL -> code` line each (None: not such a tuple)."""
    if not (isinstance(value, tuple) and value
            and all(isinstance(v, (FetchResult, Redirect)) for v in value)):
        return None
    return [_hop(v) for v in value]


def _hop(hop: FetchResult | Redirect) -> str:
    url = cut(hop.url, VALUE_LIMIT)
    if isinstance(hop, Redirect):     # a refresh hop says so: "-> 200 (meta-refresh)"
        return f"{url} -> {hop.http_status}" + (f" ({hop.kind})" if hop.kind != HTTP_REDIRECT else "")
    if hop.http_status:
        return f"{url} -> {hop.http_status}"
    error = f" ({cut(hop.error, VALUE_LIMIT)})" if hop.error else ""
    return f"{url} -> {hop.status.name}{error}"


def _empty(value: Any) -> bool:
    return value is None or (not isinstance(value, enum.Enum) and value in ("", 0, (), b"", False))


def _value(value: Any, field: str = "", limit: int = VALUE_LIMIT) -> str:
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, str):
        return cut(value, limit, "'")
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    if isinstance(value, float) and field in TIMES and value > 0:
        at = datetime.datetime.fromtimestamp(value, datetime.timezone.utc)
        return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, (FetchResult, Redirect)):
        return _hop(value)
    if isinstance(value, Outcome):
        return (f"Outcome({value.resolution.name}, {value.record.status.name}, "
                f"key {_value(value.key)})")
    if isinstance(value, UrlRecord):      # the record a crawl renews (task.previous)
        etag = f", etag {_value(value.etag, limit=60)}" if value.etag else ""
        return (f"UrlRecord({value.status.name}, fetched {_value(value.fetched_at, 'fetched_at')}, "
                f"expires {_value(value.expires_at, 'expires_at')}{etag})")
    if isinstance(value, Mapping):
        return f"{{{len(value)} key{'' if len(value) == 1 else 's'}}}"
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return f"({_value(value[0])},)"
        return f"({len(value)} items)"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = [f"{f.name}={_value(getattr(value, f.name), f.name, 60)}"
                 for f in dataclasses.fields(value) if not _is_default(value, f)]
        return cut(f"{type(value).__name__}({', '.join(parts)})", 2 * limit)
    return cut(repr(value), limit)


def _is_default(obj: Any, f: dataclasses.Field) -> bool:
    value = getattr(obj, f.name)
    if f.default is not dataclasses.MISSING:
        return value == f.default
    if f.default_factory is not dataclasses.MISSING:
        return value == f.default_factory()
    return False


def _error(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}ms"
