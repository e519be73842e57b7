"""Stage 1, the Tweet Processor (Decoder): a submission becomes one or more URLs.

Input: a Submission (one message from spiderduck.urls.submit). Output: the Outcomes of its URLs'
tasks (CrawlTask, one per URL), or none when it was split. Failure: InvalidMessage (not
retryable: dead-lettered); a failed resubmit raises BusError (retried in place as an outage).
This is one of the scheduler's three protobuf edges: it reads UrlSubmission.

Accepted on spiderduck.urls.submit:
  - protobuf UrlSubmission (header Content-Type: application/x-protobuf)
  - JSON {"url": "..."} / {"urls": [...]} / {"tweet": "..."}, each with the optional
    "refresh" (true/false), "id" and "source" (strings of at most MAX_LABEL_CHARS)
  - a bare URL (UTF-8 text)
Anything else raises InvalidMessage, which the consumer dead-letters.

A submission with the header SpiderDuck-Reply-To (an _INBOX subject: a ResolveUrl call waiting)
has its outcome sent there instead of announced (CrawlTask.reply_to).

A submission of several URLs (a list, or a tweet: every URL in it, in order of appearance) is
split: each URL goes back on the subject as a message of its own, carrying its place (url_index,
url_count, echoed in its event so a consumer can pick the card) (Decoder's `resubmit`), so each has its own outcome, retries and dead letter. A
URL that failed is never retried with those that succeeded. The parts keep the submission's refresh,
id and source, and carry a Nats-Msg-Id made of
the original's stream sequence, so a split repeated after a crash is dropped by JetStream's
duplicate window, and the original's submit time, so latency still counts from the producer.
"""
from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Awaitable, Callable, Mapping

from google.protobuf.message import DecodeError

from common import submissions
from common.bus import PROTOBUF_CONTENT_TYPE, REPLY_TO_HEADER
from common.errors import InvalidMessage
from common.tweets import fetchable, urls_in_tweet
from scheduler.stages.chain import Next
from scheduler.task import CrawlTask, Outcome, Submission
from spiderduck.v1 import events_pb2

MAX_MESSAGE_BYTES = 64 * 1024
MAX_URLS_PER_MESSAGE = 100
MAX_LABEL_CHARS = 256       # of a submission's id and source, echoed in every event of its URLs


@dataclass(frozen=True)
class Decoded:
    """What a message asks for: its URLs, in order, and the options that go with each."""
    urls: list[str]
    refresh: bool = False      # re-fetch even if the record is fresh (at most once per min_refresh_interval)
    id: str = ""               # the producer's name for the submission, echoed as submission_id
    source: str = ""           # who submitted, echoed in the event
    index: int = 0             # a split part's place among its submission's URLs (UrlSubmission.url_index)
    count: int = 0             # and their number; 0: the URLs are these (count len(urls))

    def place(self, i: int) -> tuple[int, int]:
        """(url_index, url_count) of this submission's i-th URL, as its event reports them."""
        return (self.index, self.count) if self.count else (i, len(self.urls))


def decode_submission(data: bytes, headers: Mapping[str, str] | None = None) -> Decoded:
    """What a message asks for. Raises InvalidMessage."""
    decoded = _decode(data, headers)
    for url in decoded.urls:
        _unicode("a URL", url)
    return decoded


def _unicode(what: str, value: str) -> None:
    """JSON may hold a lone surrogate (\\ud800), which no UTF-8 encoder takes, and so no event."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidMessage(f"{what} holds a lone surrogate ({ascii(value)[:60]}): not Unicode text") from None


def _decode(data: bytes, headers: Mapping[str, str] | None) -> Decoded:
    if len(data) > MAX_MESSAGE_BYTES:
        raise InvalidMessage(f"message of {len(data)} bytes exceeds {MAX_MESSAGE_BYTES}")
    if (headers or {}).get("Content-Type") == PROTOBUF_CONTENT_TYPE:
        return _from_protobuf(data)
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise InvalidMessage(f"message is neither UTF-8 text nor a marked protobuf: {exc}") from exc
    if not text:
        raise InvalidMessage("empty message")
    if text.startswith(("{", "[")):
        return _from_json(text)
    if any(c.isspace() for c in text):
        raise InvalidMessage("a bare URL message must be one URL without spaces; "
                             'send {"tweet": ...} for text')
    return Decoded([text])


def _from_protobuf(data: bytes) -> Decoded:
    try:
        msg = events_pb2.UrlSubmission.FromString(data)
    except DecodeError as exc:
        raise InvalidMessage(f"not a UrlSubmission protobuf: {exc}") from exc
    kind = msg.WhichOneof("payload")
    if kind == "url":
        urls = [msg.url]
    elif kind == "tweet":
        urls = _tweet(msg.tweet)
    else:
        raise InvalidMessage("UrlSubmission has neither url nor tweet")
    if (msg.url_index or msg.url_count) and not (kind == "url" and 0 <= msg.url_index < msg.url_count
                                                  <= MAX_URLS_PER_MESSAGE):
        raise InvalidMessage(f"url_index {msg.url_index} of url_count {msg.url_count}: a split part's place "
                             f"must be 0 <= url_index < url_count <= {MAX_URLS_PER_MESSAGE}, on a url")
    return Decoded(urls, msg.refresh, _label("id", msg.id), _label("source", msg.source),
                   msg.url_index, msg.url_count)


def _from_json(text: str) -> Decoded:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidMessage(f"malformed JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise InvalidMessage("JSON submission must be an object")
    if isinstance(obj.get("url"), str):
        urls = [obj["url"]]
    elif isinstance(obj.get("urls"), list) and all(isinstance(u, str) for u in obj["urls"]):
        if not obj["urls"] or len(obj["urls"]) > MAX_URLS_PER_MESSAGE:
            raise InvalidMessage(f"urls must hold 1 to {MAX_URLS_PER_MESSAGE} strings")
        urls = list(obj["urls"])
    elif isinstance(obj.get("tweet"), str):
        urls = _tweet(obj["tweet"])
    else:
        raise InvalidMessage('JSON submission needs a string "url", a list "urls" or a string "tweet"')
    refresh = obj.get("refresh", False)
    if not isinstance(refresh, bool):
        raise InvalidMessage(f'"refresh" must be true or false, not {json.dumps(refresh)[:40]}')
    return Decoded(urls, refresh, _label("id", obj.get("id", "")), _label("source", obj.get("source", "")))


def _label(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidMessage(f'"{name}" must be a string, not {json.dumps(value)[:40]}')
    if len(value) > MAX_LABEL_CHARS:
        raise InvalidMessage(f'"{name}" of {len(value)} characters exceeds {MAX_LABEL_CHARS}')
    _unicode(f'"{name}"', value)
    return value


def _tweet(text: str) -> list[str]:
    found = [fetchable(u) for u in urls_in_tweet(text)]
    unique = list(dict.fromkeys(found))[:MAX_URLS_PER_MESSAGE]
    if not unique:
        raise InvalidMessage("the tweet contains no URL")
    return unique


Resubmit = Callable[[bytes, dict[str, str]], Awaitable[None]]

_INBOX = re.compile(r"_INBOX\.[A-Za-z0-9_-]{1,64}\.[A-Za-z0-9_-]{1,64}")


def reply_subject(headers: Mapping[str, str] | None) -> str:
    """The SpiderDuck-Reply-To of a ResolveUrl submission: an _INBOX subject (anything else is
    ignored, so a producer cannot have outcomes published on another subject)."""
    value = (headers or {}).get(REPLY_TO_HEADER, "")
    return value if _INBOX.fullmatch(value) else ""


class Decoder:
    """One submission's URLs: one URL goes on down the stages; several are split into messages of
    their own by `resubmit` (publish to spiderduck.urls.submit). Without `resubmit`, or for a
    submission not read from the stream, several run here at once and the first failure fails all.
    """

    def __init__(self, resubmit: Resubmit | None = None):
        self._resubmit = resubmit

    async def __call__(self, submission: Submission, next: Next[CrawlTask, Outcome]) -> tuple[Outcome, ...]:
        decoded = decode_submission(submission.data, submission.headers)
        if len(decoded.urls) > 1 and self._resubmit is not None and submission.stream_seq:
            await self._split(submission, decoded)
            return ()
        reply_to = reply_subject(submission.headers)
        tasks = [CrawlTask(submitted=u, received_at=submission.received_at, attempt=submission.delivery,
                           refresh=decoded.refresh, submission_id=decoded.id, source=decoded.source,
                           reply_to=reply_to, place=decoded.place(i))
                 for i, u in enumerate(decoded.urls)]
        results = await asyncio.gather(*(next(t) for t in tasks), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return tuple(results)

    async def _split(self, submission: Submission, decoded: Decoded) -> None:
        for i, url in enumerate(decoded.urls):
            part = submissions.encode(url, source=decoded.source, refresh=decoded.refresh,
                                      submission_id=decoded.id, url_index=i, url_count=len(decoded.urls),
                                      msg_id=f"spiderduck-split-{submission.stream_seq}-{i}",
                                      submitted_at=submission.received_at)
            await self._resubmit(part.data, part.headers)
