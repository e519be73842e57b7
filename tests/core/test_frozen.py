"""spiderduck.core.frozen.evolve: dataclasses.replace's result, for the classes it copies and
for those it hands to dataclasses.replace."""
from __future__ import annotations

import dataclasses

import pytest

from spiderduck.core.frozen import evolve
from spiderduck.core.record import Image, UrlRecord
from spiderduck.core.status import Status
from spiderduck.scheduler.task import CrawlTask


def test_a_record_evolved_equals_the_replaced_one_and_the_original_is_untouched():
    record = UrlRecord(url="http://a.test/", status=Status.OK, title="Old",
                       image=Image("http://a.test/i.png", 1, 2, "image/png"))
    new = evolve(record, title="New", share_count=3)
    assert new == dataclasses.replace(record, title="New", share_count=3)
    assert type(new) is UrlRecord and new is not record
    assert (record.title, record.share_count) == ("Old", 0)
    assert hash(new) == hash(dataclasses.replace(record, title="New", share_count=3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        new.title = "changed"                          # still frozen
    assert evolve(record) == record


def test_a_task_evolves_too():
    task = CrawlTask(submitted="http://a.test/", received_at=5.0)
    assert evolve(task, url="http://b.test/") == dataclasses.replace(task, url="http://b.test/")


def test_an_unknown_field_is_refused_as_dataclasses_replace_refuses_it():
    with pytest.raises(TypeError):
        evolve(UrlRecord(url="http://a.test/"), colour="red")


@dataclasses.dataclass(frozen=True)
class Checked:
    n: int

    def __post_init__(self):
        if self.n < 0:
            raise ValueError("n must not be negative")


@dataclasses.dataclass(frozen=True)
class WithInitVar:
    n: int
    scale: dataclasses.InitVar[int] = 1

    def __post_init__(self, scale):
        object.__setattr__(self, "n", self.n * scale)


def test_a_class_with_post_init_or_initvar_still_runs_it():
    with pytest.raises(ValueError):
        evolve(Checked(1), n=-1)
    assert evolve(WithInitVar(2), n=3, scale=5).n == 15
