"""Exponential back-off, the one rule: the wait before a retry after `attempt` earlier tries.

    step(attempt)  = min(cap, base * factor**attempt)            (attempt 0 = the first retry)
    delay(attempt) = step x a factor drawn from [jitter_from, jitter_from + jitter)

With `cap_jittered` the cap applies to the jittered value instead (the jitter never makes it
longer than `cap`). Used by the scheduler's outage retries (src/spiderduck/scheduler/consumer.py), the
fetcher's per-domain back-off on errors (src/spiderduck/fetcher/pacing.py) and the scheduler's retries of a
busy or moved fetcher (src/spiderduck/scheduler/fetcher_client.py), each built from its own settings. The
type holds no state: callers count attempts, and reset by starting again at 0. Its values
are checked where they are configured (src/spiderduck/core/settings.py).
"""
from __future__ import annotations

from dataclasses import dataclass

_MAX_EXPONENT = 60     # beyond this every sane base * factor**n is past any cap (and no overflow)


@dataclass(frozen=True)
class Backoff:
    base: float                  # seconds: the first step
    cap: float                   # seconds: no step (or, with cap_jittered, no delay) exceeds this
    factor: float = 2.0          # each further attempt multiplies the step by this
    jitter: float = 0.0          # width of the random factor's range (0 = none)
    jitter_from: float = 1.0     # the random factor's lowest value: 1.0 adds, 0.5 may halve
    cap_jittered: bool = False   # cap the jittered delay rather than the step

    def _raw(self, attempt: int) -> float:
        return self.base * self.factor ** min(max(attempt, 0), _MAX_EXPONENT)

    def step(self, attempt: int) -> float:
        """The capped step before jitter: base, base x factor, ... up to cap."""
        return min(self.cap, self._raw(attempt))

    def delay(self, attempt: int, rnd: float) -> float:
        """The wait before the retry after `attempt` earlier ones; `rnd` in [0, 1) draws the jitter."""
        spread = self.jitter_from + self.jitter * rnd
        if self.cap_jittered:
            return min(self.cap, self._raw(attempt) * spread)
        return self.step(attempt) * spread

    def bounds(self, attempt: int) -> tuple[float, float]:
        """The least and the most `delay(attempt, ·)` can be."""
        return self.delay(attempt, 0.0), self.delay(attempt, 1.0)
