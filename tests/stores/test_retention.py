"""The retention sweep on the embedded stores: real SQLite, real WARC files, real time (the sweep
runs every 0.2 s against a retention of about a second), waited on with timeouts. Cassandra
expires records by a TTL instead: tests/stores/test_cassandra_ttl.py."""
from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time

import pytest
import warcio.archiveiterator

from spiderduck.core.record import UrlRecord
from spiderduck.core.settings_retention import RetentionSettings
from spiderduck.core.status import Status
from spiderduck.stores.retention import RetentionSweeper
from spiderduck.stores.sqlite_metadata import SqliteMetadataStore
from spiderduck.stores.warc_files import WarcFileStore
from support.content_backends import fetched
from support.service import wait_until

KEEP = 1.0          # retention of these tests, seconds
EVERY = 0.2         # sweep_interval
SLACK = 1.0         # scheduling on a loaded machine


def record(story: str, fetched_at: float) -> UrlRecord:
    return UrlRecord(url=f"http://s.test/{story}", status=Status.OK, title=story,
                     final_url=f"http://news.test/{story}", canonical_url=f"http://news.test/{story}",
                     fetched_at=fetched_at)


async def put(store, story: str) -> UrlRecord:
    rec = record(story, time.time())
    return await store.put(rec.final_url, rec, [rec.url, rec.final_url])


def rows_of(path, key: str) -> dict[str, int]:
    """The rows each table holds for the record under `key`, read from the file itself."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        return {table: db.execute(f"SELECT count(*) FROM {table} WHERE key = ?", (key,)).fetchone()[0]
                for table in ("records", "resolutions", "shares")}


async def until(when: float) -> bool:
    return time.time() >= when


async def test_a_record_and_its_aliases_go_on_time_while_a_refreshed_one_stays(tmp_path, caplog):
    caplog.set_level(logging.INFO, "spiderduck.retention")
    store = await SqliteMetadataStore.open(str(tmp_path / "m.db"))
    try:
        old = await put(store, "old")
        await store.add_share(old.final_url, 3)
        await put(store, "kept")
        sweeper = RetentionSweeper(RetentionSettings(metadata=KEEP, sweep_interval=EVERY), store, None)
        async with sweeper.running():
            await wait_until(lambda: until(old.fetched_at + KEEP / 2), 5, "half the retention")
            refreshed = await put(store, "kept")           # crawled again meanwhile
            assert await store.get("http://s.test/old") is not None

            async def old_gone():
                return await store.get_many(["http://s.test/old", "http://news.test/old"]) == [None, None]
            await wait_until(old_gone, KEEP + EVERY + SLACK + 2, "the old record to go")
            gone_at = time.time()
            assert gone_at >= old.fetched_at + KEEP, "deleted before its retention ran out"
            assert gone_at <= old.fetched_at + KEEP + EVERY + SLACK, "deleted late"
            # The refreshed record stays, by every URL it was seen under.
            got = await store.get_many(["http://s.test/kept", "http://news.test/kept"])
            assert [r and r.title for r in got] == ["kept", "kept"]
            assert time.time() < refreshed.fetched_at + KEEP
        assert "retention: removed 1 records older than retention.metadata" in caplog.text
        assert rows_of(tmp_path / "m.db", "http://news.test/old") == {
            "records": 0, "resolutions": 0, "shares": 0}
        assert rows_of(tmp_path / "m.db", "http://news.test/kept") == {
            "records": 1, "resolutions": 2, "shares": 0}
        # Its share count went with it: seen again, it starts from none (first_seen anew too).
        again = await put(store, "old")
        assert again.share_count == 0 and again.first_seen > old.first_seen
    finally:
        await store.close()


ANCIENT = 10 * 365 * 86400.0     # seconds


@pytest.mark.parametrize("keep", [{}, {"metadata": KEEP}, {"content": KEEP}],
                         ids=["none", "metadata-only", "content-only"])
async def test_a_retention_of_0_deletes_nothing(tmp_path, keep):
    """Each part with retention 0 keeps even ten-year-old data, while the sweep runs for the other."""
    store = await SqliteMetadataStore.open(str(tmp_path / "m.db"))
    folder = tmp_path / "content"
    content = WarcFileStore(str(folder))
    try:
        rec = record("ancient", time.time() - ANCIENT)
        await store.put(rec.final_url, rec, [rec.url])
        ref = await content.append(fetched(1))
        os.utime(folder / ref.partition("@")[0], (time.time() - ANCIENT,) * 2)
        sweeper = RetentionSweeper(RetentionSettings(sweep_interval=EVERY, **keep), store, content)
        swept = await sweeper.sweep()
        assert swept == {name: 1 for name in keep}     # what has a retention goes at once
        async with sweeper.running():
            end = time.time() + 3 * EVERY
            await wait_until(lambda: until(end), 5, "three sweep intervals")
        assert ((await store.get(rec.url)) is None) == ("metadata" in keep)
        assert (not (folder / ref.partition("@")[0]).exists()) == ("content" in keep)
        if "content" not in keep:
            assert (await content.read(ref))[0]["WARC-Target-URI"] == "http://a.test/1"
    finally:
        await content.close()
        await store.close()


def log_files(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".warc.gz"))


async def test_an_old_warc_file_is_deleted_and_a_fresh_one_kept(tmp_path, caplog):
    caplog.set_level(logging.INFO, "spiderduck.retention")
    folder = tmp_path / "content"
    settings = RetentionSettings(content=KEEP, sweep_interval=EVERY)
    content = WarcFileStore(str(folder), roll_seconds=settings.roll_content_after)
    foreign = folder / "operators-notes.warc.gz"       # not the log's: never touched
    try:
        first = await content.append(fetched(1))
        foreign.write_bytes(b"kept")
        os.utime(foreign, (0, 0))
        # The writer rolls by age: a record written past half the retention opens a new file.
        opened = os.stat(folder / first.partition("@")[0]).st_mtime
        await wait_until(lambda: until(opened + settings.roll_content_after), 5, "the roll age")
        second = await content.append(fetched(2))
        assert first.partition("@")[0] != second.partition("@")[0], "the writer did not roll by age"
        async with RetentionSweeper(settings, None, content).running():
            async def first_gone():
                return not (folder / first.partition("@")[0]).exists()
            await wait_until(first_gone, KEEP + EVERY + SLACK + 2, "the old file to go")
            assert time.time() >= opened + KEEP
            # The fresh file is whole and readable, record by record (warcio).
            with open(folder / second.partition("@")[0], "rb") as fh:
                uris = [r.rec_headers.get_header("WARC-Target-URI")
                        for r in warcio.archiveiterator.ArchiveIterator(fh)]
            assert uris == ["http://a.test/2"]
        assert foreign.exists()
        assert "retention: removed 1 content-log files older than retention.content" in caplog.text
    finally:
        await content.close()


async def test_the_file_being_written_goes_when_idle_and_the_next_record_starts_a_new_one(tmp_path):
    folder = tmp_path / "content"
    content = WarcFileStore(str(folder), roll_seconds=3600)
    try:
        ref = await content.append(fetched(1))
        name = ref.partition("@")[0]
        os.utime(folder / name, (time.time() - 60, time.time() - 60))
        assert await content.expire(time.time() - 30) == 1
        assert log_files(folder) == []
        later = await content.append(fetched(2))        # not into the deleted file
        assert later.partition("@")[0] != name and log_files(folder) == [later.partition("@")[0]]
        assert (await content.read(later))[0]["WARC-Target-URI"] == "http://a.test/2"
    finally:
        await content.close()
