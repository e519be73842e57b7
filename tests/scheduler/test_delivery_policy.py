"""The delivery policy (src/spiderduck/scheduler/delivery_policy.py) alone: every verdict and its
boundaries from plain values, with no NATS and no event loop. The consumer carrying the verdicts
out against a real nats-server is tests/scheduler/test_outage.py's."""
from __future__ import annotations

import ast
import pathlib
import typing

import pytest

from spiderduck.core.config import SchedulerSettings
from spiderduck.core.errors import (BusError, ConfigError, DomainBusy, FetcherUnavailable,
                                    InvalidMessage, StoreError)
from spiderduck.scheduler import delivery_policy
from spiderduck.scheduler.delivery_policy import (Ack, DeadLetter, Defer, Retry, RetryInPlace,
                                                  UrlTimeout, Verdict, decide, is_outage)

SETTINGS = SchedulerSettings(max_deliver=3, retry_delay=5.0, busy_retry=1.5, hop_timeout=10.0,
                             url_timeout=60.0, outage_retry_for=100.0)


def verdict(error, delivery=1, settings=SETTINGS, **state):
    return decide(error, delivery=delivery, settings=settings, **state)


def test_a_run_that_succeeded_is_acked_on_any_delivery():
    assert verdict(None) == Ack()
    assert verdict(None, delivery=3) == Ack()             # the last allowed one too
    assert verdict(None, timed_out=True, outage_lasted=1e9) == Ack()


@pytest.mark.parametrize("delivery, expected", [(1, Retry), (2, Retry), (3, DeadLetter), (4, DeadLetter)])
def test_a_retryable_failure_is_redelivered_until_the_last_allowed_delivery(delivery, expected):
    error = RuntimeError("this page broke")
    got = verdict(error, delivery=delivery)
    assert type(got) is expected
    if expected is Retry:
        assert got == Retry(5.0, error)                   # after scheduler.retry_delay
    else:
        assert got == DeadLetter("RuntimeError: this page broke")


@pytest.mark.parametrize("error, reason", [
    (InvalidMessage("not a URL: b'\\xff'"), "invalid message: not a URL: b'\\xff'"),
    (ConfigError("no such stage"), "ConfigError: no such stage"),
    (StoreError("cassandra write: InvalidRequest", retryable=False),
     "StoreError: cassandra write: InvalidRequest"),
    (FetcherUnavailable("gone", retryable=False), "FetcherUnavailable: gone"),
])
def test_what_no_delivery_can_fix_is_dead_lettered_on_the_first(error, reason):
    assert verdict(error, delivery=1) == DeadLetter(reason)


def test_a_busy_domain_is_deferred_using_up_no_delivery_even_the_last():
    busy = DomainBusy("a.test has 64 hops waiting")
    assert verdict(busy, delivery=1) == Defer(1.5, busy)  # about scheduler.busy_retry
    assert verdict(busy, delivery=3) == Defer(1.5, busy)
    assert verdict(busy, delivery=3, outage_lasted=1e9) == Defer(1.5, busy)


@pytest.mark.parametrize("error", [StoreError("cassandra read: NoHostAvailable"), BusError("cannot publish")])
def test_an_outage_is_retried_in_place_on_any_delivery_while_its_window_is_open(error):
    assert is_outage(error)
    for delivery in (1, 3, 7):                            # the last allowed one and past it too
        assert verdict(error, delivery=delivery) == RetryInPlace(error)
        assert verdict(error, delivery=delivery, outage_lasted=99.999) == RetryInPlace(error)


@pytest.mark.parametrize("delivery, expected", [(1, Retry), (3, DeadLetter)])
def test_past_outage_retry_for_an_outage_counts_as_a_failed_delivery(delivery, expected):
    error = StoreError("the record is refused, every time")
    assert verdict(error, delivery=delivery, outage_lasted=99.9) == RetryInPlace(error)
    closed = verdict(error, delivery=delivery, outage_lasted=100.0)     # just closed
    assert type(closed) is expected
    assert verdict(error, delivery=delivery, outage_lasted=1e6) == closed


def test_no_outage_retry_for_retries_an_outage_in_place_for_as_long_as_it_lasts():
    forever = SchedulerSettings(max_deliver=3, outage_retry_for=0)
    error = BusError("down")
    assert verdict(error, delivery=3, settings=forever, outage_lasted=1e9) == RetryInPlace(error)


def test_only_retryable_store_and_bus_failures_are_outages():
    assert not is_outage(RuntimeError("the page's fault"))
    assert not is_outage(FetcherUnavailable("no fetcher answered"))    # retryable, not an outage
    assert not is_outage(StoreError("bad request", retryable=False))
    assert not is_outage(BusError("bad subject", retryable=False))
    unavailable = FetcherUnavailable("no fetcher answered")
    assert verdict(unavailable) == Retry(5.0, unavailable)            # a failed delivery instead


def test_the_url_timeout_cut_is_a_failed_delivery_named_for_its_setting():
    cut = TimeoutError()
    retried = verdict(cut, delivery=1, timed_out=True)
    assert type(retried) is Retry and isinstance(retried.cause, UrlTimeout)
    assert str(retried.cause) == "the run passed scheduler.url_timeout (60s) and was cut short"
    assert verdict(cut, delivery=3, timed_out=True) == DeadLetter(
        "UrlTimeout: the run passed scheduler.url_timeout (60s) and was cut short")
    # Never an outage, however long one has lasted.
    assert type(verdict(cut, delivery=1, timed_out=True, outage_lasted=1.0)) is Retry


def test_a_timeout_of_the_pipelines_own_is_not_the_url_timeout():
    own = TimeoutError("robots.txt took too long")
    assert verdict(own, delivery=1) == Retry(5.0, own)
    assert verdict(own, delivery=3) == DeadLetter("TimeoutError: robots.txt took too long")
    # The deadline passed, but the run ended in another error: that error is the verdict's.
    store = StoreError("down")
    assert verdict(store, delivery=1, timed_out=True) == RetryInPlace(store)


def test_the_policy_reads_its_settings_as_given():
    one = SchedulerSettings(max_deliver=1, retry_delay=0.25, busy_retry=4.0)
    error = RuntimeError("x")
    assert verdict(error, delivery=1, settings=one) == DeadLetter("RuntimeError: x")
    more = SchedulerSettings(max_deliver=9, retry_delay=0.25)
    assert verdict(error, delivery=8, settings=more) == Retry(0.25, error)
    busy = DomainBusy("b")
    assert verdict(busy, settings=one) == Defer(4.0, busy)


def test_every_verdict_is_reachable():
    reached = {type(verdict(error, delivery=delivery, **state)) for error, delivery, state in [
        (None, 1, {}), (DomainBusy("busy"), 1, {}), (StoreError("down"), 1, {}),
        (RuntimeError("x"), 1, {}), (RuntimeError("x"), 3, {})]}
    assert reached == set(typing.get_args(Verdict))


# The policy decides and does nothing: it may import only plain values and the vocabulary.
PURE_IMPORTS = {"__future__", "dataclasses", "spiderduck.core.config", "spiderduck.core.errors"}


def _impure_imports(source: str) -> set[str]:
    """The modules `source` imports (anywhere in it) beyond PURE_IMPORTS."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module or "")
    return found - PURE_IMPORTS


def test_the_policy_does_no_io():
    assert _impure_imports(pathlib.Path(delivery_policy.__file__).read_text()) == set()
    synthetic = "import asyncio\nfrom spiderduck.core.errors import StoreError\n" \
                "def decide():\n    from nats.errors import Error\n"
    assert _impure_imports(synthetic) == {"asyncio", "nats.errors"}
