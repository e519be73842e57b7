"""A message of more URLs than one message may carry (issue 29): its first MAX_URLS_PER_MESSAGE are
processed as any split's, and the ones over the limit are dead-lettered with the reason, in letters
an operator can resubmit as they are. None is cut silently."""
from __future__ import annotations

import json

import pytest
from nats.errors import Error as NatsError

from spiderduck.bus import streams as bus

from spiderduck.bus import submissions
from spiderduck.bus.submissions import MAX_URLS_PER_MESSAGE, decode_submission, over_limit
from spiderduck.core.errors import BusError, InvalidMessage
from spiderduck.scheduler.stages.submission import Decoder
from spiderduck.scheduler.task import Submission
from spiderduck.v1 import events_pb2

PB = {"Content-Type": bus.PROTOBUF_CONTENT_TYPE}


def links(n: int, start: int = 0) -> list[str]:
    # twitter-text finds URLs by their top-level domain, which .test is not
    return [f"http://h{i}.example.com/p" for i in range(start, start + n)]


def tweet(urls: list[str]) -> bytes:
    return events_pb2.UrlSubmission(tweet=" ".join(urls), source="firehose", id="t1").SerializeToString()


def test_a_tweets_urls_past_the_limit_are_kept_as_over_in_order_of_appearance():
    urls = links(105)
    decoded = decode_submission(tweet(urls + urls[:3]), PB)         # repeats are one URL
    assert decoded.urls == urls[:MAX_URLS_PER_MESSAGE]
    assert decoded.over == tuple(urls[MAX_URLS_PER_MESSAGE:])


@pytest.mark.parametrize("n", [1, MAX_URLS_PER_MESSAGE])
def test_up_to_the_limit_nothing_is_over(n):
    assert decode_submission(json.dumps({"urls": links(n)}).encode()).over == ()
    assert decode_submission(json.dumps({"tweet": " ".join(links(n))}).encode()).over == ()


def test_a_json_list_past_the_limit_is_split_like_a_tweet_not_refused_whole():
    decoded = decode_submission(json.dumps({"urls": links(140), "refresh": True}).encode())
    assert (len(decoded.urls), decoded.over) == (100, tuple(links(40, 100)))
    with pytest.raises(InvalidMessage, match="at least one"):
        decode_submission(b'{"urls": []}')


def test_the_letters_name_the_places_and_the_limit_and_resubmit_as_they_are():
    headers = {**PB, "Nats-Msg-Id": "producer-1", bus.REPLY_TO_HEADER: "_INBOX_SPIDERDUCK.replies.a.b", "X-Team": "feeds"}
    decoded = decode_submission(tweet(links(250)), PB)
    letters = over_limit(decoded, headers, delivery=2, stream_seq=41)
    assert [msg_id for _, msg_id in letters] == ["spiderduck-over-41-0", "spiderduck-over-41-1"]
    first, second = (json.loads(letter) for letter, _ in letters)
    assert first["reason"].startswith("URLs 101 to 200 of 250 are over the limit of 100 URLs per message")
    assert second["reason"].startswith("URLs 201 to 250 of 250 are over the limit of 100 URLs per message")
    assert (first["delivery"], first["subject"], first["headers"]) == (2, bus.SUBMIT_SUBJECT, {"X-Team": "feeds"})
    assert first["urls"] == links(100, 100) and second["urls"] == links(50, 200)
    # Its data, published as it is, is a message of those URLs alone with the original's options.
    again = decode_submission(first["data"].encode(), first["headers"])
    assert (again.urls, again.over, again.source, again.id) == (links(100, 100), (), "firehose", "t1")
    assert first["data_base64"]


def test_one_url_over_is_named_alone():
    decoded = decode_submission(json.dumps({"urls": links(101)}).encode())
    [(letter, _)] = over_limit(decoded, {}, delivery=1, stream_seq=3)
    assert json.loads(letter)["reason"].startswith("URL 101 of 101 is over the limit of 100 URLs per message")


class Sent:
    def __init__(self):
        self.parts: list[str] = []
        self.letters: list[tuple[dict, str]] = []
        self.order: list[str] = []

    async def resubmit(self, data, headers):
        self.parts.append(events_pb2.UrlSubmission.FromString(data).url)
        self.order.append("part")

    async def dead_letter(self, letter, msg_id):
        self.letters.append((json.loads(letter), msg_id))
        self.order.append("letter")


async def test_the_decoder_splits_the_first_hundred_and_dead_letters_the_rest_after_them():
    sent = Sent()
    message = Submission(tweet(links(105)), PB, received_at=1700000000.5, delivery=1, stream_seq=9)
    assert await Decoder(sent.resubmit, sent.dead_letter)(message, None) == ()
    assert sent.parts == links(100)
    [(letter, msg_id)] = sent.letters
    assert letter["urls"] == links(5, 100) and msg_id == "spiderduck-over-9-0"
    assert "URLs 101 to 105 of 105" in letter["reason"]
    assert sent.order == ["part"] * 100 + ["letter"]


@pytest.mark.parametrize("how", ["no dead_letter", "not from the stream"])
async def test_a_decoder_that_cannot_dead_letter_refuses_the_message_whole_saying_so(how):
    sent = Sent()
    decoder = Decoder(sent.resubmit) if how == "no dead_letter" else Decoder(sent.resubmit, sent.dead_letter)
    message = Submission(tweet(links(101)), PB, stream_seq=0 if how == "not from the stream" else 4)
    with pytest.raises(InvalidMessage, match="101 URLs are over the limit of 100 URLs per message.*none was"):
        await decoder(message, None)
    assert sent.order == []


async def test_a_failed_dead_letter_publish_is_retryable():
    class DownJs:
        async def publish(self, subject, data, headers=None):
            raise NatsError("down")
    with pytest.raises(BusError) as caught:
        await submissions.dead_letterer(DownJs())(b"{}", "x")
    assert caught.value.retryable
