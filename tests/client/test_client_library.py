"""spiderduck.client against real parts: a nats-server of its own, the service's roles in this
process on free ports (support.service), and sites on loopback. The sync Client runs from plain
threads, and the examples/ scripts run as a user runs them."""
from __future__ import annotations

import asyncio
import json
import pathlib
import subprocess
import sys
import threading
import time

import pytest

from spiderduck import client as sd
from spiderduck.cli.nats_server import free_port
from spiderduck.client import AsyncClient, Client
from spiderduck.client.aio import _urls_per_call
from spiderduck.metadata_api.main import run_metadata_api
from spiderduck.v1 import events_pb2
from spiderduck.wire import record_proto
from support.localweb import Gate
from support.service import RunningService, service_settings

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_importing_the_client_loads_none_of_the_service():
    code = ("import json, sys; import spiderduck.client; "
            "print(json.dumps(sorted(name for name in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert {"grpc", "nats", "google.protobuf", "spiderduck.client", "spiderduck.v1"} <= loaded
    service = sorted(name for name in loaded if name.startswith("spiderduck.")
                     and name.split(".")[1] not in ("client", "v1"))
    assert service == [], service
    assert (ROOT / "src" / "spiderduck" / "client" / "py.typed").exists()


def test_the_clients_defaults_are_the_services():
    """Copies of the service's settings (its subjects are the client's own: tests/bus/test_names.py)."""
    from spiderduck.metadata_api.server import RESOLUTION_KEY
    assert sd.RESOLUTION_KEY == RESOLUTION_KEY
    from spiderduck.core.config import MetadataApiSettings, StreamSettings
    assert sd.MAX_URLS == MetadataApiSettings().max_urls
    assert sd.DEFAULT_METADATA == MetadataApiSettings().listen
    assert sd.QUEUED_TTL == StreamSettings().queued_ttl


async def test_get_submit_events_pending_and_batches(nats_server, localweb, tmp_path):
    pages = [localweb.page("shop.test", f"/p{n}", f"<title>Product {n}</title>") for n in range(5)]
    gate = Gate("<title>Late</title>")
    late = localweb.route("late.test", "/", gate)
    never = localweb.url("never.test", "/x")
    # The server takes 2 URLs per call: a longer get() must be split by the client.
    settings = service_settings(tmp_path, nats_server.url, **{"metadata_api.max_urls": 2})
    async with RunningService(settings), \
            AsyncClient(settings.metadata_api.listen, nats_url=nats_server.url, max_urls=2,
                        source="tests") as client:
        async with client.events() as events:              # subscribed before submitting
            assert await client.submit(pages, submission_id="batch-1") == 5
            seen: dict[str, events_pb2.UrlProcessed] = {}
            async with asyncio.timeout(30):
                async for event in events:
                    seen[event.url] = event
                    if set(pages) <= set(seen):
                        break
            assert {seen[p].submission_id for p in pages} == {"batch-1"}
            assert {seen[p].source for p in pages} == {"tests"}
            assert {events_pb2.Resolution.Name(seen[p].resolution) for p in pages} == {"CRAWLED"}

            assert await client.submit([late], refresh=True) == 1
            lookup, = await client.get([late])             # the queued marker: pending at once
            assert (lookup.found, lookup.pending, lookup.record) == (False, True, None)
            assert lookup.to_dict() == {"url": late, "found": False, "pending": True}
            await asyncio.wait_for(gate.asked.wait(), 30)
            lookup, = await client.get([late])             # being crawled: pending still
            assert lookup.pending and not lookup.found
            gate.opened.set()
            async with asyncio.timeout(30):
                async for event in events:
                    if event.url == late:
                        break
            assert event.metadata.title == "Late"

        answers = await client.get([*pages, never, late])    # 7 URLs: 4 calls of at most 2
        assert [a.url for a in answers] == [*pages, never, late]
        assert [a.found for a in answers] == [True] * 5 + [False, True]
        assert [a.record.title for a in answers[:5]] == [f"Product {n}" for n in range(5)]
        assert answers[0].status == "OK" and answers[5].status is None
        assert answers[5].to_dict() == {"url": never, "found": False}
        assert answers[0].to_dict() == record_proto.message_to_dict(answers[0].record)
        assert answers[0].to_dict()["title"] == "Product 0"
        streamed = [a.url async for a in client.lookups(iter([never, pages[1], pages[2]]))]
        assert streamed == [never, pages[1], pages[2]]
        with pytest.raises(TypeError):
            await client.get(pages[0])                     # one string is not a list of URLs
    assert client._nc is None and client._channel is None   # closed by the context


async def test_resolve_crawls_then_answers_fresh_and_says_why_it_cannot(nats_server, localweb, tmp_path):
    page = localweb.page("news.test", "/story", '<title>Story</title><meta name="description" content="D.">')
    gate = Gate("<title>Slow</title>")
    slow = localweb.route("slow.test", "/", gate)
    settings = service_settings(tmp_path, nats_server.url)
    async with RunningService(settings), AsyncClient(settings.metadata_api.listen) as client:
        first = await client.resolve(page, timeout=20)
        second = await client.resolve(page, timeout=20)
        assert (first.resolution, first.status, first.record.title) == ("CRAWLED", "OK", "Story")
        assert (second.resolution, second.url, second.record.url) == ("FRESH", page, page)
        assert second.to_dict()["description"] == "D."
        assert len(localweb.hits_for("news.test", "/story")) == 1
        with pytest.raises(sd.StillResolving) as late:
            await client.resolve(slow, timeout=0.5)
        assert late.value.url == slow and 0.4 < late.value.elapsed < 5
        assert late.value.code == "DEADLINE_EXCEEDED"
        with pytest.raises(sd.InvalidUrl) as bad:
            await client.resolve("mailto:someone@example.com")
        assert "not a fetchable URL" in str(bad.value) and bad.value.code == "INVALID_ARGUMENT"
        with pytest.raises(sd.NotConfigured, match="nats_url"):
            await client.submit([page])                    # this client was given no NATS
        gate.opened.set()
        done = await client.resolve(slow, timeout=20)       # the crawl went on: joined or fresh
        assert done.record.title == "Slow" and done.resolution in ("JOINED", "FRESH", "CRAWLED")


async def test_errors_when_nothing_answers(tmp_path, nats_server):
    nobody = f"127.0.0.1:{free_port()}"
    dead_nats = f"nats://127.0.0.1:{free_port()}"
    async with AsyncClient(nobody, nats_url=dead_nats, timeout=5, connect_timeout=0.5) as client:
        with pytest.raises(sd.Unavailable) as down:
            await client.get(["http://a.test/"])
        assert down.value.code == "UNAVAILABLE" and nobody in str(down.value)
        with pytest.raises(sd.Unavailable):
            await client.resolve("http://a.test/", timeout=5)
        with pytest.raises(sd.Unavailable, match=f"cannot connect to NATS at {dead_nats} within 0.5s"):
            await client.submit(["http://a.test/"])
        with pytest.raises(sd.Unavailable):
            await client.events().__anext__()
        assert await client.submit([]) == 0                  # nothing to publish: no connection
    with pytest.raises(sd.Error, match="closed"):
        await client.get(["http://a.test/"])
    async with AsyncClient(nobody, nats_url=nats_server.url) as client:   # a NATS with no service
        with pytest.raises(sd.Unavailable, match="no stream takes it on nats://"):
            await client.submit(["http://a.test/"])
    assert issubclass(sd.InvalidUrl, ValueError) and issubclass(sd.StillResolving, TimeoutError)
    # Its metadata-api is up, but it has no NATS: ResolveUrl is refused, and says why.
    settings = service_settings(tmp_path, "")
    async with RunningService(settings, roles=(run_metadata_api,)), \
            AsyncClient(settings.metadata_api.listen) as client:
        with pytest.raises(sd.ServiceError) as refused:
            await client.resolve("http://a.test/")
        assert refused.value.code == "FAILED_PRECONDITION" and "nats_url" in str(refused.value)
        assert (await client.get(["http://a.test/"]))[0].to_dict() == {"url": "http://a.test/", "found": False}


async def test_the_sync_client_from_plain_threads(nats_server, localweb, tmp_path):
    page = localweb.page("blog.test", "/a", "<title>A</title>")
    other = localweb.page("blog.test", "/b", "<title>B</title>")
    settings = service_settings(tmp_path, nats_server.url)

    def script() -> dict:
        """What a plain script does: no event loop of its own, blocking calls."""
        out: dict = {}
        with Client(settings.metadata_api.listen, nats_url=nats_server.url) as spiderduck:
            out["resolved"] = spiderduck.resolve(page, timeout=20)
            with spiderduck.events() as events:
                out["submitted"] = spiderduck.submit([other], source="script")
                while True:
                    event = events.next(timeout=30)
                    if event.url == other:
                        out["event"] = event
                        break
            out["got"] = spiderduck.get([page, other])
            out["lookups"] = [lookup.url for lookup in spiderduck.lookups([other, page])]
            threads = [threading.Thread(target=lambda: out.setdefault("parallel", []).append(
                spiderduck.get([page])[0].found)) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            out["thread"] = spiderduck._thread
        return out

    async with RunningService(settings):
        out = await asyncio.to_thread(script)
    assert (out["resolved"].resolution, out["resolved"].record.title) == ("CRAWLED", "A")
    assert out["submitted"] == 1
    assert out["event"].source == "script" and out["event"].metadata.title == "B"
    assert [lookup.record.title for lookup in out["got"]] == ["A", "B"]
    assert out["lookups"] == [other, page]
    assert out["parallel"] == [True] * 4
    assert not out["thread"].is_alive()                        # close() stopped its loop's thread


async def test_the_examples_run_against_a_service(nats_server, localweb, tmp_path):
    page = localweb.page("site.test", "/e", "<title>Example page</title>")
    more = [localweb.page("site.test", f"/m{n}", f"<title>M{n}</title>") for n in range(2)]
    settings = service_settings(tmp_path, nats_server.url)
    where = ["--metadata", settings.metadata_api.listen]

    async def run(script: str, *args: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(ROOT / "examples" / script), *args, cwd=tmp_path,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        return proc.returncode, out.decode(), err.decode()

    async with RunningService(settings):
        code, out, err = await run("resolve_and_watch.py", page, *more, *where, "--nats", nats_server.url,
                                   "--timeout", "30")
        assert code == 0, err
        lines = out.splitlines()
        assert lines[0].startswith(f"CRAWLED OK {page}") and "Example page" in lines[0], out
        assert sorted(line.split()[2] for line in lines[1:]) == sorted(more), out
        code, out, err = await run("get_metadata.py", page, "http://never.test/", *where)
        assert code == 1, err                                  # one URL has no record
        rows = [json.loads(line) for line in out.splitlines()]
        assert rows[0]["title"] == "Example page" and rows[1] == {"url": "http://never.test/", "found": False}


def _blocked_in_call(thread: threading.Thread, deadline: float = 10.0) -> bool:
    """Whether `thread` waits in a Client's call (for its loop's answer), within `deadline` s."""
    limit = time.monotonic() + deadline
    while time.monotonic() < limit:
        frame, names = sys._current_frames().get(thread.ident or 0), []
        while frame is not None:
            names.append(frame.f_code.co_name)
            frame = frame.f_back
        if names[:1] == ["wait"] and "_run" in names:
            return True
        time.sleep(0.01)
    return False


def test_close_ends_the_calls_other_threads_are_in(nats_server):
    # submit() keeps retrying a NATS where nothing listens, for up to connect_timeout (30 s).
    client = Client(f"127.0.0.1:{free_port()}", nats_url=f"nats://127.0.0.1:{free_port()}",
                    connect_timeout=30)
    watcher = Client(f"127.0.0.1:{free_port()}", nats_url=nats_server.url)
    events = watcher.events()
    events.subscribe()
    outcome: dict = {}

    def submitting() -> None:
        try:
            outcome["submit"] = client.submit(["http://a.test/"])
        except BaseException as exc:      # noqa: BLE001 - what the thread saw, asserted below
            outcome["submit"] = exc

    def watching() -> None:
        outcome["events"] = list(events)

    threads = [threading.Thread(target=submitting, daemon=True),
               threading.Thread(target=watching, daemon=True)]
    for thread in threads:
        thread.start()
    assert all(_blocked_in_call(thread) for thread in threads)   # both are in their calls
    started = time.monotonic()
    client.close()
    watcher.close()
    for thread in threads:
        thread.join(10)
    assert not any(thread.is_alive() for thread in threads), "a call outlived its client's close()"
    assert time.monotonic() - started < 5
    assert isinstance(outcome["submit"], sd.Error) and "closed" in str(outcome["submit"]), outcome
    assert outcome["events"] == []                           # iteration ended
    with pytest.raises(sd.Error, match="closed"):
        client.submit(["http://a.test/"])


async def test_events_given_up_waiting_for_are_not_lost(nats_server):
    import nats
    sent = [events_pb2.UrlProcessed(url=f"http://e{n}.test/").SerializeToString() for n in range(200)]
    nc = await nats.connect(nats_server.url)
    with Client(f"127.0.0.1:{free_port()}", nats_url=nats_server.url) as client:
        events = client.events()
        events.subscribe()
        polling_started = threading.Event()

        def poll() -> tuple[list[str], int]:
            """next(timeout=0.001) as fast as it goes: most calls time out as events come."""
            received: list[str] = []
            timeouts = 0
            deadline = time.monotonic() + 20
            while len(received) < len(sent) and time.monotonic() < deadline:
                try:
                    received.append(events.next(timeout=0.001).url)
                except TimeoutError:
                    timeouts += 1
                    polling_started.set()
            return received, timeouts

        polling = asyncio.ensure_future(asyncio.to_thread(poll))
        try:
            assert await asyncio.to_thread(polling_started.wait, 10)   # it waits: now publish
            await nc.publish(sd.PROCESSED_SUBJECT, b"not an event \xff")   # skipped
            for data in sent:
                await nc.publish(sd.PROCESSED_SUBJECT, data)
                # Spread over a second, as a service sends them, so that many come just as a
                # next() times out (nats-py's own message iterator lost 20-40% of them so).
                await asyncio.sleep(0.005)
        finally:
            await nc.close()
        received, timeouts = await polling
        events.close()
    assert received == [f"http://e{n}.test/" for n in range(200)], \
        f"{len(received)} of 200 received ({timeouts} timeouts)"
    assert timeouts > len(sent) and events.dropped == 0


async def test_get_of_more_urls_than_the_server_takes_per_call(tmp_path):
    settings = service_settings(tmp_path, "", **{"metadata_api.max_urls": 5})
    urls = [f"http://a{n}.test/" for n in range(12)]
    async with RunningService(settings, roles=(run_metadata_api,)), \
            AsyncClient(settings.metadata_api.listen, max_urls=300) as client:
        answers = await client.get(urls)              # refused (12 > 5), then asked in 5, 5, 2
        assert [a.url for a in answers] == urls and not any(a.found for a in answers)
        assert [a.url async for a in client.lookups(iter(urls[:7]))] == urls[:7]
    # A get refused as a whole is not about one URL: ServiceError; InvalidUrl only for resolve.
    import grpc
    from grpc.aio import AioRpcError, Metadata
    refused = AioRpcError(grpc.StatusCode.INVALID_ARGUMENT, Metadata(), Metadata(),
                          details="not a GetUrlMetadataRequest (URLs must be UTF-8 text)")
    failed = client._failed(refused)
    assert type(failed) is sd.ServiceError and failed.code == "INVALID_ARGUMENT"
    assert "not a GetUrlMetadataRequest" in str(failed) and failed.details == refused.details()
    assert type(client._failed(refused, url="x", resolving=True)) is sd.InvalidUrl
    for details, asked, takes in [("12 URLs requested; at most 5 per call", 12, 5),
                                  ("12 URLs requested; at most 5 per call", 7, None),
                                  ("12 URLs requested; at most 0 per call", 12, None),
                                  ("12 URLs requested; at most 12 per call", 12, None),
                                  ("at most 5 per call", 12, None)]:
        said = AioRpcError(grpc.StatusCode.INVALID_ARGUMENT, Metadata(), Metadata(), details)
        assert _urls_per_call(said, asked) == takes, details
