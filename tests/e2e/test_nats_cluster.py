"""The whole service on a three-node JetStream cluster (nats_url lists the three servers,
nats_replicas 3).

Every stream and KV bucket keeps three replicas. One node is killed (SIGKILL) mid-run: the node
the scheduler is connected to, after the leaders of the work queue and of the scheduler's
consumer were moved onto it, so the failover is real for the connection, the stream and the
consumer at once. Producers keep submitting through the failover (retrying, as a real producer
does, under a message id so a retry is never a second submission), and every URL ends with its
UrlProcessed event in SPIDERDUCK_EVENTS and a record from GetUrlMetadata.

Exactly once in SPIDERDUCK_EVENTS: the scheduler waits for the server to confirm each ack
(retrying while the consumer has no leader), and each event carries a Nats-Msg-Id of its
submission, so a repeated publish is dropped by the stream's duplicate window. Core-NATS
subscribers may still see repeats: a publish that failed while SPIDERDUCK_EVENTS had no leader
had already reached them, and is retried. The test prints both counts.
"""
from __future__ import annotations

import asyncio
import collections
import json
import time

from aiohttp import web
from nats.errors import Error as NatsError

from spiderduck.bus import streams as bus
from spiderduck.fetcher import domain_controls
from spiderduck.v1 import events_pb2
from support.nats_cluster import NatsCluster
from support.service import Client, RunningService, service_settings, wait_until

NODES = 3
HOSTS = 6
PAGES = 10            # per host: 60 URLs
SLOW = 0.8            # seconds the odd pages take, so work is in flight when the node dies
BEFORE_KILL = 36      # URLs submitted before the kill; the rest after it
KILL_AFTER = 8        # events seen before the kill
DEADLINE = 60.0       # seconds for every URL to be processed after the kill
KV_STREAMS = (f"KV_{bus.LEASE_BUCKET}", f"KV_{domain_controls.BUCKET}")


def quietly(call):
    """`call()` awaited; None when NATS does not answer (mid-failover)."""
    async def attempt():
        try:
            return await call()
        except (NatsError, asyncio.TimeoutError):
            return None
    return attempt


def leader_of(info) -> str | None:
    """The leader named in a stream or consumer info (None while there is none, or no cluster
    info yet: just after it was made)."""
    return info.cluster.leader if info is not None and info.cluster else None


def led(info):
    """`info()` (stream or consumer info) once the stream or consumer has a leader, else None."""
    async def attempt():
        found = await quietly(info)()
        return found if leader_of(found) else None
    return attempt


async def submit(js, url: str, timeout: float = 30.0) -> int:
    """Publish one URL as a producer riding out a failover would: retry until JetStream stores
    it, with the URL as message id so a retry whose first try was stored is not a second
    submission. Returns the number of failed tries."""
    deadline = time.monotonic() + timeout
    failed = 0
    while True:
        try:
            await js.publish(bus.SUBMIT_SUBJECT, json.dumps({"url": url}).encode(),
                             headers={"Nats-Msg-Id": url}, timeout=2.0)
            return failed
        except (NatsError, asyncio.TimeoutError):
            failed += 1
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def move_leader(nc, jsm, what: str, name: str, timeout: float = 20.0) -> None:
    """Make node `name` the leader of a stream ("STREAM.S") or consumer ("CONSUMER.S.C"): a
    stepdown request naming the preferred node (nats-server 2.11+), until it leads."""
    kind, rest = what.split(".", 1)
    stepdown = f"$JS.API.{kind}.LEADER.STEPDOWN.{rest}"

    async def leader():
        if kind == "STREAM":
            return leader_of(await jsm.stream_info(rest))
        return leader_of(await jsm.consumer_info(*rest.split("."), timeout=2.0))

    async def moved():
        now = await quietly(leader)()
        if now == name:
            return True
        if now:
            await quietly(lambda: nc.request(stepdown, json.dumps(
                {"placement": {"preferred": name}}).encode(), timeout=2.0))()
        return False
    await wait_until(moved, timeout, f"{name} to lead {what}", every=0.2)


async def processed_events(jsm, at_least: int) -> list[events_pb2.UrlProcessed]:
    """Every UrlProcessed kept in SPIDERDUCK_EVENTS; none while it holds fewer than `at_least`."""
    info = await jsm.stream_info(bus.EVENTS_STREAM)
    if info.state.messages < at_least:
        return []
    out = []
    for seq in range(info.state.first_seq, info.state.last_seq + 1):
        event = events_pb2.UrlProcessed()
        event.ParseFromString((await jsm.get_msg(bus.EVENTS_STREAM, seq)).data)
        out.append(event)
    return out


def origin(web_, urls: list[str]) -> None:
    async def slow(request):
        await asyncio.sleep(SLOW)
        return web.Response(text=f"<title>{request.path}</title>", content_type="text/html")
    for h in range(HOSTS):
        for p in range(PAGES):
            if p % 2:
                urls.append(web_.route(f"h{h}.test", f"/p{p}", slow))
            else:
                urls.append(web_.page(f"h{h}.test", f"/p{p}", f"<title>h{h} p{p}</title>"))


async def test_a_three_node_cluster_keeps_three_replicas_and_loses_no_url_when_a_node_dies(
        tmp_path, localweb):
    started = time.monotonic()
    urls: list[str] = []
    origin(localweb, urls)
    with NatsCluster(tmp_path / "nats", NODES) as cluster:
        await cluster.ready()
        formed = time.monotonic() - started
        settings = service_settings(tmp_path, cluster.url, nats_replicas=NODES)
        async with RunningService(settings), Client(settings) as client:
            nc, jsm = client.nc, client.nc.jetstream(timeout=2.0)

            # Every stream and bucket the service made keeps three replicas (the leader and two
            # followers, once it has a leader).
            for stream in (bus.URLS_STREAM, bus.EVENTS_STREAM, bus.DEAD_STREAM, *KV_STREAMS):
                info = await wait_until(led(lambda: jsm.stream_info(stream)), 20, stream)
                assert info.config.num_replicas == NODES, (stream, info.config.num_replicas)
                assert len(info.cluster.replicas) + 1 == NODES, (stream, info.cluster)

            # The victim: the node the scheduler is connected to, leading the work queue and the
            # scheduler's consumer too.
            [victim] = await wait_until(
                lambda: asyncio.to_thread(cluster.connections, "spiderduck-scheduler"), 20,
                "the scheduler's connection")
            consumer = await wait_until(led(lambda: jsm.consumer_info(
                bus.URLS_STREAM, bus.SCHEDULER_DURABLE, timeout=2.0)), 20, "the scheduler's consumer")
            assert len(consumer.cluster.replicas) + 1 == NODES, consumer.cluster     # as its stream
            await move_leader(nc, jsm, f"STREAM.{bus.URLS_STREAM}", victim)
            await move_leader(nc, jsm, f"CONSUMER.{bus.URLS_STREAM}.{bus.SCHEDULER_DURABLE}", victim)
            leaders = {s: leader_of(await jsm.stream_info(s))
                       for s in (bus.EVENTS_STREAM, *KV_STREAMS)}
            fetcher_on = cluster.connections("spiderduck-fetcher-")
            client_on = cluster.node_at(nc.connected_url.port).name

            ready = time.monotonic()
            retries = 0
            for url in urls[:BEFORE_KILL]:
                retries += await submit(client.js, url)
            await client.events.wait_for(KILL_AFTER, timeout=30)
            cluster.kill(victim)
            killed = time.monotonic()
            in_flight_at_kill = BEFORE_KILL - len(client.events.items)
            for url in urls[BEFORE_KILL:]:
                retries += await submit(client.js, url)
            submitted = time.monotonic() - killed

            async def all_processed():
                events = await quietly(lambda: processed_events(jsm, len(urls)))()
                return events if events and {e.url for e in events} >= set(urls) else None
            events = await wait_until(all_processed, DEADLINE, "an event for every URL", every=0.25)
            done = time.monotonic() - killed
            records = await client.get(urls)
            # Asked like the others: the dead-letter stream may still be electing its leader.
            dead = (await wait_until(led(lambda: jsm.stream_info(bus.DEAD_STREAM)), 20,
                                     bus.DEAD_STREAM)).state.messages
            core_seen = collections.Counter(e["url"] for e in client.events.items)

    per_url = collections.defaultdict(list)
    for event in events:
        per_url[event.url].append(events_pb2.Resolution.Name(event.resolution))
    duplicates = {url: kinds for url, kinds in per_url.items() if len(kinds) > 1}
    after_kill = sorted(set(duplicates) & set(urls[BEFORE_KILL:]))
    fetched = collections.Counter(f"http://{h.host}:{localweb.port}{h.path}" for h in localweb.hits)
    print(f"\ncluster formed in {formed:.2f}s; service ready {ready - started:.2f}s after start; "
          f"killed {victim} (the scheduler's node, leading {bus.URLS_STREAM} and its consumer; "
          f"other leaders: {leaders}; fetcher on {fetcher_on}, test client on {client_on}) with "
          f"{in_flight_at_kill} of {BEFORE_KILL} URLs unfinished; {len(urls) - BEFORE_KILL} more "
          f"submitted in {submitted:.2f}s after the kill ({retries} publish retries); all "
          f"{len(urls)} processed {done:.2f}s after the kill; {len(events)} events in "
          f"{bus.EVENTS_STREAM}: {len(duplicates)} URLs announced twice or more "
          f"({len(after_kill)} of them submitted after the kill; "
          f"{dict(collections.Counter(tuple(k) for k in duplicates.values()))}); "
          f"{sum(n > 1 for u, n in fetched.items() if u in per_url)} pages fetched twice; "
          f"core subscriber saw {sum(core_seen.values())} events "
          f"({len(set(urls) - set(core_seen))} URLs missed); dead letters: {dead}")
    missing = [(u, r and r["status"]) for u, r in zip(urls, records) if not r or r["status"] != "OK"]
    assert not missing, missing
    assert dead == 0
    # Exactly one event per URL in the stream: acks are confirmed (a plain one sent while the
    # consumer had no leader was lost, and the URL redelivered) and each event carries a
    # Nats-Msg-Id of its submission (a repeat publish is dropped by the duplicate window).
    # Before both, 0 to 36 of the 60 URLs were announced twice here.
    assert not duplicates, duplicates
    assert all(fetched[url] == 1 for url in urls), {u: fetched[u] for u in urls if fetched[u] != 1}
