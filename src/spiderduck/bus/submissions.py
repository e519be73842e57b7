"""The one owner of a UrlSubmission the service sends to spiderduck.urls.submit (issue 28).

    encode(url=..., ...)      -> Outgoing(data, headers, urls): the protobuf UrlSubmission and its
                                 headers (Content-Type, and as asked Nats-Msg-Id, SpiderDuck-
                                 Submitted-At, SpiderDuck-Reply-To)
    publish(js, outgoing)     -> publish it through JetStream; a NATS failure raises BusError
    submit(js, queued, out)   -> mark its URLs queued (spiderduck.bus.pending), then publish; BusError

    publisher(js)             -> resubmit(data, headers): publish bytes encoded here (a split's parts,
                                 a stale refresh); what the scheduler's stages are handed
    handed_back(data, headers, published_at) -> Outgoing: a received message queued again as it
                                 came (without its Nats-Msg-Id, with its first submit time)
    decode_submission(data, headers) -> Decoded: what a message on the subject asks for (protobuf
                                 UrlSubmission, JSON, or a bare URL); raises InvalidMessage. Its
                                 first MAX_URLS_PER_MESSAGE URLs are `urls`, the rest `over`,
                                 each without its userinfo (urls.without_userinfo)
    over_limit(decoded, headers, delivery=, stream_seq=) -> [(letter, msg_id)]: the dead letters
                                 of the URLs over the limit, each resubmittable as it is
    dead_letter(reason, data, headers, delivery=) -> bytes: a message's dead letter (JSON), as
                                 spiderduck.urls.dead holds every one
    dead_letterer(js)         -> dead_letter(letter, msg_id): publish one there; BusError
    reply_subject(headers)    -> the subject a ResolveUrl call waits on (streams.REPLIES_PREFIX), or ""

The scheduler's Decoder (scheduler.stages.submission) is the one reader of the subject and calls
decode_submission. The client library (spiderduck.client) keeps its own encoder, since it must
not import the service; tests/client/test_client_library.py submits through it to a running
scheduler, which decodes it here. Call sites that turn a NATS failure into an error of their
own do so from BusError.
"""
from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Mapping

from google.protobuf.message import DecodeError
from nats.errors import Error as NatsError

from spiderduck.bus.pending import mark_queued
from spiderduck.bus.streams import (DEAD_SUBJECT, PROTOBUF_CONTENT_TYPE, REPLIES_PREFIX, REPLY_TO_HEADER, SUBMIT_SUBJECT,
                                    SUBMITTED_AT_HEADER)
from spiderduck.core import telemetry
from spiderduck.core.errors import BusError, InvalidMessage
from spiderduck.core.record import UrlRecord
from spiderduck.core.tweets import fetchable, urls_in_tweet
from spiderduck.core.urls import without_userinfo
from spiderduck.v1 import events_pb2
from spiderduck.core.frozen import evolve

MSG_ID_HEADER = "Nats-Msg-Id"


@dataclass(frozen=True)
class Outgoing:
    """One submission as sent: its bytes, its headers, and the URLs to mark queued."""
    data: bytes
    headers: dict[str, str] = field(default_factory=dict)
    urls: tuple[str, ...] = ()


def encode(url: str = "", *, tweet: str = "", refresh: bool = False, source: str = "",
           submission_id: str = "", url_index: int = 0, url_count: int = 0,
           msg_id: str = "", submitted_at: float | None = None, reply_to: str = "",
           traceparent: str = "") -> Outgoing:
    """A protobuf UrlSubmission of one `url` or one `tweet` (exactly one), with its headers:
    Content-Type always; Nats-Msg-Id (JetStream's dedupe id) when `msg_id`; SpiderDuck-Submitted-At
    (repr of the float) when `submitted_at` is not None; SpiderDuck-Reply-To when `reply_to`;
    traceparent (W3C Trace Context: the scheduler's spans continue that trace) when `traceparent`.
    The URL goes out without its userinfo (`user:password@`), which intake would drop anyway."""
    if bool(url) == bool(tweet):
        raise ValueError("a submission holds exactly one of url and tweet")
    url = without_userinfo(url)     # never kept in the stream, nor marked under another key
    fields: dict[str, object] = {"url": url} if url else {"tweet": tweet}
    for name, value in (("refresh", refresh), ("source", source), ("id", submission_id),
                        ("url_index", url_index), ("url_count", url_count)):
        if value:
            fields[name] = value
    data = events_pb2.UrlSubmission(**fields).SerializeToString()
    headers = {"Content-Type": PROTOBUF_CONTENT_TYPE}
    if msg_id:
        headers[MSG_ID_HEADER] = msg_id
    if submitted_at is not None:
        headers[SUBMITTED_AT_HEADER] = repr(submitted_at)
    if reply_to:
        headers[REPLY_TO_HEADER] = reply_to
    if traceparent:
        headers[telemetry.TRACEPARENT] = traceparent
    return Outgoing(data, headers, (url,) if url else ())


async def publish(js, outgoing: Outgoing) -> None:
    """Publishes `outgoing`, its headers carrying the current span's traceparent (traces on,
    src/spiderduck/core/telemetry.py) unless they carry one already: a split's parts, a refresh and a
    handed-back copy stay in the trace of the message they came from. Through JetStream (which
    confirms it stored it). Raises BusError."""
    try:
        await js.publish(SUBMIT_SUBJECT, outgoing.data, headers=telemetry.inject(dict(outgoing.headers)))
    except (NatsError, asyncio.TimeoutError) as exc:
        raise BusError(f"cannot publish to {SUBMIT_SUBJECT}: {exc}") from exc


async def submit(js, queued, outgoing: Outgoing, *, mark_required: bool = True) -> None:
    """Mark the submission's URLs queued in `queued` (the KV bucket of spiderduck.bus.pending), then
    publish it. A failed mark raises BusError unless not `mark_required` (then only `pending`
    suffers, and it is published anyway); a failed publish raises BusError."""
    if outgoing.urls:
        try:
            await mark_queued(queued, outgoing.urls)
        except BusError:
            if mark_required:
                raise
    await publish(js, outgoing)



Resubmit = Callable[[bytes, dict[str, str]], Awaitable[None]]


def publisher(js) -> Resubmit:
    """resubmit(data, headers): publish a submission encoded here (a split's part, a stale
    refresh) through JetStream. Raises BusError (retryable)."""
    async def resubmit(data: bytes, headers: dict[str, str]) -> None:
        await publish(js, Outgoing(data, headers))
    return resubmit


def handed_back(data: bytes, headers: Mapping[str, str] | None, published_at: float) -> Outgoing:
    """A received message queued again, as it came: without its Nats-Msg-Id (JetStream would drop
    it as a duplicate) and with the time its producer first published it."""
    again = {k: v for k, v in (headers or {}).items() if k != MSG_ID_HEADER}
    again.setdefault(SUBMITTED_AT_HEADER, repr(published_at))
    return Outgoing(data, again)


# Decoding: what a message on spiderduck.urls.submit asks for.

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
    over: tuple[str, ...] = ()  # the URLs past MAX_URLS_PER_MESSAGE, in order: never processed
                                # from this message, but dead-lettered (over_limit)

    def place(self, i: int) -> tuple[int, int]:
        """(url_index, url_count) of this submission's i-th URL, as its event reports them."""
        return (self.index, self.count) if self.count else (i, len(self.urls))


def decode_submission(data: bytes, headers: Mapping[str, str] | None = None) -> Decoded:
    """What a message asks for, each URL without its userinfo (`user:password@`: never sent,
    kept or announced). Raises InvalidMessage."""
    decoded = _decode(data, headers)
    for url in decoded.urls:
        _unicode("a URL", url)
    decoded = evolve(decoded, urls=[without_userinfo(u) for u in decoded.urls])
    if len(decoded.urls) > MAX_URLS_PER_MESSAGE:
        decoded = evolve(decoded, urls=decoded.urls[:MAX_URLS_PER_MESSAGE],
                                      over=tuple(decoded.urls[MAX_URLS_PER_MESSAGE:]))
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
        if not obj["urls"]:
            raise InvalidMessage("urls must hold at least one string")
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
    unique = list(dict.fromkeys(found))
    if not unique:
        raise InvalidMessage("the tweet contains no URL")
    return unique


# Dead letters: spiderduck.urls.dead, one JSON object per message (or part of one) given up on.

DeadLetter = Callable[[bytes, str], Awaitable[None]]
_NOT_RESUBMITTED = {"Content-Type", MSG_ID_HEADER, REPLY_TO_HEADER}


def dead_letter(reason: str, data: bytes, headers: Mapping[str, str] | None, *, delivery: int,
                **extra: object) -> bytes:
    """A dead letter: why (`reason`), the delivery it came on, the subject and headers, the
    message's bytes (data_base64, and data when UTF-8 text: at most MAX_MESSAGE_BYTES of them),
    and any `extra` fields."""
    entry: dict[str, object] = {"reason": reason, "delivery": delivery, "subject": SUBMIT_SUBJECT,
                                "headers": dict(headers or {}),
                                "data_base64": base64.b64encode(data[:MAX_MESSAGE_BYTES]).decode("ascii")}
    try:
        entry["data"] = data[:MAX_MESSAGE_BYTES].decode("utf-8")
    except UnicodeDecodeError:
        pass
    entry.update(extra)
    return json.dumps(entry).encode("utf-8")


def dead_letterer(js) -> DeadLetter:
    """dead_letter(letter, msg_id): publish a dead letter through JetStream, with Nats-Msg-Id
    `msg_id` when given (so one repeated after a crash is dropped). Raises BusError (retryable)."""
    async def publish_letter(letter: bytes, msg_id: str = "") -> None:
        try:
            await js.publish(DEAD_SUBJECT, letter, headers={MSG_ID_HEADER: msg_id} if msg_id else None)
        except (NatsError, asyncio.TimeoutError) as exc:
            raise BusError(f"cannot publish to {DEAD_SUBJECT}: {exc}") from exc
    return publish_letter


def over_limit(decoded: Decoded, headers: Mapping[str, str] | None, *, delivery: int,
               stream_seq: int) -> list[tuple[bytes, str]]:
    """The dead letters of a message's URLs over MAX_URLS_PER_MESSAGE: one per
    MAX_URLS_PER_MESSAGE of them, each (letter, Nats-Msg-Id made of the message's stream
    sequence). A letter's reason names its URLs' places and the limit; its `urls` lists them;
    its data is a JSON {"urls": [...]} submission of them alone (with the message's refresh, id
    and source), which may be published to spiderduck.urls.submit as it is, with its headers
    (the message's, but Content-Type, Nats-Msg-Id and SpiderDuck-Reply-To)."""
    total = len(decoded.urls) + len(decoded.over)
    kept = {k: v for k, v in (headers or {}).items() if k not in _NOT_RESUBMITTED}
    letters = []
    for start in range(0, len(decoded.over), MAX_URLS_PER_MESSAGE):
        chunk = list(decoded.over[start:start + MAX_URLS_PER_MESSAGE])
        first = len(decoded.urls) + start + 1
        last = first + len(chunk) - 1
        places = f"URL {first} of {total} is" if first == last else f"URLs {first} to {last} of {total} are"
        reason = (f"{places} over the limit of {MAX_URLS_PER_MESSAGE} URLs per message: not processed "
                  f"(the first {len(decoded.urls)} were); data submits them alone")
        options = {"refresh": decoded.refresh, "id": decoded.id, "source": decoded.source}
        data = json.dumps({"urls": chunk, **{k: v for k, v in options.items() if v}}, ensure_ascii=False)
        letters.append((dead_letter(reason, data.encode("utf-8"), kept, delivery=delivery, urls=chunk),
                        f"spiderduck-over-{stream_seq}-{start // MAX_URLS_PER_MESSAGE}"))
    return letters


_INBOX = re.compile(re.escape(REPLIES_PREFIX) + r"\.[A-Za-z0-9_-]{1,64}\.[A-Za-z0-9_-]{1,64}")


def reply_subject(headers: Mapping[str, str] | None) -> str:
    """The SpiderDuck-Reply-To of a ResolveUrl submission: a subject under REPLIES_PREFIX (anything else is
    ignored, so a producer cannot have outcomes published on another subject)."""
    value = (headers or {}).get(REPLY_TO_HEADER, "")
    return value if _INBOX.fullmatch(value) else ""


STALE_REFRESH_SOURCE = "spiderduck:stale-refresh"


def stale_refresh(url: str, record: UrlRecord) -> tuple[bytes, dict[str, str]]:
    """The submission (data, headers) that refreshes a record answered STALE: a UrlSubmission
    with refresh set, whose Nats-Msg-Id names the URL and the record's fetch, so every STALE
    answer of one record within JetStream's duplicate window queues one refresh."""
    digest = hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    out = encode(url, refresh=True, source=STALE_REFRESH_SOURCE,
                 msg_id=f"spiderduck-refresh-{digest}-{record.fetched_at!r}")
    return out.data, out.headers
