"""What becomes of one delivery of a queued URL, decided apart from doing it.

`decide` maps what one run of the pipeline ended in (None, or the exception it raised), the
message's delivery number, how long this delivery has been retrying an outage, and the
scheduler's settings to one `Verdict`. It does no I/O and keeps no state: the consumer
(src/spiderduck/scheduler/consumer.py) runs the pipeline, asks, and carries the verdict out, as
Finagle's RetryFilter does what its RetryPolicy says.

    Ack            the run succeeded
    Defer          DomainBusy: park it without a slot for about scheduler.busy_retry
    RetryInPlace   an outage (a retryable StoreError or BusError) within outage_retry_for of
                   this delivery: not the URL's fault, retried here using up no delivery
    Retry          a retryable failure before the last delivery: nak, redelivered after retry_delay
    DeadLetter     a message that cannot be decoded, a failure that is not retryable, or any
                   failure on the last delivery (max_deliver), with the reason
"""
from __future__ import annotations

from dataclasses import dataclass

from spiderduck.core.config import SchedulerSettings
from spiderduck.core.errors import BusError, DomainBusy, InvalidMessage, SpiderDuckError, StoreError

OUTAGE_KINDS = (StoreError, BusError)   # failures of what every message needs, not of the URL


class UrlTimeout(SpiderDuckError):
    """One delivery's run passed scheduler.url_timeout: that delivery failed (not an outage)."""
    retryable = True


@dataclass(frozen=True)
class Ack:
    """Done: ack the message."""


@dataclass(frozen=True)
class Defer:
    """The URL's domain is busy here: park the message, holding no slot, for about `around`
    seconds (jittered by the consumer), then run it again; no delivery is used up."""
    around: float
    cause: Exception


@dataclass(frozen=True)
class RetryInPlace:
    """An outage: run it again here after the outage back-off, holding its slot."""
    cause: Exception


@dataclass(frozen=True)
class Retry:
    """A failed delivery: nak it, to be redelivered after `delay` seconds."""
    delay: float
    cause: Exception


@dataclass(frozen=True)
class DeadLetter:
    """No more deliveries: publish it to the dead-letter stream with `reason`, then terminate it."""
    reason: str


Verdict = Ack | Defer | RetryInPlace | Retry | DeadLetter


def is_outage(error: BaseException) -> bool:
    """Whether `error` is an outage's: a retryable store or bus failure."""
    return isinstance(error, OUTAGE_KINDS) and error.retryable


def decide(error: Exception | None, *, delivery: int, settings: SchedulerSettings,
           timed_out: bool = False, outage_lasted: float = 0.0) -> Verdict:
    """The verdict on one run of delivery number `delivery` (1 = the first) that ended in `error`
    (None: it succeeded). `timed_out`: scheduler.url_timeout cut the run short (a TimeoutError
    then is that cut, not the pipeline's own). `outage_lasted`: seconds since this delivery
    first met an outage (0 before it has)."""
    if error is None:
        return Ack()
    if isinstance(error, InvalidMessage):
        return DeadLetter(f"invalid message: {error}")
    if isinstance(error, DomainBusy):
        return Defer(settings.busy_retry, error)
    if timed_out and isinstance(error, TimeoutError):
        error = UrlTimeout(f"the run passed scheduler.url_timeout ({settings.url_timeout:g}s) "
                           "and was cut short")
    retryable = error.retryable if isinstance(error, SpiderDuckError) else True
    if is_outage(error) and _outage_window_open(outage_lasted, settings.outage_retry_for):
        return RetryInPlace(error)
    if not retryable or delivery >= settings.max_deliver:
        return DeadLetter(f"{type(error).__name__}: {error}")
    return Retry(settings.retry_delay, error)


def _outage_window_open(lasted: float, retry_for: float) -> bool:
    """Whether an outage `lasted` seconds into a delivery is still retried in place (0: always)."""
    return not retry_for or lasted < retry_for
