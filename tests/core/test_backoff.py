"""The one back-off type (src/spiderduck/core/backoff.py), and that no other module computes one by hand."""
from __future__ import annotations

import pathlib
import re

import pytest

from spiderduck.core.backoff import Backoff
from spiderduck.core.config import FetcherSettings, SchedulerSettings
from spiderduck.fetcher.pacing import PacingPolicy
from spiderduck.scheduler.consumer import outage_backoff
from spiderduck.scheduler.fetcher_client import hop_backoff

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_steps_grow_by_the_factor_up_to_the_cap():
    b = Backoff(0.5, 4.0)
    assert [b.step(n) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert [Backoff(1.0, 100.0, factor=3.0).step(n) for n in range(4)] == [1, 3, 9, 27]
    assert b.step(10_000) == 4.0 and b.delay(10**9, 0.5) == 4.0       # no overflow
    assert b.step(-1) == 0.5


def test_no_jitter_is_the_step():
    b = Backoff(0.2, 5.0)
    assert all(b.delay(n, r) == b.step(n) for n in range(8) for r in (0.0, 0.3, 0.999))


@pytest.mark.parametrize("jitter_from, jitter", [(0.5, 0.5), (0.5, 1.0), (1.0, 0.5)])
def test_jitter_stays_in_its_range(jitter_from, jitter):
    b = Backoff(1.0, 60.0, jitter_from=jitter_from, jitter=jitter)
    for n in range(10):
        low, high = b.bounds(n)
        assert low == b.step(n) * jitter_from and high == b.step(n) * (jitter_from + jitter)
        for r in (0.0, 0.25, 0.5, 0.999):
            assert low <= b.delay(n, r) < high


def test_jitter_below_the_value_never_exceeds_the_cap():
    b = Backoff(0.5, 15.0, jitter_from=0.5, jitter=0.5)
    assert max(b.delay(n, 0.999) for n in range(50)) < 15.0
    assert b.delay(0, 0.0) == 0.25


def test_cap_jittered_bounds_the_total_and_jitter_only_adds():
    b = Backoff(1.0, 60.0, jitter=0.5, cap_jittered=True)
    assert [b.delay(n, 0.0) for n in range(4)] == [1, 2, 4, 8]
    assert b.delay(1, 0.999) < 3 <= b.delay(2, 0.0)      # a step's jitter never overtakes the next
    assert b.delay(5, 0.999) == 32 * 1.4995 and b.delay(6, 0.9) == 60   # 64 x 1.45 capped


def test_the_three_users_are_built_from_their_settings_with_the_old_defaults():
    assert outage_backoff(SchedulerSettings()) == Backoff(0.5, 15.0, jitter_from=0.5, jitter=0.5)
    assert hop_backoff(SchedulerSettings()) == Backoff(0.2, 5.0, jitter_from=0.5, jitter=1.0)
    assert PacingPolicy.from_settings(FetcherSettings()).backoff == Backoff(
        1.0, 60.0, factor=2.0, jitter=0.5, cap_jittered=True)
    s = SchedulerSettings(hop_backoff_base=0.1, hop_backoff_max=0.4)
    assert [hop_backoff(s).step(n) for n in range(4)] == [0.1, 0.2, 0.4, 0.4]


def test_hop_backoff_settings_must_be_positive():
    from spiderduck.core.errors import ConfigError
    for name in ("hop_backoff_base", "hop_backoff_max"):
        with pytest.raises(ConfigError, match=name):
            SchedulerSettings(**{name: 0})


# An exponential back-off computed by hand: `2 ** n`, `factor ** attempt`, `** min(...)`.
_BY_HAND = re.compile(r"\b2\s*\*\*\s*[A-Za-z_(]|\*\*\s*(min\(|\(?\s*(attempt|retries|failures|tries)\b)")


def test_no_other_module_computes_a_backoff_by_hand():
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in (".venv", "tests", "build") or rel.as_posix() == "src/spiderduck/core/backoff.py" \
                or "_pb2" in path.name or any(p.startswith(".") for p in rel.parts):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if _BY_HAND.search(line.split("#", 1)[0]):
                offenders.append(f"{rel}:{number}: {line.strip()}")
    assert not offenders, "use spiderduck.core.backoff.Backoff:\n" + "\n".join(offenders)
