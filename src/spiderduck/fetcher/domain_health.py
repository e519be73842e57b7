"""Is a domain healthy enough to fetch from? A sliding window of outcomes (policy only).

    DomainHealth.record(now, result) -> HealthChange | None
      * `halt_after` errors in a row           -> halted until an operator resumes it
      * errors / outcomes > `pause_ratio` over the last `window` seconds, with at least
        `min_requests` outcomes since the last pause ended -> paused for `pause_for`

What counts as an error (`is_error`): no answer at all (connection errors, timeouts, DNS
errors) or an answer saying the server is struggling (5xx, 429). Other 4xx (404, 410, ...),
redirects, robots.txt disallows, blocked addresses and invalid URLs are not the domain's
fault and count as healthy outcomes.

`min_requests` (default 10) keeps one error out of one request from pausing a domain.
The outcomes that caused a pause are not held against the domain again when the pause
ends: the next decision looks only at outcomes after it. They stay in the window for
`status_counts` and `error_rate`, which operators see.

No clock inside: every method takes `now` (monotonic seconds), so tests pass numbers.
"""
from __future__ import annotations

import math
from collections import Counter, deque
from dataclasses import dataclass

from spiderduck.core.config import FetcherSettings
from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import TRANSIENT, Status


def is_error(result: FetchResult) -> bool:
    """Connection errors, timeouts, DNS errors, 5xx and 429 count against a domain."""
    if result.status in TRANSIENT:
        return True
    code = result.http_status
    return result.status is Status.OK and (code == 429 or 500 <= code <= 599)


def outcome_label(result: FetchResult) -> str:
    """The key of `status_counts`: the HTTP code when the origin answered, else the Status name."""
    return str(result.http_status) if result.status is Status.OK else result.status.name


@dataclass(frozen=True)
class HealthPolicy:
    """fetcher.error_window, pause_error_ratio, pause_min_requests, pause_for and
    halt_after_failures (defaults in src/spiderduck/core/settings.py)."""
    window: float        # seconds of outcomes kept per domain
    pause_ratio: float   # pause when errors / outcomes exceed this
    min_requests: int    # ... and at least this many were seen
    pause_for: float     # seconds a pause lasts
    halt_after: int      # errors in a row that halt a domain

    @classmethod
    def from_settings(cls, s: FetcherSettings) -> "HealthPolicy":
        return cls(window=s.error_window, pause_ratio=s.pause_error_ratio,
                   min_requests=s.pause_min_requests, pause_for=s.pause_for,
                   halt_after=s.halt_after_failures)


@dataclass(frozen=True)
class HealthChange:
    state: str                    # "paused" or "halted"
    reason: str
    until: float = math.inf       # monotonic seconds; inf for a halt


class DomainHealth:
    def __init__(self, policy: HealthPolicy):
        self.policy = policy
        self._outcomes: deque[tuple[float, str, bool]] = deque()   # (when, label, error)
        self._evidence_since = -math.inf
        self.consecutive_failures = 0
        self.paused_until = -math.inf
        self.halted = False
        self.reason = ""

    # --- outcomes ---------------------------------------------------------------------
    def record(self, now: float, result: FetchResult) -> HealthChange | None:
        """Note one outcome; returns the pause or halt it caused, if any."""
        error = is_error(result)
        self._outcomes.append((now, outcome_label(result), error))
        self._forget(now)
        self.consecutive_failures = self.consecutive_failures + 1 if error else 0
        if self.halted or not error:
            return None
        p = self.policy
        if self.consecutive_failures >= p.halt_after:
            return self.halt(f"{self.consecutive_failures} failures in a row "
                             f"(last: {outcome_label(result)})")
        if self.is_paused(now):
            return None
        evidence = [e for t, _, e in self._outcomes if t >= self._evidence_since]
        errors = sum(evidence)
        if len(evidence) >= p.min_requests and errors / len(evidence) > p.pause_ratio:
            reason = (f"{errors} errors in {len(evidence)} requests over {p.window:g}s "
                      f"(more than {p.pause_ratio:.0%})")
            return self.pause(now, p.pause_for, reason)
        return None

    def _forget(self, now: float) -> None:
        horizon = now - self.policy.window
        while self._outcomes and self._outcomes[0][0] < horizon:
            self._outcomes.popleft()

    # --- operator and automatic controls ------------------------------------------------
    def pause(self, now: float, seconds: float, reason: str) -> HealthChange:
        self.paused_until = max(self.paused_until, now + seconds)
        self._evidence_since = self.paused_until
        self.reason = reason
        return HealthChange("paused", reason, self.paused_until)

    def halt(self, reason: str) -> HealthChange:
        """Halted until an operator resumes the domain (after failures, or as kept in KV)."""
        self.halted = True
        self.reason = reason
        return HealthChange("halted", reason)

    def resume(self, now: float) -> None:
        """Lift a pause or a halt; the domain starts over with a clean slate of evidence."""
        self.paused_until = -math.inf
        self.halted = False
        self.reason = ""
        self.consecutive_failures = 0
        self._evidence_since = now

    # --- reading ------------------------------------------------------------------------
    def is_paused(self, now: float) -> bool:
        return now < self.paused_until

    def state(self, now: float) -> str:
        if self.halted:
            return "halted"
        return "paused" if self.is_paused(now) else "active"

    def status_counts(self, now: float) -> dict[str, int]:
        self._forget(now)
        return dict(Counter(label for _, label, _ in self._outcomes))

    def totals(self, now: float) -> tuple[int, int]:
        """(outcomes, errors) over the window."""
        self._forget(now)
        return len(self._outcomes), sum(e for _, _, e in self._outcomes)

    def error_rate(self, now: float) -> float:
        total, errors = self.totals(now)
        return errors / total if total else 0.0

    def is_quiet(self, now: float) -> bool:
        """Nothing an operator would miss if this domain were forgotten."""
        return not self.halted and not self.is_paused(now)
