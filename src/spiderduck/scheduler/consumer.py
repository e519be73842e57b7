"""The queue reader: a JetStream durable pull consumer feeding the pipeline.

Many messages are in flight at once (bounded by scheduler.max_in_flight). A
message is acked only after its pipeline run returns, i.e. after persist and
notify. A message whose domain is busy in this scheduler (DomainBusy) is parked
without holding a slot and retried after about scheduler.busy_retry, so a slow domain
never starves the others. A retryable failure naks it for redelivery after retry_delay; the last
allowed delivery, and any message that cannot be decoded, goes to the dead-letter
stream with the reason, then is acked (terminated). An outage (a metadata or content store, or
NATS, failing: a retryable StoreError or BusError) is not the URL's fault and uses up none of
its deliveries: the message stays here, holding its slot, and is retried in place with capped
exponential backoff (scheduler.outage_backoff_base/_max) for up to scheduler.outage_retry_for
per delivery, so a store down for minutes costs no URL. Which of these becomes of a run is
decided apart, by src/spiderduck/scheduler/delivery_policy.py; this module carries it out. Long
runs send in-progress heartbeats so JetStream does not redeliver a message still being worked
on. With traces on (src/spiderduck/core/telemetry.py) each delivery's run is a span
continuing the trace of the message's `traceparent` header (its submitter's), the stages'
spans inside it.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from typing import Any, Awaitable, Callable

from nats.errors import MsgAlreadyAckdError
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from opentelemetry.trace import SpanKind

from spiderduck.bus import submissions
from spiderduck.bus.streams import SCHEDULER_DURABLE, SUBMIT_SUBJECT, SUBMITTED_AT_HEADER, URLS_STREAM
from spiderduck.core import metrics
from spiderduck.core import telemetry
from spiderduck.core.backoff import Backoff
from spiderduck.core.config import SchedulerSettings
from spiderduck.scheduler.delivery_policy import Ack, DeadLetter, Defer, Retry, RetryInPlace, Verdict, decide
from spiderduck.scheduler.intake import PULL_EXPIRES, PULL_GRACE, PullIntake
from spiderduck.scheduler.task import Submission

log = logging.getLogger("spiderduck.scheduler")

Handler = Callable[[Submission], Awaitable[Any]]
HAND_BACK_WAIT = 2.0   # seconds cancelled runs get to nak their messages
ACK_TIMEOUT = 1.0      # seconds to wait for the server to confirm an ack
ACK_RETRY = 0.25       # seconds between tries while it does not


def outage_backoff(s: SchedulerSettings) -> Backoff:
    """scheduler.outage_backoff_base doubling up to outage_backoff_max, the upper half of it at
    random (so held messages do not retry in step)."""
    return Backoff(s.outage_backoff_base, s.outage_backoff_max, jitter_from=0.5, jitter=0.5)


class Outage:
    """One delivery's in-place retries of outage failures: since when, and the (capped,
    jittered, doubling) wait before each retry. Which failures those are, and for how long,
    the policy decides (delivery_policy.decide, given `lasted`)."""

    def __init__(self, settings: SchedulerSettings, *, clock=time.monotonic, rand=random.random):
        self._backoff = outage_backoff(settings)
        self._clock = clock
        self._rand = rand
        self.since: float | None = None     # when this delivery first met the outage
        self.retries = 0

    def next_wait(self) -> float:
        """Seconds to wait before the next retry: base x 2^retries up to the cap, the upper
        half of it at random (so held messages do not retry in step). The first call marks
        when the outage began."""
        if self.since is None:
            self.since = self._clock()
        wait = self._backoff.delay(self.retries, self._rand())
        self.retries += 1
        return wait

    @property
    def lasted(self) -> float:
        return 0.0 if self.since is None else self._clock() - self.since


class Stats(dict):
    """Message outcomes, kept here (stats["acked"]) and counted as spiderduck_scheduler_messages_total."""

    def __init__(self, recorder):
        super().__init__(acked=0, nacked=0, dead_lettered=0, deferred=0, outage_retried=0)
        self._recorder = recorder

    def add(self, outcome: str) -> None:
        self[outcome] += 1
        self._recorder.count("messages", outcome=outcome)


class Consumer:
    def __init__(self, nc, js, handler: Handler, settings: SchedulerSettings):
        self._nc = nc
        self._js = js
        self._handler = handler
        self._settings = settings
        self._in_flight: set[asyncio.Task] = set()
        self._active = 0
        self._holding: set[asyncio.Task] = set()   # tasks that count in _active
        self._stopping = asyncio.Event()
        self._returns: list = []                    # pulled while stopping: to hand back
        self._room = asyncio.Condition()
        self._publish_dead = submissions.dead_letterer(js)
        self.stats = Stats(metrics.recorder("scheduler"))
        metrics.recorder("scheduler").gauge("in_flight", self.in_flight)

    def in_flight(self) -> int:
        """Messages being worked on now (spiderduck_scheduler_in_flight)."""
        return self._active

    def consumer_config(self) -> ConsumerConfig:
        s = self._settings
        return ConsumerConfig(
            durable_name=SCHEDULER_DURABLE, ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL, ack_wait=s.ack_wait, max_deliver=s.max_deliver,
            max_ack_pending=s.max_ack_pending, filter_subject=SUBMIT_SUBJECT)

    async def run(self, stop: asyncio.Event, drain_for: float | None = None) -> None:
        """Pull and dispatch until `stop` is set, then drain what is in flight: messages still
        running after `drain_for` seconds are cancelled and handed back (nak), so a stop takes
        bounded time and another scheduler takes them at once."""
        intake = PullIntake(self._nc, self._js, stream=URLS_STREAM, durable=SCHEDULER_DURABLE,
                            config=self.consumer_config())
        await intake.start()
        pulling = asyncio.create_task(self._pull(intake))
        stopped = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait([pulling, stopped], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            # Set first: the pull loop checks it, since a cancel can be lost (Python 3.11's
            # wait_for drops one that lands as a message arrives; nats-py may turn one into
            # ConnectionClosedError).
            self._stopping.set()
            pulling.cancel()            # a pull waiting on the server is cut short
            await asyncio.wait([pulling], timeout=PULL_EXPIRES + PULL_GRACE)
            # What the open pull request still brings, and what was pulled while stopping, goes
            # back at once (nak), not after ack_wait; but only now that no pull request of ours
            # is open: a nak while one is would bring the message straight back to us, again
            # and again, until its deliveries ran out and JetStream stopped delivering it.
            for msg in self._returns + await intake.leftovers():
                await self._hand_back(msg)
            self._returns.clear()
            await intake.stop()
            await self.drain(drain_for)
            await self._hand_back_unfinished()

    async def _pull(self, intake: PullIntake) -> None:
        limit = self._settings.max_in_flight
        while not self._stopping.is_set():
            await self._wait_for_room(limit)
            want = min(self._settings.fetch_batch, limit - self._active)
            try:
                async for msg in intake.pull(want):
                    if self._stopping.is_set():
                        self._returns.append(msg)       # handed back once the pull is over
                    else:
                        self._dispatch(msg)
            except Exception as exc:   # noqa: BLE001 -- connection trouble: nats-py reconnects
                if self._stopping.is_set():
                    return
                log.warning("pull from %s failed: %r", URLS_STREAM, exc)
                await asyncio.sleep(1.0)

    async def _wait_for_room(self, limit: int) -> None:
        async with self._room:
            await self._room.wait_for(lambda: self._active < limit)

    def _dispatch(self, msg) -> None:
        self._active += 1
        task = asyncio.create_task(self._run_one(msg))
        self._holding.add(task)
        self._in_flight.add(task)
        task.add_done_callback(self._in_flight.discard)

    async def _hand_back(self, msg) -> None:
        """A message this scheduler will not finish: back to the stream for whoever runs next.
        A stop is not the message's failure, so on its last allowed delivery (where a nak
        would never be redelivered) a fresh copy is queued instead and this one acked."""
        try:
            if msg.metadata.num_delivered < self._settings.max_deliver:
                await msg.nak()
                return
            await submissions.publish(self._js, submissions.handed_back(msg.data, msg.headers, _published_at(msg)))
            await self._ack(msg)
        except Exception as exc:   # noqa: BLE001 -- not acked: redelivered after ack_wait anyway
            log.warning("could not hand a message back (redelivered after ack_wait): %r", exc)

    async def _run_one(self, msg) -> None:
        heartbeat = asyncio.create_task(self._heartbeat(msg))
        outage = Outage(self._settings)
        try:
            while True:
                verdict = await self._run_handler(msg, outage)
                match verdict:
                    case RetryInPlace(cause=cause):
                        # Not the URL's fault: retried here, holding the slot (every message
                        # would meet the same outage, so pulling more would not help), with no
                        # delivery used up; the heartbeat keeps JetStream from redelivering it.
                        self.stats.add("outage_retried")
                        wait = outage.next_wait()
                        (log.warning if outage.retries == 1 else log.debug)(
                            "message (delivery %d) met an outage, retrying in place in %.2gs "
                            "(%d retries over %.3gs): %s", msg.metadata.num_delivered, wait,
                            outage.retries, outage.lasted, cause)
                        if not await self._pause(wait):
                            await self._hand_back(msg)   # stopping: to whoever runs next, at once
                            return
                    case Defer(around=around, cause=cause):
                        # Park it without holding a slot: others use the slot meanwhile, and
                        # waiting on a busy domain uses up none of the message's deliveries.
                        self.stats.add("deferred")
                        log.debug("parking a message: %s", cause)
                        await self._leave()
                        if not await self._pause(around * (0.5 + random.random())):
                            await self._hand_back(msg)   # to whoever runs next, at once
                            return
                        async with self._room:
                            await self._room.wait_for(lambda: self._active < self._settings.max_in_flight)
                            self._active += 1
                            self._holding.add(asyncio.current_task())
                    case _:
                        await self._settle(msg, verdict)
                        return
        except asyncio.CancelledError:
            # Cut short by a stop past its drain time: back to the stream at once (a run
            # that had stored and announced its URLs is then done again: at least once).
            await self._hand_back(msg)
            raise
        except Exception:
            # Not acked: JetStream redelivers it after ack_wait.
            log.exception("message left for redelivery")
        finally:
            heartbeat.cancel()
            await self._leave()

    async def _pause(self, seconds: float) -> bool:
        """Wait `seconds`; False at once when a stop comes meanwhile (or came before)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)
        return not self._stopping.is_set()

    async def _leave(self) -> None:
        """Give back this message's slot (at most once per take)."""
        task = asyncio.current_task()
        if task in self._holding:
            self._holding.discard(task)
            self._active -= 1
            async with self._room:
                self._room.notify_all()

    async def drain(self, timeout: float | None = None) -> None:
        if self._in_flight:
            log.info("draining %d messages in flight", len(self._in_flight))
            await asyncio.wait(set(self._in_flight), timeout=timeout)

    async def _hand_back_unfinished(self) -> None:
        """Cancel the runs the drain left; each hands its message back (see _run_one)."""
        late = set(self._in_flight)
        if not late:
            return
        log.warning("handing back %d messages still in flight at the drain's end", len(late))
        for task in late:
            task.cancel()
        await asyncio.wait(late, timeout=HAND_BACK_WAIT)

    async def _run_handler(self, msg, outage: Outage) -> Verdict:
        """Run the pipeline once on `msg` (within scheduler.url_timeout, in a span continuing the
        submitter's trace) and return the policy's verdict on how it ended."""
        meta = msg.metadata
        delivery = meta.num_delivered
        submission = Submission(data=msg.data, headers=dict(msg.headers or {}),
                                received_at=_published_at(msg), delivery=delivery,
                                stream_seq=meta.sequence.stream)
        deadline = asyncio.timeout(self._settings.url_timeout or None)
        try:
            with telemetry.span("process submission", parent=telemetry.extract(submission.headers),
                                kind=SpanKind.CONSUMER,
                                attributes={"messaging.destination.name": SUBMIT_SUBJECT,
                                            "spiderduck.delivery": delivery,
                                            "spiderduck.stream_seq": submission.stream_seq}):
                async with deadline:
                    await self._handler(submission)
        except Exception as exc:
            return decide(exc, delivery=delivery, settings=self._settings,
                          timed_out=deadline.expired(), outage_lasted=outage.lasted)
        return decide(None, delivery=delivery, settings=self._settings)

    async def _settle(self, msg, verdict: Ack | Retry | DeadLetter) -> None:
        """Carry out a verdict that ends this delivery: ack, nak for redelivery, or dead-letter."""
        delivery = msg.metadata.num_delivered
        match verdict:
            case Ack():
                await self._ack(msg)
                self.stats.add("acked")
            case Retry(delay=delay, cause=cause):
                log.warning("message (delivery %d) failed, redelivering in %gs: %s", delivery, delay, cause)
                self.stats.add("nacked")
                await msg.nak(delay=delay)
            case DeadLetter(reason=reason):
                await self._dead_letter(msg, reason, delivery)

    async def _ack(self, msg) -> None:
        """Ack and wait for the server to confirm it, retrying for up to half of ack_wait. A
        plain ack sent while the consumer has no leader (a NATS node lost) is dropped, and the
        message would be redelivered and its URL announced again."""
        deadline = time.monotonic() + self._settings.ack_wait / 2
        while True:
            try:
                await msg.ack_sync(timeout=ACK_TIMEOUT)
                return
            except MsgAlreadyAckdError:
                return
            except Exception as exc:   # noqa: BLE001 -- no leader yet, a reconnect: try again
                if time.monotonic() >= deadline:
                    log.warning("ack not confirmed (redelivered after ack_wait): %r", exc)
                    return
                await asyncio.sleep(ACK_RETRY)

    async def _heartbeat(self, msg) -> None:
        period = max(self._settings.ack_wait / 3, 0.5)
        while True:
            await asyncio.sleep(period)
            try:
                await msg.in_progress()
            except Exception:
                return

    async def _dead_letter(self, msg, reason: str, delivery: int) -> None:
        log.warning("dead-lettering message (delivery %d): %s", delivery, reason)
        await self._publish_dead(submissions.dead_letter(reason, msg.data, msg.headers, delivery=delivery))
        await msg.term()
        self.stats.add("dead_lettered")


def _published_at(msg) -> float:
    """When the producer submitted it: a split part's or re-queued copy's header, else the
    stream's timestamp."""
    meta = msg.metadata
    return (_submitted_at(dict(msg.headers or {}))
            or (meta.timestamp.timestamp() if meta.timestamp else time.time()))


def _submitted_at(headers: dict[str, str]) -> float | None:
    """The original submit time a split part (see src/spiderduck/scheduler/stages/submission.py) or a re-queued copy carries, if it
    is a sane one."""
    try:
        value = float(headers.get(SUBMITTED_AT_HEADER, ""))
    except ValueError:
        return None
    return value if 0 < value <= time.time() + 60 else None
