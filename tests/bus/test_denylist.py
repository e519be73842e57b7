"""The denylist on a real nats-server, two holders ("processes", each on its own connection)
sharing the bucket: what one adds the other sees within DENYLIST_LAG; a domain covers its
subdomains and no look-alike; a removal leaves no revision of the entry; a holder opened again
has the entries; values that are not entries are skipped and the holder goes on; a watch that
breaks is made again and the mirror reloaded."""
from __future__ import annotations

import json
import logging

import nats
import pytest
from nats.js.api import KeyValueConfig
from nats.js.errors import KeyDeletedError, KeyNotFoundError

from spiderduck.bus import denylist as dl
from spiderduck.bus.denylist import DENYLIST_LAG, Denylist, Entry
from spiderduck.core.errors import BusError
from spiderduck.core.urls import InvalidDomain
from support.service import wait_until

URL = "https://news.forgotten.test/story?id=7"


@pytest.fixture
async def holders(nats_server):
    """Two Denylists on one bucket, each on its own connection, and the connections."""
    conns = [await nats.connect(nats_server.url) for _ in range(2)]
    lists = [await Denylist.open(nc.jetstream()) for nc in conns]
    yield lists, conns
    for denylist in lists:
        await denylist.close()
    for nc in conns:
        await nc.close()


async def seen(predicate, what: str) -> None:
    async def check():
        return predicate()
    await wait_until(check, DENYLIST_LAG, what)


async def test_what_one_holder_adds_the_other_sees_within_the_lag(holders):
    (a, b), _ = holders
    assert not a.forgotten(URL) and not b.forgotten(URL)
    written = await a.add([URL, "https://short.test/x"], reason="GDPR art. 17", by="admin@ops")
    assert [e.url for e in written] == [URL, "https://short.test/x"]
    assert a.forgotten(URL)                                    # its own mirror at once
    await seen(lambda: b.forgotten(URL) and b.forgotten("https://short.test/x"), "the other holder to see it")
    assert b.forgotten("HTTPS://News.Forgotten.test/story?id=7#frag")         # any spelling of it
    assert b.forgotten(URL, canonical=True)
    assert not b.forgotten("https://news.forgotten.test/story?id=8")
    entry = b.entries()[0]
    assert (entry.url, entry.reason, entry.by) == (URL, "GDPR art. 17", "admin@ops") and entry.at > 0

    assert await b.remove([URL]) == 1
    assert not b.forgotten(URL)
    await seen(lambda: not a.forgotten(URL), "the removal seen by the first holder")
    assert a.forgotten("https://short.test/x")                 # the other entry stays
    kv = await a._js.key_value(dl.BUCKET)
    with pytest.raises((KeyDeletedError, KeyNotFoundError)):
        await kv.get(dl.key_of(Entry(url=URL)))
    history = await kv.history(dl.key_of(Entry(url=URL)))
    assert [h.value for h in history] == [b""] and URL.encode() not in b"".join(h.value or b"" for h in history)


async def test_a_domain_covers_its_subdomains_and_no_look_alike(holders):
    (a, b), _ = holders
    [entry] = await a.add([], "www.Forgotten.test", reason="owner's request")
    assert entry.domain == "forgotten.test"                   # listed as the registrable domain
    await seen(lambda: b.forgotten("https://forgotten.test/"), "the domain on the other holder")
    for url in ("https://news.forgotten.test/a", "http://cdn.forgotten.test:8080/i.png", "https://FORGOTTEN.test"):
        assert b.forgotten(url), url
    for url in ("https://notforgotten.test/", "https://forgotten.test.evil.test/", "https://forgotten.example/",
                "mailto:someone@forgotten.test", "not a url"):
        assert not b.forgotten(url), url
    with pytest.raises(InvalidDomain):
        await a.add([], "co.uk")
    assert await a.remove(domain="news.forgotten.test") == 1
    await seen(lambda: not b.forgotten("https://news.forgotten.test/a"), "the domain's removal")
    assert a.entries() == [] and await a.remove([URL]) == 0


async def test_a_holder_opened_again_has_the_entries(holders, nats_server):
    (a, _), _ = holders
    await a.add([URL], reason="takedown")
    await a.close()
    nc = await nats.connect(nats_server.url)
    try:
        again = await Denylist.open(nc.jetstream())
        assert again.forgotten(URL) and [e.reason for e in again.entries()] == ["takedown"]
        await again.close()
    finally:
        await nc.close()


async def test_values_that_are_not_entries_are_skipped(nats_server, caplog):
    nc = await nats.connect(nats_server.url)
    js = nc.jetstream()
    # A bucket made by hand, without the value limit, holding what a holder must survive.
    kv = await js.create_key_value(KeyValueConfig(bucket=dl.BUCKET, history=1))
    url_key = dl.key_of(Entry(url=URL))
    for key, value in [("u.notjson", b"\xff{"), ("u.list", b"[1, 2]"), ("d.types", b'{"domain": 7}'),
                       ("d.huge", json.dumps({"domain": "x" * 100_000}).encode()),
                       ("u.nan", b'{"url": "https://a.test/", "at": NaN}'),
                       ("u.both", json.dumps({"url": URL, "domain": "forgotten.test"}).encode()),
                       ("u.elsewhere", json.dumps({"url": URL}).encode())]:       # not its URL's key
        await kv.put(key, value)
    await kv.put(url_key, dl.encode(Entry(url=URL, reason="kept")))
    caplog.set_level(logging.WARNING, "spiderduck.bus.denylist")
    holder = await Denylist.open(js)
    try:
        assert [e.url for e in holder.entries()] == [URL]
        assert {r.getMessage().split()[2] for r in caplog.records} == {
            "u.notjson", "u.list", "d.types", "d.huge", "u.nan", "u.both", "u.elsewhere"}
        assert all("xxxxxxxx" not in r.getMessage() for r in caplog.records)     # the key and why, not the value
        await kv.put("u.later", b"garbage after the start")               # through the watch
        await holder.add(["https://b.test/"])
        await kv.put(dl.key_of(Entry(url="https://c.test/")), dl.encode(Entry(url="https://c.test/")))
        await seen(lambda: holder.forgotten("https://c.test/"), "an entry after the garbage")
        assert holder.forgotten("https://b.test/") and holder.forgotten(URL)
    finally:
        await holder.close()
        await nc.close()


async def test_a_broken_watch_is_made_again_and_the_mirror_reloaded(holders, caplog):
    (a, b), _ = holders
    caplog.set_level(logging.INFO, "spiderduck.bus.denylist")
    await a.add([URL])
    await seen(lambda: b.forgotten(URL), "the entry on the other holder")
    await b._watcher.stop()                      # its subscription gone
    await a.remove([URL])
    await a.add(["https://while.broken.test/"])
    await seen(lambda: b.forgotten("https://while.broken.test/") and not b.forgotten(URL),
               "the mirror reloaded after the watch broke")
    assert any("broke" in r.getMessage() for r in caplog.records)


async def test_a_watch_lost_with_its_server_is_made_again(holders, nats_server):
    (a, b), conns = holders
    await a.add([URL])
    await seen(lambda: b.forgotten(URL), "the entry on the other holder")
    nats_server.stop()                           # the watches' consumers go with it (the bucket stays)
    nats_server.start()

    async def added():
        if not all(nc.is_connected for nc in conns):
            return False
        try:
            return await a.add(["https://after.restart.test/"])
        except BusError:                         # JetStream still starting
            return False
    await wait_until(added, 30, "a write once the server is back")
    await seen(lambda: b.forgotten("https://after.restart.test/"), "the write seen through a new watch")
    assert b.forgotten(URL)


def test_an_offline_list_and_an_empty_one():
    offline = Denylist([Entry(url=URL), Entry(domain="gone.test")])
    assert offline.forgotten(URL) and offline.forgotten("https://www.gone.test/") and not offline.forgotten("https://a.test/")
    assert not Denylist().forgotten("https://a.test/")
