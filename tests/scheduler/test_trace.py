"""spiderduck.scheduler.trace on a chain of tiny stages: what each changed on the way in and out, who
answered without next, who raised, its time; and cli.trace_view's text of it."""
from __future__ import annotations

import dataclasses

import pytest

from spiderduck.cli.trace_view import render
from spiderduck.core.fetch import FetchResult
from spiderduck.core.record import UrlRecord
from spiderduck.core.status import Status
from spiderduck.scheduler.stages.chain import StageFailed, compose
from spiderduck.scheduler.task import CrawlTask, Outcome, Resolution
from spiderduck.scheduler.trace import Change, traced


class Canonical:                     # changes the task on the way in, the outcome on the way out
    async def __call__(self, task, next):
        outcome = await next(dataclasses.replace(task, url=task.submitted.lower()))
        record = dataclasses.replace(outcome.record, share_count=7)
        return dataclasses.replace(outcome, record=record)


class Hops:
    async def __call__(self, task, next):
        return await next(dataclasses.replace(task, hops=(
            FetchResult(task.url, Status.OK, 301, body=b"<html>secret body</html>"),
            FetchResult(task.url + "b", Status.DNS_ERROR, error="no such host"))))


class Answer:                        # answers on its own
    async def __call__(self, task, next):
        record = UrlRecord(task.submitted, Status.OK, title="T\x1b[2J" + "x" * 300)
        return Outcome(task, record, Resolution.FRESH, key=task.url)


class Unreached:
    async def __call__(self, task, next):
        raise AssertionError("never called")


class Boom:
    async def __call__(self, task, next):
        raise KeyError("oops")


class Split:                         # a Decoder: a str in, one task per word to next, a tuple out
    async def __call__(self, text, next):
        return tuple([await next(CrawlTask(word, 0.0)) for word in text.split()])


async def test_each_stage_says_what_it_changed_and_who_answered():
    pipeline = compose(Canonical(), Hops(), Answer(), Unreached())
    runs = []
    outcome = await traced(pipeline, runs.append)(CrawlTask("HTTP://A.TEST/", 0.0))
    assert outcome.record.share_count == 7 and outcome.resolution is Resolution.FRESH
    assert [(r.name, r.position) for r in runs] == [("Canonical", 0), ("Hops", 1), ("Answer", 2)]
    canonical, hops, answer = runs
    assert canonical.task_changes() == [[Change("url", "", "http://a.test/")]]
    assert canonical.outcome_changes() == [Change("record.share_count", 0, 7)]
    assert [c.path for c in hops.task_changes()[0]] == ["hops"]
    assert hops.outcome_changes() == [] and not hops.answered
    assert answer.answered and answer.returned.resolution is Resolution.FRESH and not answer.passed
    assert all(r.done and r.error is None for r in runs)
    assert canonical.in_next >= hops.total >= hops.in_next >= answer.total
    assert canonical.own == pytest.approx(canonical.total - canonical.in_next)

    text = render(runs, ["Canonical", "Hops", "Answer", "Unreached"])
    lines = text.splitlines()
    assert lines[0].startswith("1. Canonical         next      -> FRESH OK ")
    assert "     task  url = 'http://a.test/'" in lines
    assert "     out   record.share_count = 7" in lines
    assert "     task  hops = 2" in lines
    assert "           http://a.test/ -> 301" in lines
    assert "           http://a.test/b -> DNS_ERROR (no such host)" in lines
    assert "     answer FRESH, OK, key 'http://a.test/'" in lines
    title = next(line for line in lines if "record.title" in line)
    assert title.startswith("       record.title = 'T\\x1b[2Jxxx")        # escaped, and cut
    assert title.endswith("xxx'... (305 chars)")
    assert lines[-1] == "4. Unreached         not run"
    assert "secret" not in text and "\x1b" not in text


async def test_an_exception_is_shown_where_it_was_raised_and_names_stay_real():
    pipeline = compose(Canonical(), Boom())
    runs = []
    watched = traced(pipeline, runs.append)
    assert repr(watched) == repr(pipeline) == "Canonical -> Boom"
    with pytest.raises(StageFailed, match="^Boom: KeyError"):       # named for the stage
        await watched(CrawlTask("http://a.test/", 0.0))
    canonical, boom = runs
    assert isinstance(boom.error, KeyError) and not boom.error_from_inside and boom.done
    assert isinstance(canonical.error, StageFailed) and canonical.error_from_inside
    assert canonical.outcome_changes() == []
    text = render(runs, ["Canonical", "Boom"])
    assert "2. Boom              raised    -> ! KeyError " in text
    assert "     error KeyError: 'oops'\n" in text
    assert "1. Canonical         next      -> ! StageFailed (inside) " in text
    assert text.count("error") == 1


async def test_a_stage_of_other_types_in_and_out_shows_them_as_they_are():
    runs = []
    pipeline = traced(compose(Split(), Answer()), runs.append)
    outcomes = await pipeline("http://a.test/ http://b.test/")
    assert len(outcomes) == 2
    split, *answers = runs
    assert len(split.passed) == 2 and len(answers) == 2
    first = split.task_changes()[0]
    assert first == [Change("", "http://a.test/ http://b.test/", CrawlTask("http://a.test/", 0.0))]
    assert split.outcome_changes() == []          # the tuple holds next's outcomes as they were
    text = render(runs, ["Split", "Answer"])
    assert text.startswith("1. Split             next x2   -> 2 outcomes ")
    assert ("     task  'http://a.test/ http://b.test/'\n"
            "        -> CrawlTask(submitted='http://a.test/', received_at=0.0)\n") in text
    assert text.count("2. Answer            answered  -> FRESH OK") == 2


def test_a_refresh_hop_says_its_kind_and_a_3xx_says_nothing_more():
    from spiderduck.cli.trace_view import _fetch_lines
    from spiderduck.core.record import META_REFRESH, Redirect
    assert _fetch_lines((Redirect("http://a.test/", 301), Redirect("http://b.test/", 200, META_REFRESH))) == [
        "http://a.test/ -> 301", "http://b.test/ -> 200 (meta-refresh)"]
