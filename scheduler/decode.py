"""Stage 1, the Tweet Processor: a submission becomes one or more URLs.

Accepted on spiderduck.urls.submit:
  - protobuf UrlSubmission (header Content-Type: application/x-protobuf)
  - JSON {"url": "..."} / {"urls": [...]} / {"tweet": "..."}
  - a bare URL (UTF-8 text)
Anything else raises InvalidMessage, which the consumer dead-letters.
"""
from __future__ import annotations

import asyncio
import json
from typing import Mapping

from google.protobuf.message import DecodeError

from common.bus import PROTOBUF_CONTENT_TYPE
from common.errors import InvalidMessage
from common.tweets import fetchable, urls_in_tweet
from scheduler.stage import Next
from scheduler.task import CrawlTask, Outcome, Submission
from spiderduck.v1 import events_pb2

MAX_MESSAGE_BYTES = 64 * 1024
MAX_URLS_PER_MESSAGE = 100


def decode_submission(data: bytes, headers: Mapping[str, str] | None = None) -> list[str]:
    """The URLs a message asks for, in order. Raises InvalidMessage."""
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
    return [text]


def _from_protobuf(data: bytes) -> list[str]:
    msg = events_pb2.UrlSubmission()
    try:
        msg.ParseFromString(data)
    except DecodeError as exc:
        raise InvalidMessage(f"not a UrlSubmission protobuf: {exc}") from exc
    kind = msg.WhichOneof("payload")
    if kind == "url":
        return [msg.url]
    if kind == "tweet":
        return _tweet(msg.tweet)
    raise InvalidMessage("UrlSubmission has neither url nor tweet")


def _from_json(text: str) -> list[str]:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidMessage(f"malformed JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise InvalidMessage("JSON submission must be an object")
    if isinstance(obj.get("url"), str):
        return [obj["url"]]
    if isinstance(obj.get("urls"), list) and all(isinstance(u, str) for u in obj["urls"]):
        if not obj["urls"] or len(obj["urls"]) > MAX_URLS_PER_MESSAGE:
            raise InvalidMessage(f"urls must hold 1 to {MAX_URLS_PER_MESSAGE} strings")
        return list(obj["urls"])
    if isinstance(obj.get("tweet"), str):
        return _tweet(obj["tweet"])
    raise InvalidMessage('JSON submission needs a string "url", a list "urls" or a string "tweet"')


def _tweet(text: str) -> list[str]:
    found = [fetchable(u) for u in urls_in_tweet(text)]
    unique = list(dict.fromkeys(found))[:MAX_URLS_PER_MESSAGE]
    if not unique:
        raise InvalidMessage("the tweet contains no URL")
    return unique


class Decoder:
    """Fans one submission out to one task per URL, concurrently; fails if any fails."""

    async def __call__(self, submission: Submission, next: Next) -> tuple[Outcome, ...]:
        urls = decode_submission(submission.data, submission.headers)
        tasks = [CrawlTask(submitted=u, received_at=submission.received_at,
                           attempt=submission.delivery) for u in urls]
        results = await asyncio.gather(*(next(t) for t in tasks), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return tuple(results)
