"""spiderduck.bus.submissions owns a submission (issue 28): the bytes each call site sent before, one
error type on NATS failure, and no one else building or publishing one."""
from __future__ import annotations

import asyncio
import hashlib
import re

import pytest
from nats.errors import Error as NatsError

from spiderduck.bus import streams as bus

from spiderduck.bus import submissions
from spiderduck.bus.pending import url_key
from spiderduck.bus.submissions import STALE_REFRESH_SOURCE, stale_refresh
from spiderduck.core.errors import BusError
from spiderduck.core.record import UrlRecord
from spiderduck.core.status import Status
from conftest import ROOT
from spiderduck.v1 import events_pb2

PB = {"Content-Type": bus.PROTOBUF_CONTENT_TYPE}


def test_web_submit_bytes_are_unchanged():
    old = events_pb2.UrlSubmission(url="http://a.test/x", refresh=True, source="web").SerializeToString()
    new = submissions.encode("http://a.test/x", refresh=True, source="web")
    assert (new.data, new.headers, new.urls) == (old, PB, ("http://a.test/x",))


def test_cli_resolve_submission_is_unchanged():
    from spiderduck.cli.resolve import submission
    old = events_pb2.UrlSubmission(url="http://a.test/", source="cli", refresh=False).SerializeToString()
    got = submission("http://a.test/", 5.0)
    assert (got.data, got.headers) == (old, PB)


def test_resolver_crawl_submission_bytes_are_unchanged():
    old = events_pb2.UrlSubmission(url="http://a.test/", refresh=False, id="c0ffee",
                                   source="metadata-api").SerializeToString()
    new = submissions.encode("http://a.test/", refresh=False, submission_id="c0ffee", source="metadata-api",
                             reply_to="_INBOX_SPIDERDUCK.replies.abc.c0ffee")
    assert new.data == old
    assert new.headers == {**PB, bus.REPLY_TO_HEADER: "_INBOX_SPIDERDUCK.replies.abc.c0ffee"}


def test_stale_refresh_bytes_are_unchanged():
    url, record = "http://a.test/", UrlRecord(url="http://a.test/", status=Status.OK, fetched_at=1700000000.25)
    old = events_pb2.UrlSubmission(url=url, refresh=True, source=STALE_REFRESH_SOURCE).SerializeToString()
    digest = hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    assert stale_refresh(url, record) == (old, {**PB, "Nats-Msg-Id": f"spiderduck-refresh-{digest}-1700000000.25"})


async def test_split_part_bytes_are_unchanged():
    from spiderduck.scheduler.stages.submission import Decoder
    from spiderduck.scheduler.task import Submission
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
    from spiderduck.web.actions import ActionFailed, Actions
    with pytest.raises(ActionFailed) as caught:
        await Actions(FakeJs(NatsError("down")), FakeKv(), []).submit("http://a.test/", refresh=False)
    assert caught.value.status == 503 and str(caught.value).startswith("not submitted: ")


# Only src/spiderduck/bus/submissions.py builds, publishes or decodes a submission (issue 28).
SERVICE = ROOT / "src" / "spiderduck"
CLIENT_SIDE = ("client", "v1")     # the client's own distribution publishes submissions too
RULES = {
    "builds": re.compile(r"\bUrlSubmission\("),
    "decodes": re.compile(r"UrlSubmission(\(\))?\.(FromString|ParseFromString)\("),
    "publishes": re.compile(r"publish\(.*(SUBMIT_SUBJECT|[\"']spiderduck\.urls\.submit)"),
}


def _acts(text: str) -> set[str]:
    """What a module's text does to a submission itself, by line."""
    return {act for line in text.splitlines() for act, rule in RULES.items() if rule.search(line)}


def test_only_bus_submissions_builds_decodes_or_publishes_a_submission():
    found = []
    for path in sorted(SERVICE.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if path.relative_to(SERVICE).parts[0] not in CLIENT_SIDE and name != "src/spiderduck/bus/submissions.py":
            found += [f"{name} {act}" for act in sorted(_acts(path.read_text()))]
    assert any(name.startswith("src/spiderduck/scheduler/") for name in
               (p.relative_to(ROOT).as_posix() for p in SERVICE.rglob("*.py")))
    assert found == [], "use spiderduck.bus.submissions (encode, publish, submit, publisher, handed_back, decode_submission)"


def test_the_rule_sees_each_way_around_the_owner():
    assert _acts("await js.publish(bus.SUBMIT_SUBJECT, data)") == {"publishes"}
    assert _acts('await self._js.publish("spiderduck.urls.submit", msg.data, headers=h)') == {"publishes"}
    assert _acts("m = events_pb2.UrlSubmission.FromString(data)") == {"decodes"}
    assert "decodes" in _acts("events_pb2.UrlSubmission().ParseFromString(data)")
    assert _acts("events_pb2.UrlSubmission(url=u).SerializeToString()") == {"builds"}
    assert _acts((ROOT / "src/spiderduck/bus/submissions.py").read_text()) == {"builds", "decodes", "publishes"}


def test_a_handed_back_message_keeps_its_bytes_and_first_submit_time_but_not_its_dedupe_id():
    from spiderduck.bus.submissions import handed_back
    headers = {"Nats-Msg-Id": "spiderduck-split-7-0", "Content-Type": "application/x-protobuf"}
    again = handed_back(b"raw", headers, 1700000000.5)
    assert again.data == b"raw" and again.urls == ()
    assert again.headers == {"Content-Type": "application/x-protobuf", "SpiderDuck-Submitted-At": "1700000000.5"}
    kept = handed_back(b"raw", {"SpiderDuck-Submitted-At": "1.0"}, 99.0)
    assert kept.headers == {"SpiderDuck-Submitted-At": "1.0"} and handed_back(b"x", None, 2.0).headers
