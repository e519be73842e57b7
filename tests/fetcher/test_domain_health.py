"""The outcome window alone: what counts as an error, when a domain pauses, when it halts."""
from __future__ import annotations

import math

import pytest

from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.fetcher.domain_health import DomainHealth, HealthPolicy, is_error, outcome_label


def answer(code: int) -> FetchResult:
    return FetchResult(url="http://h.test/", status=Status.OK, http_status=code)


def failure(status: Status) -> FetchResult:
    return FetchResult(url="http://h.test/", status=status)


@pytest.mark.parametrize("result,error", [
    (failure(Status.CONNECTION_ERROR), True), (failure(Status.TIMEOUT), True),
    (failure(Status.DNS_ERROR), True), (answer(500), True), (answer(503), True),
    (answer(429), True), (answer(200), False), (answer(301), False), (answer(404), False),
    (answer(410), False), (failure(Status.ROBOTS_DISALLOWED), False),
    (failure(Status.BLOCKED_ADDRESS), False), (failure(Status.INVALID_URL), False),
])
def test_what_counts_as_an_error(result, error):
    assert is_error(result) is error


def test_labels_are_http_codes_or_status_names():
    assert outcome_label(answer(503)) == "503"
    assert outcome_label(failure(Status.TIMEOUT)) == "TIMEOUT"


def policy(**kw) -> HealthPolicy:
    return HealthPolicy(**{"window": 60, "pause_ratio": 0.10, "min_requests": 10,
                           "pause_for": 60, "halt_after": 50, **kw})


def test_one_error_in_one_request_does_not_pause():
    h = DomainHealth(policy())
    assert h.record(0, answer(503)) is None
    assert h.state(0) == "active"


def test_more_than_the_ratio_over_the_window_pauses_for_pause_for():
    h = DomainHealth(policy())
    for t in range(9):
        assert h.record(t, answer(200)) is None
    assert h.record(9, answer(500)) is None          # 1 in 10 is not *more* than 10%
    change = h.record(10, answer(500))               # 2 in 11
    assert change is not None and change.state == "paused" and change.until == 70
    assert "2 errors in 11 requests" in change.reason
    assert h.state(69.9) == "paused" and h.state(70) == "active"


def test_the_evidence_of_a_pause_is_not_held_against_the_domain_again():
    h = DomainHealth(policy(min_requests=3, pause_for=10))
    for t in range(3):
        h.record(t, answer(500))
    assert h.state(3) == "paused"                     # until 12
    assert h.record(12, answer(500)) is None          # one new outcome: too few to judge
    assert h.record(13, answer(200)) is None
    assert h.record(14, answer(500)).state == "paused"   # 2 of 3 since the pause ended


def test_outcomes_leave_the_window():
    h = DomainHealth(policy(window=60))
    h.record(0, answer(500))
    h.record(30, answer(200))
    assert h.status_counts(59) == {"500": 1, "200": 1} and h.error_rate(59) == 0.5
    assert h.status_counts(61) == {"200": 1} and h.error_rate(61) == 0.0
    assert h.totals(100) == (0, 0)


def test_failures_in_a_row_halt_until_resumed():
    h = DomainHealth(policy(halt_after=3, pause_ratio=1.0))
    h.record(0, answer(500))
    h.record(1, failure(Status.TIMEOUT))
    h.record(2, answer(200))                          # a success breaks the run
    assert h.consecutive_failures == 0
    for t in (3, 4):
        assert h.record(t, failure(Status.CONNECTION_ERROR)) is None
    change = h.record(5, answer(503))
    assert change.state == "halted" and change.until == math.inf
    assert "3 failures in a row (last: 503)" in change.reason
    assert h.state(10_000) == "halted"
    assert h.record(6, answer(500)) is None           # already halted
    h.resume(7)
    assert h.state(7) == "active" and h.consecutive_failures == 0 and not h.halted


def test_404s_never_pause_or_halt():
    h = DomainHealth(policy(min_requests=2, halt_after=2))
    for t in range(20):
        assert h.record(t, answer(404)) is None
    assert h.state(20) == "active"


def test_an_operator_pause_and_resume():
    h = DomainHealth(policy())
    h.pause(0, 30, "paused by an operator")
    assert h.state(29) == "paused" and h.reason == "paused by an operator"
    h.resume(5)
    assert h.state(5) == "active" and h.reason == ""
