"""A tweet of more URLs than one message may carry, through the running service (issue 29): its
first 100 URLs are processed, each with its event, and the 5 over the limit are on
spiderduck.urls.dead with the reason, resubmittable. None vanishes."""
from __future__ import annotations

from spiderduck.bus import streams as bus
from spiderduck.bus.submissions import MAX_URLS_PER_MESSAGE
from spiderduck.v1 import events_pb2
from support.service import Client, RunningService, service_settings


async def test_a_tweet_of_105_urls_gets_100_events_and_a_dead_letter_of_the_other_5(tmp_path, nats_server,
                                                                                   localweb):
    # twitter-text finds URLs by their top-level domain, which .test is not
    urls = [localweb.page(f"h{i}.example.com", "/", f"<title>Page {i}</title>") for i in range(105)]
    settings = service_settings(tmp_path, nats_server.url, **{
        "fetcher.dns_overrides": {"*.example.com": "127.0.0.1"}, "fetcher.default_rate": 1000.0})
    tweet = events_pb2.UrlSubmission(tweet="links: " + " ".join(urls), source="firehose").SerializeToString()
    async with RunningService(settings), Client(settings) as client:
        await client.publish(tweet, {"Content-Type": bus.PROTOBUF_CONTENT_TYPE})
        await client.events.wait_for(MAX_URLS_PER_MESSAGE, timeout=60)
        dead = await client.dead_letters()            # reads until 1 s passes without a letter
        events = list(client.events.items)

    assert sorted(e["url"] for e in events) == sorted(urls[:100])
    assert {e["status"] for e in events} == {"OK"}
    [letter] = dead
    assert letter["urls"] == urls[100:]
    assert letter["reason"].startswith("URLs 101 to 105 of 105 are over the limit of 100 URLs per message")
    assert letter["subject"] == bus.SUBMIT_SUBJECT and "Content-Type" not in letter["headers"]
    assert '"source": "firehose"' in letter["data"]
