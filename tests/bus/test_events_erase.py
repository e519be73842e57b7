"""Erasing a forgotten URL's events from SPIDERDUCK_EVENTS on a real nats-server with file
storage: the stream no longer yields them, the other URLs' events stay, and the bytes of the
forgotten page's events are in no file of the JetStream store (they were before the erasure);
a domain erasure, a second erasure finding nothing, and a stream of a few thousand events."""
from __future__ import annotations

import pathlib
import secrets

from google.protobuf.message import DecodeError

from spiderduck.bus import streams as bus
from spiderduck.bus.events_erase import erase_events
from spiderduck.v1 import events_pb2, metadata_pb2
from support.service import wait_until

FORGOTTEN = "https://news.forgotten.test/story?id=7"


def event(url: str, title: str = "", *, final: str = "", redirects: tuple[str, ...] = ()) -> bytes:
    record = metadata_pb2.UrlMetadata(url=url, final_url=final or url, title=title,
                                      redirects=[metadata_pb2.Redirect(url=r, http_status=301) for r in redirects])
    return events_pb2.UrlProcessed(url=url, canonical_url=final or url, metadata=record).SerializeToString()


async def stream_urls(js) -> list[str]:
    """The `url` of every event the stream yields, in order ("<not an event>" where none)."""
    state = (await js.stream_info(bus.EVENTS_STREAM)).state
    if not state.messages:
        return []
    sub = await js.subscribe(bus.EVENTS_SUBJECTS, ordered_consumer=True)
    urls = []
    try:
        for _ in range(state.messages):
            msg = await sub.next_msg(timeout=10)
            try:
                urls.append(events_pb2.UrlProcessed.FromString(msg.data).url)
            except DecodeError:
                urls.append("<not an event>")
    finally:
        await sub.unsubscribe()
    return urls


def stored_anywhere(store: str, marker: bytes) -> list[str]:
    """The files under the JetStream store `store` holding `marker`."""
    return [str(path) for path in pathlib.Path(store).rglob("*")
            if path.is_file() and marker in path.read_bytes()]


async def test_a_forgotten_urls_events_are_erased_from_the_stream_and_the_disk(nats_server, bus_js):
    _, js = bus_js
    marker = f"forgotten-marker-{secrets.token_hex(8)}"
    await js.publish(bus.PROCESSED_SUBJECT, event(FORGOTTEN, f"The page {marker}"))
    await js.publish(bus.PROCESSED_SUBJECT, event("https://kept.test/a", "kept"))
    # Through a redirect: the event's own url is another, its record's final URL is the forgotten one.
    await js.publish(bus.PROCESSED_SUBJECT, event("https://short.test/x", f"again {marker}", final=FORGOTTEN))
    await js.publish(bus.PROCESSED_SUBJECT, event("https://kept.test/b", "kept", redirects=("https://hop.test/",)))
    await js.publish(bus.PROCESSED_SUBJECT, b"\xff not a protobuf \x00")
    store = nats_server.store_dir
    await wait_until(lambda: _async(stored_anywhere(store, marker.encode())), 10, "the marker written to disk")

    # Asked as given (not canonical): compared in lookup form.
    assert await erase_events(js, ["HTTPS://news.FORGOTTEN.test/story?id=7#top"]) == 2
    assert await stream_urls(js) == ["https://kept.test/a", "https://kept.test/b", "<not an event>"]
    await wait_until(lambda: _async(not stored_anywhere(store, marker.encode())), 10,
                     "no file of the store holding the marker")
    assert stored_anywhere(store, b"https://kept.test/a")                    # the others' bytes stay
    assert await erase_events(js, [FORGOTTEN]) == 0                          # idempotent
    assert await erase_events(js, ["https://hop.test/"]) == 1                # a redirect names it too
    assert await stream_urls(js) == ["https://kept.test/a", "<not an event>"]


async def test_a_domain_erases_its_subdomains_events_and_not_a_look_alike(bus_js):
    _, js = bus_js
    for url in ("https://forgotten.test/", "https://www.forgotten.test/a", "https://notforgotten.test/",
                "https://forgotten.test.other.test/", "http://cdn.forgotten.test:8080/i.png"):
        await js.publish(bus.PROCESSED_SUBJECT, event(url))
    assert await erase_events(js, [], "WWW.Forgotten.test") == 3
    assert await stream_urls(js) == ["https://notforgotten.test/", "https://forgotten.test.other.test/"]
    assert await erase_events(js, [], "forgotten.test") == 0
    assert await erase_events(js, []) == 0                                   # nothing asked: nothing read


async def test_an_empty_stream_and_a_stream_of_thousands(bus_js):
    nc, js = bus_js
    assert await erase_events(js, [FORGOTTEN]) == 0
    for n in range(3000):      # core publishes (no ack each), then all of them awaited in the stream
        await nc.publish(bus.PROCESSED_SUBJECT, event(FORGOTTEN if n % 500 == 0 else f"https://other.test/{n}"))
    await wait_until(lambda: _messages(js, 3000), 30, "3000 events in the stream")
    assert await erase_events(js, [FORGOTTEN]) == 6
    assert await _messages(js, 2994)


async def _async(value):
    return value


async def _messages(js, count: int) -> bool:
    return (await js.stream_info(bus.EVENTS_STREAM)).state.messages == count
