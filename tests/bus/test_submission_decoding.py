"""What a message on spiderduck.urls.submit asks for (spiderduck.bus.submissions.decode_submission), and
what is refused, with the reason the dead letter carries."""
from __future__ import annotations

import pytest

from spiderduck.bus.submissions import Decoded, decode_submission, reply_subject
from spiderduck.core.errors import InvalidMessage
from spiderduck.v1 import events_pb2


@pytest.mark.parametrize("data,headers,urls", [
    (b"http://a.test/x", None, ["http://a.test/x"]),
    (b'{"url": "http://a.test/"}', None, ["http://a.test/"]),
    (b'{"urls": ["http://a.test/", "http://b.test/"]}', None, ["http://a.test/", "http://b.test/"]),
    (b'{"tweet": "see https://t.co/abc and https://t.co/abc"}', None, ["https://t.co/abc"]),
    (events_pb2.UrlSubmission(url="http://p.test/").SerializeToString(),
     {"Content-Type": "application/x-protobuf"}, ["http://p.test/"]),
    (events_pb2.UrlSubmission(tweet="x twitter.com/a y").SerializeToString(),
     {"Content-Type": "application/x-protobuf"}, ["http://twitter.com/a"]),
])
def test_decode_accepts_every_documented_shape(data, headers, urls):
    assert decode_submission(data, headers) == Decoded(urls)


@pytest.mark.parametrize("data,headers", [
    (b'{"url": "http://a.test/", "refresh": true, "id": "req-7", "source": "bot"}', None),
    (b'{"urls": ["http://a.test/"], "refresh": true, "id": "req-7", "source": "bot"}', None),
    (events_pb2.UrlSubmission(url="http://a.test/", refresh=True, id="req-7", source="bot").SerializeToString(),
     {"Content-Type": "application/x-protobuf"}),
])
def test_decode_reads_the_options_of_json_and_protobuf_alike(data, headers):
    assert decode_submission(data, headers) == Decoded(["http://a.test/"], True, "req-7", "bot")


@pytest.mark.parametrize("data,reason", [
    (b'{"url": "http://a.test/", "refresh": "yes"}', '"refresh" must be true or false'),
    (b'{"url": "http://a.test/", "refresh": 1}', '"refresh" must be true or false'),
    (b'{"url": "http://a.test/", "id": 7}', '"id" must be a string'),
    (b'{"url": "http://a.test/", "source": ["x"]}', '"source" must be a string'),
    (b'{"url": "http://a.test/", "id": "' + b"x" * 300 + b'"}', '"id" of 300 characters exceeds 256'),
    (events_pb2.UrlSubmission(url="http://a.test/", source="s" * 257).SerializeToString(), '"source" of 257'),
    (b'{"url": "http://a.test/", "source": "\\ud800"}', '"source" holds a lone surrogate'),
    (b'{"url": "http://a.test/", "id": "x\\udfff"}', '"id" holds a lone surrogate'),
    (b'{"url": "http://a.test/\\ud800"}', 'a URL holds a lone surrogate'),
    (b'{"urls": ["http://a.test/", "http://b.test/\\ud800"]}', 'a URL holds a lone surrogate'),
])
def test_decode_refuses_options_of_the_wrong_kind_or_size(data, reason):
    headers = None if data.startswith(b"{") else {"Content-Type": "application/x-protobuf"}
    with pytest.raises(InvalidMessage, match=reason):
        decode_submission(data, headers)


@pytest.mark.parametrize("data,reason", [
    (b"", "empty"), (b"{", "malformed JSON"), (b"[1]", "must be an object"),
    (b'{"link": "x"}', "needs"), (b"two words", "without spaces"), (b"\xff\xfe", "UTF-8"),
    (b'{"tweet": "nothing"}', "no URL"), (b"x" * 70000, "exceeds"),
])
def test_decode_rejects_with_a_reason(data, reason):
    with pytest.raises(InvalidMessage, match=reason):
        decode_submission(data)


R = "_INBOX_SPIDERDUCK.replies"     # bus.REPLIES_PREFIX: where ResolveUrl calls wait


@pytest.mark.parametrize("value,kept", [
    (f"{R}.abc123.def456", True), (f"{R}.a.b.c", False), ("spiderduck.events.processed", False),
    (f"{R}.abc", False), (f"{R}.a b.c", False), (f"{R}.>.x", False), (f"{R}.a.*", False),
    (f"{R}." + "a" * 65 + ".b", False), ("", False),
    # Another caller's inbox (a program beside the service), or a role's: never.
    ("_INBOX.abc123.def456", False), ("_INBOX_SPIDERDUCK.scheduler.abc", False)])
def test_only_a_resolve_call_is_taken_as_a_reply_to(value, kept):
    assert reply_subject({"SpiderDuck-Reply-To": value}) == (value if kept else "")
