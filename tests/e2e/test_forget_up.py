"""Issue 39's "Done when" on the embedded stores, as a user runs them: one `spiderduck up` (its
own NATS, SQLite, WARC files under data_dir), restarted once, and the commands beside it. A short
link on one loopback site redirects to a page on another whose title and body hold markers found
nowhere else; after `spiderduck forget <page>`, nothing of either URL is left: no record, no
event in the stream, no content-log record (read back with warcio), no byte of either marker in
any file under data_dir (raw, and every gzip member decompressed); a new submission of either
ends FORGOTTEN with no request to its site, after a restart too, until `forget --undo`."""
from __future__ import annotations

import json
import secrets
import time
import zlib
from pathlib import Path

import nats
from nats.js.api import DeliverPolicy
from warcio.archiveiterator import ArchiveIterator

from spiderduck.bus import streams as bus
from spiderduck.bus.denylist import DENYLIST_LAG
from spiderduck.bus.events_erase import named_urls
from spiderduck.cli import up_nats
from spiderduck.stores.warc_filler import ERASED_CONTENT_TYPE
from spiderduck.v1 import events_pb2

from support.cli import Proc, run_cli, start_up, up_config
from support.service import Events, wait_until

EVENT_WAIT = 60.0                  # seconds an event may take on a busy two-core machine


class UpClient:
    """What a program beside `up` has: NATS as the user `client` (the password `up` wrote in
    data_dir), every UrlProcessed as it is published."""

    def __init__(self, data_dir: Path):
        self.data_dir = str(data_dir)
        self.events = Events()

    async def __aenter__(self) -> "UpClient":
        url = Path(up_nats.url_path(self.data_dir)).read_text().strip()
        self.nc = await nats.connect(url, allow_reconnect=False, **up_nats.up_credentials(self.data_dir))
        await self.nc.subscribe(bus.PROCESSED_SUBJECT, cb=self.events.on_message)
        await self.nc.flush()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.nc.close()

    async def event_after(self, url: str, seen: int) -> dict:
        """The event of `url` after the first `seen` of it."""
        async def came() -> bool:
            return len(self.events.for_url(url)) > seen
        await wait_until(came, EVENT_WAIT, f"an event of {url}")
        return self.events.for_url(url)[seen]

    async def stream_urls(self) -> list[set[str]]:
        """Every URL each message of SPIDERDUCK_EVENTS names, read from its first message."""
        js = self.nc.jetstream()
        named: list[set[str]] = []
        if not (await js.stream_info(bus.EVENTS_STREAM)).state.messages:
            return named
        sub = await js.subscribe("", stream=bus.EVENTS_STREAM, ordered_consumer=True,
                                 deliver_policy=DeliverPolicy.ALL)
        try:
            while True:
                msg = await sub.next_msg(timeout=10)
                named.append(set(named_urls(events_pb2.UrlProcessed.FromString(msg.data))))
                if not msg.metadata.num_pending:
                    return named
        finally:
            await sub.unsubscribe()


async def submit(config: str, client: UpClient, url: str) -> dict:
    """`spiderduck submit URL`, then its event."""
    seen = len(client.events.for_url(url))
    code, _, err = await run_cli("submit", url, "--config", config)
    assert code == 0, err
    return await client.event_after(url, seen)


async def get(config: str, url: str) -> dict:
    code, out, err = await run_cli("get", url, "--config", config)
    row = json.loads(out)
    assert code == (0 if row.get("found", True) else 1), (code, out, err)
    return row


def inflated_members(data: bytes) -> list[bytes]:
    """Each gzip member of `data` decompressed (a truncated last member: what it held)."""
    out = []
    while data[:2] == b"\x1f\x8b":
        d = zlib.decompressobj(wbits=31)
        try:
            out.append(d.decompress(data))
        except zlib.error:
            break
        data = d.unused_data
    return out


def holders(data_dir: Path, markers: list[str]) -> list[str]:
    """Each file under data_dir (every file: SQLite's db, -wal and -shm, JetStream's, the WARC
    files, logs) holding a marker in its bytes or in a decompressed gzip member, with the marker."""
    found = []
    wanted = [m.encode() for m in markers]
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file()):
        data = path.read_bytes()
        for where, blob in [("raw", data)] + [(f"gzip member {i}", m) for i, m in enumerate(inflated_members(data))]:
            found += [f"{path.relative_to(data_dir)} ({where}): {m.decode()}" for m in wanted if m in blob]
    return found


def warc_uris(content: Path) -> list[str | None]:
    """The WARC-Target-URI of every record of every WARC file, read with warcio (None: a record
    naming no URL)."""
    return [uri for uri, _ in warc_records(content)]


def warc_records(content: Path) -> list[tuple[str | None, str]]:
    """(WARC-Target-URI, Content-Type) of every record of every WARC file, read with warcio."""
    out = []
    for path in sorted(content.rglob("*.warc*")):
        with open(path, "rb") as fh:
            out += [(r.rec_headers.get_header("WARC-Target-URI"), r.rec_headers.get_header("Content-Type"))
                    for r in ArchiveIterator(fh)]
    return out


def site_hits(localweb, *hosts: str) -> int:
    return sum(len(localweb.hits_for(host)) for host in hosts)


async def test_a_forgotten_page_leaves_nothing_under_data_dir_and_stays_forgotten(tmp_path, localweb):
    title, body = secrets.token_hex(16), secrets.token_hex(16)
    page = localweb.page("someone.test", "/about-me",
                         f"<html><head><title>Page {title}</title></head>"
                         f"<body><p>Words about someone: {body}.</p></body></html>")
    short = localweb.redirect("sho.test", "/x1", page)
    config = up_config(tmp_path, process={"workers": 1})   # one extraction worker (default: one per CPU)
    data_dir = tmp_path / "var"

    up = await start_up(tmp_path, config)
    try:
        async with UpClient(data_dir) as client:
            event = await submit(config, client, short)
            assert event["status"] == "OK" and event["metadata"]["final_url"] == page, event
            assert (await get(config, page))["title"] == f"Page {title}"
            # The content log holds the 301, the page, and the page's favicon (a related fetch).
            favicon = localweb.url("someone.test", "/favicon.ico")
            logged = warc_uris(data_dir / "content")
            assert sorted(logged) == sorted([short, page, favicon]), logged
            before = holders(data_dir, [title, body])
            # The page is on disk before the forget (so the search below can fail): in SQLite,
            # in JetStream's events, in the content log's decompressed members.
            assert any(h.startswith("metadata") and title in h for h in before), before
            assert any(h.startswith("nats") and body in h for h in before), before
            assert any(h.startswith("content") and "gzip member" in h for h in before), before

            assert [urls for urls in await client.stream_urls() if short in urls], "no event to erase"
            code, out, err = await run_cli("forget", page, "--reason", "GDPR art. 17 request 39",
                                           "--config", config)
            assert code == 0, out + err
            assert out.strip() == (f"forgot {page}: removed 1 record, 3 content-log records, 1 event; "
                                   "on the denylist until `spiderduck forget --undo`"), out

            for url in (short, page):
                assert await get(config, url) == {"url": url, "found": False}
            named = await client.stream_urls()
            assert not [urls for urls in named if urls & {short, page}], named
            # Each of the three is a filler of its length now (content_refs of others stay true).
            assert warc_records(data_dir / "content") == [(None, ERASED_CONTENT_TYPE)] * 3
            assert holders(data_dir, [title, body]) == []
            assert title not in up.stderr and body not in up.stderr     # nor `up`'s own log

            hits = site_hits(localweb, "sho.test", "someone.test")
            for url in (short, page):
                event = await submit(config, client, url)
                assert event["status"] == "FORGOTTEN" and set(event["metadata"]) == {"url", "status"}, event
            assert site_hits(localweb, "sho.test", "someone.test") == hits
            assert len(localweb.hits_for("someone.test", "/about-me")) == 1
    finally:
        await up.stop()

    up = await start_up(tmp_path, config)           # the same data_dir: the list is kept in NATS
    try:
        async with UpClient(data_dir) as client:
            assert (await submit(config, client, page))["status"] == "FORGOTTEN"
            assert site_hits(localweb, "sho.test", "someone.test") == hits
            assert holders(data_dir, [title, body]) == []       # nothing came back with the restart
            code, out, err = await run_cli("forget", "--undo", page, "--config", config)
            assert code == 0 and out.strip() == "took 1 entry off the denylist", out + err
            undone = time.monotonic()
            # Crawled afresh: the list, not a failure, stopped it. The scheduler sees the undo
            # within DENYLIST_LAG; a submission sent before that may still be FORGOTTEN, and is
            # repeated; one sent after it must not be.
            while True:
                sent = time.monotonic()
                event = await submit(config, client, page)
                if event["status"] != "FORGOTTEN":
                    break
                assert sent - undone < DENYLIST_LAG, "a submission sent after DENYLIST_LAG still FORGOTTEN"
            assert event["status"] == "OK" and event["metadata"]["title"] == f"Page {title}", event
            assert len(localweb.hits_for("someone.test", "/about-me")) == 2
    finally:
        await up.stop()
