"""The one owner of a UrlSubmission the service sends to spiderduck.urls.submit (issue 28).

    encode(url=..., ...)      -> Outgoing(data, headers, urls): the protobuf UrlSubmission and its
                                 headers (Content-Type, and as asked Nats-Msg-Id, SpiderDuck-
                                 Submitted-At, SpiderDuck-Reply-To)
    publish(js, outgoing)     -> publish it through JetStream; a NATS failure raises BusError
    submit(js, queued, out)   -> mark its URLs queued (common.pending), then publish; BusError

Decoding stays with the scheduler's Decoder (scheduler.stages.submission.decode_submission), the
one reader of the subject. The client library (spiderduck.client) keeps its own copy, since it
must not import the service. Call sites that turn a NATS failure into an error of their own do so
from BusError.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from nats.errors import Error as NatsError

from common.bus import PROTOBUF_CONTENT_TYPE, REPLY_TO_HEADER, SUBMIT_SUBJECT, SUBMITTED_AT_HEADER
from common.errors import BusError
from common.pending import mark_queued
from spiderduck.v1 import events_pb2

MSG_ID_HEADER = "Nats-Msg-Id"


@dataclass(frozen=True)
class Outgoing:
    """One submission as sent: its bytes, its headers, and the URLs to mark queued."""
    data: bytes
    headers: dict[str, str] = field(default_factory=dict)
    urls: tuple[str, ...] = ()


def encode(url: str = "", *, tweet: str = "", refresh: bool = False, source: str = "",
           submission_id: str = "", url_index: int = 0, url_count: int = 0,
           msg_id: str = "", submitted_at: float | None = None, reply_to: str = "") -> Outgoing:
    """A protobuf UrlSubmission of one `url` or one `tweet` (exactly one), with its headers:
    Content-Type always; Nats-Msg-Id (JetStream's dedupe id) when `msg_id`; SpiderDuck-Submitted-At
    (repr of the float) when `submitted_at` is not None; SpiderDuck-Reply-To when `reply_to`."""
    if bool(url) == bool(tweet):
        raise ValueError("a submission holds exactly one of url and tweet")
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
    return Outgoing(data, headers, (url,) if url else ())


async def publish(js, outgoing: Outgoing) -> None:
    """Publish through JetStream (which confirms it stored it). Raises BusError."""
    try:
        await js.publish(SUBMIT_SUBJECT, outgoing.data, headers=outgoing.headers)
    except (NatsError, asyncio.TimeoutError) as exc:
        raise BusError(f"cannot publish to {SUBMIT_SUBJECT}: {exc}") from exc


async def submit(js, queued, outgoing: Outgoing, *, mark_required: bool = True) -> None:
    """Mark the submission's URLs queued in `queued` (the KV bucket of common.pending), then
    publish it. A failed mark raises BusError unless not `mark_required` (then only `pending`
    suffers, and it is published anyway); a failed publish raises BusError."""
    if outgoing.urls:
        try:
            await mark_queued(queued, outgoing.urls)
        except BusError:
            if mark_required:
                raise
    await publish(js, outgoing)

