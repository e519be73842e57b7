"""One conformance suite for every MetadataStore (SQLite here; others join it as they come)."""
from __future__ import annotations

import dataclasses

import pytest

from common.record import Image, Redirect, UrlRecord
from common.status import Status
from common.stores.open import open_metadata_store


@pytest.fixture(params=["sqlite"])
async def store(request, tmp_path):
    s = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    yield s
    await s.close()


def record(**kw) -> UrlRecord:
    base = dict(url="http://s.test/a", status=Status.OK, final_url="http://news.test/story",
                canonical_url="http://news.test/story", title="Story", fetched_at=1000.0,
                redirects=(Redirect("http://s.test/a", 301),),
                image=Image("http://news.test/i.png", 10, 20, "image/png"),
                structured_data={"json-ld": [{"@type": "NewsArticle"}]})
    base.update(kw)
    return UrlRecord(**base)


async def test_every_alias_resolves_to_the_record(store):
    rec = record()
    stored = await store.put(rec.final_url, rec, ["http://s.test/a", rec.final_url])
    got = await store.get_many(["http://s.test/a", "http://news.test/story", "http://nope.test/"])
    assert got[0] == got[1] == stored
    assert got[2] is None
    assert got[0].title == "Story" and got[0].image == rec.image
    assert got[0].structured_data == rec.structured_data


async def test_first_seen_is_kept_and_fields_replaced_on_recrawl(store):
    first = await store.put("k", record(first_seen=50.0), ["a"])
    second = await store.put("k", record(title="New", first_seen=90.0, fetched_at=2000.0), ["b"])
    assert second.first_seen == first.first_seen == 50.0
    a, b = await store.get_many(["a", "b"])
    assert a.title == b.title == "New" and a.fetched_at == 2000.0


async def test_shares_count_every_sighting(store):
    await store.put("k", record(), ["a"])
    assert await store.add_share("k") == 1
    assert await store.add_share("k", 2) == 3
    assert (await store.get("a")).share_count == 3
    assert await store.add_share("unseen") == 1     # counted before its record exists


async def test_an_alias_moves_to_the_newer_chain(store):
    await store.put("k1", record(title="One"), ["shared"])
    await store.put("k2", dataclasses.replace(record(), title="Two"), ["shared"])
    assert (await store.get("shared")).title == "Two"
