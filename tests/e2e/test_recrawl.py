"""Freshness over the running service: expiry from the origin's caching headers within bounds,
conditional re-fetches, changed fields, refreshes, stale answers, and every answer naming the URL
that was asked for. (serve_stale_for 0 where a test wants an expired record re-fetched first.)"""
from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import datetime

from support.service import Client, RunningService, service_settings, wait_until

LAST_MODIFIED = "Tue, 14 Nov 2023 22:13:20 GMT"


def _settings(tmp_path, nats_url: str, **overrides):
    """service_settings with one extraction worker process (not one per CPU): these tests crawl
    a page or two at a time, and a second worker only costs its start."""
    return service_settings(tmp_path, nats_url, **{"process.workers": 1, **overrides})


def epoch(timestamp: str) -> float:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


async def test_a_page_expires_when_its_origin_says_within_bounds(tmp_path, nats_server, localweb):
    web = localweb
    brief = web.page("brief.test", "/", "<title>Brief</title>", headers={
        "Cache-Control": "public, max-age=1", "ETag": '"v1"', "Last-Modified": LAST_MODIFIED})
    quiet = web.page("quiet.test", "/", "<title>Quiet</title>")
    forever = web.page("forever.test", "/", "<title>Forever</title>",
                       headers={"Cache-Control": "max-age=31536000, immutable"})
    settings = _settings(tmp_path, nats_server.url, min_recrawl_after="1s", serve_stale_for=0,
                         max_recrawl_after="30d")
    async with RunningService(settings), Client(settings) as client:
        for url in (brief, quiet, forever):
            await client.submit_url(url)
        await client.events.wait_for(3, timeout=30)
        b, q, f = await client.get([brief, quiet, forever])
        assert epoch(b["expires_at"]) - epoch(b["fetched_at"]) == 1.0          # max-age, held at 1s
        assert epoch(q["expires_at"]) - epoch(q["fetched_at"]) == 7 * 86400    # no header: recrawl_after
        assert epoch(f["expires_at"]) - epoch(f["fetched_at"]) == 30 * 86400   # held at max_recrawl_after
        assert b["etag"] == '"v1"' and b["last_modified"] == "2023-11-14T22:13:20Z"
        assert "etag" not in q and "last_modified" not in q

        await wait_until(lambda: _past(epoch(b["expires_at"])), 5, "the brief page to expire")
        for url in (brief, quiet):
            await client.submit_url(url)
        await client.events.wait_for(5, timeout=30)
        # Fetched again (the origin ignores If-None-Match), and the same content came back.
        assert [e["resolution"] for e in client.events.for_url(brief)] == ["CRAWLED", "REVALIDATED"]
        assert [e["resolution"] for e in client.events.for_url(quiet)] == ["CRAWLED", "FRESH"]
    assert len(web.hits_for("brief.test", "/")) == 2
    assert len(web.hits_for("quiet.test", "/")) == 1


async def _past(at: float) -> bool:
    return time.time() >= at


async def test_every_answer_names_the_url_asked_for(tmp_path, nats_server, localweb):
    web = localweb
    final = web.page("news.test", "/story", "<title>Story</title>")
    short = web.redirect("short.test", "/a", final)
    other = web.redirect("short.test", "/b", final)
    settings = _settings(tmp_path, nats_server.url)
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(short)
        await client.events.wait_for(1, timeout=30)
        for url in (final, other):
            await client.submit_url(url)
        events = await client.events.wait_for(3, timeout=30)
        records = await client.get([short, final, other])
    answers = {e["url"]: (e["resolution"], e["metadata"]["url"]) for e in events}
    assert answers == {short: ("CRAWLED", short), final: ("FRESH", final), other: ("CRAWLED", other)}
    assert [r["url"] for r in records] == [short, final, other]
    assert {r["final_url"] for r in records} == {final} and {r["title"] for r in records} == {"Story"}


async def test_a_page_not_modified_is_revalidated_and_logged_as_a_revisit(tmp_path, nats_server, localweb):
    import io
    from aiohttp import web as aioweb
    from warcio.archiveiterator import ArchiveIterator

    asked: list[dict] = []

    async def tagged(request):
        asked.append(dict(request.headers))
        if request.headers.get("If-None-Match") == '"v1"':
            return aioweb.Response(status=304, headers={"ETag": '"v1"'})
        return aioweb.Response(text="<title>Tagged</title>", content_type="text/html",
                               headers={"ETag": '"v1"', "Last-Modified": LAST_MODIFIED})
    page = localweb.route("etag.test", "/", tagged)
    settings = _settings(tmp_path, nats_server.url, recrawl_after="1s", serve_stale_for=0)
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(page)
        await client.events.wait_for(1, timeout=30)
        (first,) = await client.get([page])
        await wait_until(lambda: _past(epoch(first["expires_at"])), 5, "the record to expire")
        await client.submit_url(page)
        events = await client.events.wait_for(2, timeout=30)
        (second,) = await client.get([page])
    assert [e["resolution"] for e in events] == ["CRAWLED", "REVALIDATED"]
    assert "If-None-Match" not in asked[0]
    assert asked[1]["If-None-Match"] == '"v1"' and asked[1]["If-Modified-Since"] == LAST_MODIFIED
    assert second["title"] == "Tagged" and second["http_status"] == 200 and second["status"] == "OK"
    assert epoch(second["fetched_at"]) > epoch(first["fetched_at"])
    assert epoch(second["expires_at"]) > epoch(first["expires_at"])
    assert second["content_ref"] == first["content_ref"]          # still the full response
    assert events[1]["metadata"]["title"] == "Tagged"

    data = b"".join(p.read_bytes() for p in sorted((tmp_path / "var" / "content").glob("*.warc.gz")))
    records = [r for r in ArchiveIterator(io.BytesIO(data), check_digests="raise")
               if r.rec_headers.get_header("WARC-Target-URI") == page]     # not the /favicon.ico probe
    by_type = {r.rec_type: r for r in records}
    assert sorted(by_type) == ["response", "revisit"]
    response, revisit = by_type["response"], by_type["revisit"]
    assert revisit.rec_headers.get_header("WARC-Profile") == (
        "http://netpreserve.org/warc/1.1/revisit/server-not-modified")
    assert revisit.rec_headers.get_header("WARC-Refers-To") == response.rec_headers.get_header("WARC-Record-ID")
    assert revisit.rec_headers.get_header("WARC-Refers-To-Target-URI") == page
    assert revisit.http_headers.get_statuscode() == "304"


async def test_a_recrawl_says_which_fields_changed(tmp_path, nats_server, localweb):
    import io
    from aiohttp import web as aioweb
    from warcio.archiveiterator import ArchiveIterator

    titles = ["Old", "New", "New"]          # as long as each other: only the title changes

    async def changing(request):
        return aioweb.Response(text=f"<html lang=en><title>{titles.pop(0)}</title>", content_type="text/html")
    page = localweb.route("news.test", "/live", changing)
    settings = _settings(tmp_path, nats_server.url, recrawl_after="1s", serve_stale_for=0)
    async with RunningService(settings), Client(settings) as client:
        for n in range(3):
            if n:
                (rec,) = await client.get([page])
                await wait_until(lambda: _past(epoch(rec["expires_at"])), 5, "the record to expire")
            await client.submit_url(page)
            events = await client.events.wait_for(n + 1, timeout=30)
    assert [e["resolution"] for e in events] == ["CRAWLED", "CRAWLED", "REVALIDATED"]
    assert events[0]["changed_fields"] == ["canonical_url", "status", "http_status", "content_type", "charset",
                                           "title", "lang", "final_url", "content_length",
                                           "clean_url"]   # all it filled
    assert events[1]["changed_fields"] == ["title"] and events[1]["metadata"]["title"] == "New"
    assert "changed_fields" not in events[2]           # the same content: nothing changed
    assert events[2]["metadata"]["content_ref"] == events[1]["metadata"]["content_ref"]
    data = b"".join(p.read_bytes() for p in sorted((tmp_path / "var" / "content").glob("*.warc.gz")))
    records = [r for r in ArchiveIterator(io.BytesIO(data))
               if r.rec_headers.get_header("WARC-Target-URI") == page]     # not the /favicon.ico probe
    assert [r.rec_type for r in records] == ["response", "response", "revisit"]
    third = records[2].rec_headers
    assert third.get_header("WARC-Profile") == "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
    assert third.get_header("WARC-Refers-To") == records[1].rec_headers.get_header("WARC-Record-ID")
    assert third.get_header("WARC-Payload-Digest") == records[1].rec_headers.get_header("WARC-Payload-Digest")


async def test_refreshes_fetch_at_most_once_per_interval_and_echo_their_id(tmp_path, nats_server, localweb):
    import json
    from support.cli import run_cli

    page = localweb.page("news.test", "/hot", "<title>Hot</title>")
    settings = _settings(tmp_path, nats_server.url, min_refresh_interval="2s")
    async with RunningService(settings), Client(settings) as client:
        await client.publish(json.dumps({"url": page, "id": "req-1", "source": "tester"}))
        (first,) = await client.events.wait_for(1, timeout=30)
        await wait_until(lambda: _past(epoch(first["metadata"]["fetched_at"]) + 2), 5, "min_refresh_interval")
        for n in range(5):              # five refreshes at once: one fetch
            await client.publish(json.dumps({"url": page, "refresh": True, "id": f"r{n}"}))
        burst = (await client.events.wait_for(6, timeout=30))[1:]
        refreshed = [e for e in burst if e["resolution"] == "REVALIDATED"][0]
        await wait_until(lambda: _past(epoch(refreshed["metadata"]["fetched_at"]) + 2), 5,
                         "min_refresh_interval again")
        code, out, err = await run_cli("submit", "--refresh", page, "--set", f"nats_url={nats_server.url}",
                                       "--set", f"data_dir={tmp_path / 'cli'}")
        assert code == 0, err
        last = (await client.events.wait_for(7, timeout=30))[6]
    assert (first["resolution"], first["submission_id"], first["source"]) == ("CRAWLED", "req-1", "tester")
    assert sorted(e["submission_id"] for e in burst) == ["r0", "r1", "r2", "r3", "r4"]
    # One refresh fetched (the same content again: REVALIDATED); the others joined it or got its record.
    assert [e["resolution"] for e in burst].count("REVALIDATED") == 1
    assert {e["resolution"] for e in burst if e is not refreshed} <= {"FRESH", "JOINED"}
    assert (last["resolution"], last["source"]) == ("REVALIDATED", "cli")
    assert len(localweb.hits_for("news.test", "/hot")) == 3                 # first, one refresh, the CLI's


async def test_an_expired_record_is_answered_stale_at_once_while_one_refresh_runs(tmp_path, nats_server, localweb):
    import json
    from aiohttp import web as aioweb

    slow = asyncio.Event()
    answered = asyncio.Event()          # the ten STALE answers are in
    titles = ["Old"]

    async def page(request):
        if slow.is_set():
            # The refresh's fetch: held until the ten have been answered, or 3 s at most (so a
            # service that waited for it answers them after 3 s, too late for answered_in).
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(answered.wait(), 3)
        return aioweb.Response(text=f"<title>{titles[0]}</title>", content_type="text/html")
    url = localweb.route("slow.test", "/", page)
    settings = _settings(tmp_path, nats_server.url, recrawl_after="1s", serve_stale_for="1h")
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(url)
        (first,) = await client.events.wait_for(1, timeout=30)
        await wait_until(lambda: _past(epoch(first["metadata"]["expires_at"])), 5, "the record to expire")
        slow.set()
        titles[0] = "New"
        started = time.monotonic()
        for n in range(10):
            await client.publish(json.dumps({"url": url, "id": f"s{n}", "source": "tester"}))
        stale = (await client.events.wait_for(11, timeout=30))[1:11]
        answered_in = time.monotonic() - started
        answered.set()
        refreshed = (await client.events.wait_for(12, timeout=30))[11]
    assert [e["resolution"] for e in stale] == ["STALE"] * 10
    assert answered_in < 2.5                       # all ten before the slow origin could answer once
    assert sorted(e["submission_id"] for e in stale) == [f"s{n}" for n in range(10)]
    assert {e["source"] for e in stale} == {"tester"} and {e["metadata"]["title"] for e in stale} == {"Old"}
    assert (refreshed["resolution"], refreshed["source"]) == ("CRAWLED", "spiderduck:stale-refresh")
    assert refreshed["metadata"]["title"] == "New" and refreshed["changed_fields"] == ["title"]
    assert len(localweb.hits_for("slow.test", "/")) == 2
    print(f"\nSTALE answers: 10 in {answered_in * 1000:.0f} ms; event latency "
          f"{min(e['latency_seconds'] for e in stale) * 1000:.0f}-{max(e['latency_seconds'] for e in stale) * 1000:.0f} ms")
