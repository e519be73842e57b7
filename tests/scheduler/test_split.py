"""A submission of several URLs, against a real nats-server and the real consumer: each URL's
outcome is its own. One that keeps failing is retried and dead-lettered alone; the others are
processed exactly once; a split repeated after a crash adds no message."""
from __future__ import annotations

import asyncio
import base64
import json

import pytest

from spiderduck.bus import streams as bus
from spiderduck.core.config import SchedulerSettings
from spiderduck.scheduler.consumer import Consumer
from spiderduck.scheduler.stages.chain import compose
from spiderduck.scheduler.stages.submission import Decoder
from spiderduck.scheduler.task import Submission
from spiderduck.scheduler.worker import publisher
from spiderduck.v1 import events_pb2

SETTINGS = SchedulerSettings(max_deliver=3, retry_delay=0.05, ack_wait=30.0, busy_retry=0.05)


class Last:
    """The stage after the Decoder: fails every attempt at a "poison" URL, counts the rest."""

    def __init__(self):
        self.attempts: dict[str, list[float]] = {}
        self.places: dict[str, tuple[int, int]] = {}
        self.changed = asyncio.Event()

    async def __call__(self, task, next):
        self.places[task.submitted] = task.place
        self.attempts.setdefault(task.submitted, []).append(task.received_at)
        self.changed.set()
        if "poison" in task.submitted:
            raise RuntimeError("this page always breaks")
        return task.submitted


async def until(condition, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


async def run_consumer(nc, js, last: Last):
    stop = asyncio.Event()
    consumer = Consumer(nc, js, compose(Decoder(publisher(js, bus.SUBMIT_SUBJECT)), last), SETTINGS)
    task = asyncio.create_task(consumer.run(stop))
    return consumer, stop, task


@pytest.mark.parametrize("message,tld", [
    (json.dumps({"urls": ["http://a.test/", "http://poison.test/", "http://b.test/"]}).encode(), "test"),
    # twitter-text finds URLs by their top-level domain, which .test is not
    (events_pb2.UrlSubmission(tweet="read http://a.com/ and http://poison.com/ and http://b.com/",
                              source="firehose").SerializeToString(), "com"),
], ids=["list", "tweet"])
async def test_each_url_of_a_message_has_its_own_outcome(bus_js, message, tld):
    nc, js = bus_js
    dead = await nc.subscribe(bus.DEAD_SUBJECT)
    last = Last()
    consumer, stop, task = await run_consumer(nc, js, last)
    headers = ({"Content-Type": bus.PROTOBUF_CONTENT_TYPE} if not message.startswith(b"{") else None)
    await js.publish(bus.SUBMIT_SUBJECT, message, headers=headers)
    try:
        await until(lambda: len(last.attempts.get(f"http://poison.{tld}/", ())) == SETTINGS.max_deliver
                    and consumer.stats["dead_lettered"] == 1)
        letter = await dead.next_msg(timeout=10)
    finally:
        stop.set()
        await task
    assert len(last.attempts[f"http://a.{tld}/"]) == 1
    assert len(last.attempts[f"http://b.{tld}/"]) == 1
    entry = json.loads(letter.data)
    assert "this page always breaks" in entry["reason"]
    part = events_pb2.UrlSubmission.FromString(base64.b64decode(entry["data_base64"]))
    assert part.url == f"http://poison.{tld}/"
    # The parts count latency from when the producer sent the original, not from the split.
    times = {t for attempts in last.attempts.values() for t in attempts}
    assert len(times) == 1
    assert consumer.stats["acked"] == 3       # the original and the two good parts
    if not message.startswith(b"{"):
        assert part.source == "firehose"


async def test_a_split_repeated_after_a_crash_adds_no_message(bus_js):
    nc, js = bus_js
    decoder = Decoder(publisher(js, bus.SUBMIT_SUBJECT))
    original = Submission(json.dumps({"urls": ["http://a.test/", "http://b.test/"]}).encode(),
                          received_at=1700000000.5, stream_seq=41)

    async def never(task):
        raise AssertionError("a split submission goes no further")
    assert await decoder(original, never) == ()
    assert await decoder(original, never) == ()      # redelivered: the scheduler died before its ack
    info = await js.stream_info(bus.URLS_STREAM)
    assert info.state.messages == 2
    sub = await js.pull_subscribe(bus.SUBMIT_SUBJECT, durable="check")
    parts = await sub.fetch(2, timeout=5)
    assert [events_pb2.UrlSubmission.FromString(m.data).url for m in parts] == ["http://a.test/", "http://b.test/"]
    assert {m.headers[bus.SUBMITTED_AT_HEADER] for m in parts} == {"1700000000.5"}


async def test_one_url_goes_on_and_a_message_not_from_the_stream_is_not_split():
    resubmitted = []

    async def resubmit(data, headers):
        resubmitted.append(data)

    async def next_(task):
        return task.submitted
    decoder = Decoder(resubmit)
    assert await decoder(Submission(b"http://a.test/", stream_seq=3), next_) == ("http://a.test/",)
    both = Submission(b'{"urls": ["http://a.test/", "http://b.test/"]}')      # stream_seq 0
    assert await decoder(both, next_) == ("http://a.test/", "http://b.test/")
    assert resubmitted == []


async def test_a_tweets_urls_are_all_resolved_each_with_its_place_in_order_of_appearance(bus_js):
    nc, js = bus_js
    last = Last()
    consumer, stop, task = await run_consumer(nc, js, last)
    tweet = "first https://z.com/1 then http://a.com/2, again https://z.com/1 and last m.com/3"
    await js.publish(bus.SUBMIT_SUBJECT, json.dumps({"tweet": tweet}).encode())
    try:
        await until(lambda: len(last.places) == 3)
    finally:
        stop.set()
        await task
    assert last.places == {"https://z.com/1": (0, 3), "http://a.com/2": (1, 3), "http://m.com/3": (2, 3)}


@pytest.mark.parametrize("index, count", [(3, 3), (-1, 2), (0, 101), (1, 0)])
def test_a_part_claiming_an_impossible_place_is_refused(index, count):
    from spiderduck.bus.submissions import decode_submission
    from spiderduck.core.errors import InvalidMessage
    data = events_pb2.UrlSubmission(url="http://a.test/", url_index=index, url_count=count).SerializeToString()
    with pytest.raises(InvalidMessage, match="url_index"):
        decode_submission(data, {"Content-Type": bus.PROTOBUF_CONTENT_TYPE})


def test_a_single_url_is_first_of_one():
    from spiderduck.bus.submissions import decode_submission
    assert decode_submission(b"http://a.test/").place(0) == (0, 1)
    part = events_pb2.UrlSubmission(url="http://a.test/", url_index=2, url_count=4).SerializeToString()
    assert decode_submission(part, {"Content-Type": bus.PROTOBUF_CONTENT_TYPE}).place(0) == (2, 4)
