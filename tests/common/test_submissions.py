"""common.submissions owns a submission (issue 28): the bytes each call site sent before, one
error type on NATS failure, and no one else building or publishing one."""
from __future__ import annotations

import asyncio
import hashlib
import re

import pytest
from nats.errors import Error as NatsError

from common import bus, submissions
from common.errors import BusError
from common.freshness import STALE_REFRESH_SOURCE, stale_refresh
from common.pending import url_key
from common.record import UrlRecord
from common.status import Status
from conftest import ROOT
from spiderduck.v1 import events_pb2

PB = {"Content-Type": bus.PROTOBUF_CONTENT_TYPE}


def test_web_submit_bytes_are_unchanged():
    old = events_pb2.UrlSubmission(url="http://a.test/x", refresh=True, source="web").SerializeToString()
    new = submissions.encode("http://a.test/x", refresh=True, source="web")
    assert (new.data, new.headers, new.urls) == (old, PB, ("http://a.test/x",))


def test_cli_resolve_submission_is_unchanged():
    from cli.resolve import submission
    old = events_pb2.UrlSubmission(url="http://a.test/", source="cli", refresh=False).SerializeToString()
    got = submission("http://a.test/", 5.0)
    assert (got.data, got.headers) == (old, PB)


def test_resolver_crawl_submission_bytes_are_unchanged():
    old = events_pb2.UrlSubmission(url="http://a.test/", refresh=False, id="c0ffee",
                                   source="metadata-api").SerializeToString()
    new = submissions.encode("http://a.test/", refresh=False, submission_id="c0ffee", source="metadata-api",
                             reply_to="_INBOX.abc.c0ffee")
    assert new.data == old
    assert new.headers == {**PB, bus.REPLY_TO_HEADER: "_INBOX.abc.c0ffee"}


def test_stale_refresh_bytes_are_unchanged():
    url, record = "http://a.test/", UrlRecord(url="http://a.test/", status=Status.OK, fetched_at=1700000000.25)
    old = events_pb2.UrlSubmission(url=url, refresh=True, source=STALE_REFRESH_SOURCE).SerializeToString()
    digest = hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    assert stale_refresh(url, record) == (old, {**PB, "Nats-Msg-Id": f"spiderduck-refresh-{digest}-1700000000.25"})


async def test_split_part_bytes_are_unchanged():
    from scheduler.stages.submission import Decoder
    from scheduler.task import Submission
    sent = []

    async def resubmit(data, headers):
        sent.append((data, headers))
    message = b'{"urls": ["http://a.test/", "http://b.test/"], "id": "x", "source": "s", "refresh": true}'
    assert await Decoder(resubmit)(Submission(message, {}, received_at=1700000000.5, stream_seq=7), None) == ()
    old = [(events_pb2.UrlSubmission(url=u, source="s", refresh=True, id="x", url_index=i,
                                     url_count=2).SerializeToString(),
            {**PB, "Nats-Msg-Id": f"spiderduck-split-7-{i}", bus.SUBMITTED_AT_HEADER: "1700000000.5"})
           for i, u in enumerate(["http://a.test/", "http://b.test/"])]
    assert sent == old


def test_tweet_and_exactly_one_payload():
    assert submissions.encode(tweet="see http://a.test/").data == \
        events_pb2.UrlSubmission(tweet="see http://a.test/").SerializeToString()
    assert submissions.encode(tweet="t").urls == ()
    with pytest.raises(ValueError):
        submissions.encode()
    with pytest.raises(ValueError):
        submissions.encode("http://a.test/", tweet="t")


class FakeJs:
    def __init__(self, fail: BaseException | None = None):
        self.fail, self.sent = fail, []

    async def publish(self, subject, data, headers=None):
        if self.fail is not None:
            raise self.fail
        self.sent.append((subject, data, headers))


class FakeKv:
    def __init__(self, fail: BaseException | None = None):
        self.fail, self.keys = fail, []

    async def put(self, key, value):
        if self.fail is not None:
            raise self.fail
        self.keys.append(key)


async def test_submit_marks_queued_then_publishes():
    js, kv = FakeJs(), FakeKv()
    out = submissions.encode("http://a.test/", source="web")
    await submissions.submit(js, kv, out)
    assert kv.keys == [url_key("http://a.test/")]
    assert js.sent == [(bus.SUBMIT_SUBJECT, out.data, out.headers)]


@pytest.mark.parametrize("fail", [NatsError("down"), asyncio.TimeoutError()])
async def test_nats_failures_are_bus_errors(fail):
    out = submissions.encode("http://a.test/")
    with pytest.raises(BusError):
        await submissions.publish(FakeJs(fail), out)
    with pytest.raises(BusError):
        await submissions.submit(FakeJs(fail), FakeKv(), out)
    js = FakeJs()
    with pytest.raises(BusError):
        await submissions.submit(js, FakeKv(fail), out)
    assert js.sent == []                      # not published when it could not be marked


async def test_a_mark_not_required_is_tolerated():
    js = FakeJs()
    await submissions.submit(js, FakeKv(NatsError("kv down")), submissions.encode("http://a.test/"),
                             mark_required=False)
    assert len(js.sent) == 1


async def test_web_action_turns_bus_error_into_503():
    from web.actions import ActionFailed, Actions
    with pytest.raises(ActionFailed) as caught:
        await Actions(FakeJs(NatsError("down")), FakeKv(), []).submit("http://a.test/", refresh=False)
    assert caught.value.status == 503 and str(caught.value).startswith("not submitted: ")


# Service modules that publish to the submit subject themselves, outside common/submissions.py,
# and are not this module's to change (issue 28): the scheduler's wiring of the Decoder's and
# crawl decision's `resubmit` (scheduler.worker.publisher) and the consumer handing a message back
# (its bytes as received). Remove a line when its publish moves here; never add one.
KNOWN_PUBLISHERS = {"scheduler/worker.py", "scheduler/consumer.py"}
SERVICE_DIRS = ("common", "scheduler", "metadata_api", "web", "cli", "fetcher")
BUILDS = re.compile(r"\bUrlSubmission\(")
PUBLISHES = re.compile(r"\.publish\(\s*(bus\.)?SUBMIT_SUBJECT\b|publisher\([^)]*SUBMIT_SUBJECT")


def test_only_common_submissions_builds_or_publishes_a_submission():
    builders, publishers = [], []
    for folder in SERVICE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if name == "common/submissions.py":
                continue
            text = path.read_text()
            if BUILDS.search(text):
                builders.append(name)
            if PUBLISHES.search(text) and name not in KNOWN_PUBLISHERS:
                publishers.append(name)
    assert builders == [], "build it with common.submissions.encode"
    assert publishers == [], "publish it with common.submissions.publish/submit"


def test_known_publishers_still_publish():
    """A KNOWN_PUBLISHERS line whose publish has gone must go too."""
    for name in KNOWN_PUBLISHERS:
        assert PUBLISHES.search((ROOT / name).read_text()), name
