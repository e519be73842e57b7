"""The metadata-store conformance fixtures: `store`, each MetadataStore in turn (SQLite in a
temporary folder, Cassandra in a throwaway keyspace of the `cassandra_target` of
tests/conftest.py, started only when used), and `record()`, a record to put. Used by
tests/stores/test_metadata_store.py and test_metadata_forget.py."""
from __future__ import annotations

import contextlib

import pytest

from spiderduck.core.record import Image, Redirect, UrlRecord
from spiderduck.core.status import Status
from spiderduck.stores.open import open_metadata_store
from support.cassandra_keyspace import throwaway_keyspace


@pytest.fixture(params=["sqlite", "cassandra"])
async def store(request, tmp_path):
    async with contextlib.AsyncExitStack() as stack:
        if request.param == "sqlite":
            url = f"sqlite:///{tmp_path}/m.db"
        else:
            target = request.getfixturevalue("cassandra_target")   # started only when used
            url = await stack.enter_async_context(throwaway_keyspace(target))
        s = await open_metadata_store(url)
        stack.push_async_callback(s.close)
        yield s


def record(**kw) -> UrlRecord:
    base = dict(url="http://s.test/a", status=Status.OK, final_url="http://news.test/story",
                canonical_url="http://news.test/story", title="Story", fetched_at=1000.0,
                redirects=(Redirect("http://s.test/a", 301),),
                image=Image("http://news.test/i.png", 10, 20, "image/png"),
                structured_data={"json-ld": [{"@type": "NewsArticle"}]}, content_length=2_000_000_000)
    base.update(kw)
    return UrlRecord(**base)
