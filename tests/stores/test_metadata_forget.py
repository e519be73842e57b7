"""MetadataStore.forget on every store (SQLite and Cassandra, the `store` fixture of
tests/support/metadata_backends.py): what a takedown removes, what it leaves, and, on SQLite,
that no byte of a forgotten record stays in the database's files."""
from __future__ import annotations

import asyncio
import pathlib
import secrets

import pytest

from spiderduck.core.record import Redirect
from spiderduck.stores.open import open_metadata_store
from support.metadata_backends import record, store  # noqa: F401 -- store is a fixture

STORY = "http://news.test/story"


def chain(*urls: str) -> dict:
    """The record fields of a chain through `urls`, the last one final."""
    return dict(url=urls[0], final_url=urls[-1], canonical_url=urls[-1],
                redirects=tuple(Redirect(url, 301) for url in urls[:-1]))


async def put_story(store) -> None:
    """The story, reached first from other.test/x, crawled again through s.test/a and hop.test/b
    (which had a record of its own before it redirected), shared three times; and an unrelated
    record, shared once."""
    await store.put("http://hop.test/b", record(title="Hop page", **chain("http://hop.test/b")),
                    ["http://hop.test/b"])
    await store.put(STORY, record(**chain("http://other.test/x", STORY)), ["http://other.test/x", STORY])
    await store.put(STORY, record(**chain("http://s.test/a", "http://hop.test/b", STORY)),
                    ["http://s.test/a", "http://hop.test/b", STORY])
    await store.add_share(STORY, 3)
    await store.put("http://keep.test/", record(title="Kept", **chain("http://keep.test/")),
                    ["http://keep.test/"])
    await store.add_share("http://keep.test/")


async def test_forgetting_a_url_removes_its_record_every_alias_and_its_hops(store):
    await put_story(store)
    gone = await store.forget(["http://s.test/a#frag"])         # asked as a user writes it
    # The story and the hop's own record; the URL that redirected to the story earlier (only
    # its resolution row points at it), the hops and the final URL reached.
    assert gone.records == 2
    assert {"http://s.test/a", "http://hop.test/b", STORY, "http://other.test/x"} <= gone.urls
    assert await store.get_many(["http://s.test/a", "http://hop.test/b", STORY,
                                 "http://other.test/x"]) == [None] * 4
    kept = await store.get("http://keep.test/")
    assert kept.title == "Kept" and kept.share_count == 1
    # Crawled again afterwards, the story starts afresh: no share count survives.
    await store.put(STORY, record(**chain(STORY)), [STORY])
    assert (await store.get(STORY)).share_count == 0


async def test_forgetting_again_removes_nothing(store):
    await put_story(store)
    assert (await store.forget([STORY])).records == 2
    again = await store.forget([STORY, "http://never.test/"])
    assert again.records == 0 and again.urls == {STORY, "http://never.test/"}
    assert (await store.get("http://keep.test/")).title == "Kept"


async def test_forgetting_a_domain_removes_its_subdomains_and_keeps_look_alikes(store):
    puts = {"http://example.com/a": ("http://bit.test/1", "http://example.com/a"),
            "http://www.example.com/b": ("http://www.example.com/b",),
            "http://deep.news.example.com/c": ("http://deep.news.example.com/c",),
            "http://notexample.com/d": ("http://notexample.com/d",),
            "http://example.org/e": ("http://example.com/old", "http://example.org/e")}
    for key, urls in puts.items():
        await store.put(key, record(title=key, **chain(*urls)), list(urls))
    gone = await store.forget([], domain="EXAMPLE.com")
    # example.org/e goes too: a URL of example.com redirected to it.
    assert gone.records == 4
    assert {"http://bit.test/1", "http://example.com/old", "http://example.org/e"} <= gone.urls
    assert "http://notexample.com/d" not in gone.urls
    got = await store.get_many([*puts, "http://bit.test/1", "http://example.com/old"])
    assert [rec and rec.title for rec in got] == [None, None, None, "http://notexample.com/d",
                                                 None, None, None]
    assert (await store.forget([], domain="example.com")).records == 0


def files_holding(folder: pathlib.Path, marker: bytes) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file() and marker in p.read_bytes())


async def test_no_byte_of_a_forgotten_record_stays_in_the_sqlite_files(tmp_path):
    marker = secrets.token_hex(20)
    store = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    try:
        await store.put(STORY, record(title=f"Private {marker}", **chain("http://s.test/a", STORY)),
                        ["http://s.test/a", STORY])
        # A recrawl replaces the title: its old bytes are zeroed too.
        await store.put("http://keep.test/", record(title=f"Old {marker[::-1]}", **chain("http://keep.test/")),
                        ["http://keep.test/"])
        await store.put("http://keep.test/", record(title="New", **chain("http://keep.test/")),
                        ["http://keep.test/"])
        assert files_holding(tmp_path, marker.encode())            # the test can fail
        assert (await store.forget([STORY])).records == 1
        assert files_holding(tmp_path, marker.encode()) == []      # the log emptied, not only later
        assert (await store.get("http://keep.test/")).title == "New"
    finally:
        await store.close()
    assert files_holding(tmp_path, marker.encode()) == []
    assert files_holding(tmp_path, marker[::-1].encode()) == []
    assert files_holding(tmp_path, b"http://s.test/a") == []       # nor its URLs


async def test_a_forget_leaves_records_put_meanwhile(store):
    """A put running alongside a forget of other URLs is stored (the forget's transactions let
    it through); forgetting many URLs goes in several transactions."""
    urls = [f"http://many.test/{i}" for i in range(250)]
    for url in urls:
        await store.put(url, record(**chain(url)), [url])
    gone, _ = await asyncio.gather(store.forget(urls),
                                   store.put("http://new.test/", record(**chain("http://new.test/")),
                                             ["http://new.test/"]))
    assert gone.records == 250 and set(urls) <= gone.urls
    assert (await store.get("http://new.test/")) is not None
    assert await store.get_many(urls[::50]) == [None] * 5


async def test_a_forget_a_reader_keeps_from_emptying_the_log_says_to_repeat_it(tmp_path, monkeypatch):
    """A reader in the middle of a read holds the old pages in the write-ahead log: the forget
    deletes the rows but cannot empty the log, and says so; repeated once the reader is done,
    it succeeds and no byte is left."""
    import sqlite3

    from spiderduck.core.errors import StoreError
    from spiderduck.stores import sqlite_forget
    monkeypatch.setattr(sqlite_forget, "_CHECKPOINT_TRIES", 2)       # fail fast
    monkeypatch.setattr(sqlite_forget, "_CHECKPOINT_WAIT_MS", 10)
    marker = secrets.token_hex(20)
    store = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    reader = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    try:
        await store.put(STORY, record(title=marker, **chain(STORY)), [STORY])
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM records").fetchone() == (1,)   # a snapshot
        with pytest.raises(StoreError, match="must be repeated"):
            await store.forget([STORY])
        assert await store.get(STORY) is None                        # the rows went all the same
        assert files_holding(tmp_path, marker.encode()) == ["m.db-wal"]
        reader.execute("COMMIT")
        assert (await store.forget([STORY])).records == 0
        assert files_holding(tmp_path, marker.encode()) == []
    finally:
        reader.close()
        await store.close()
