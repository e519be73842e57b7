"""The stores the scheduler's wired-pipeline tests run on: `from support.scheduler_stores import
stores` makes the fixture theirs."""
from __future__ import annotations

import pytest

from spiderduck.stores.open import open_content_store, open_metadata_store


@pytest.fixture
async def stores(tmp_path):
    """(metadata, content): real SQLite and real WARC files under tmp_path."""
    metadata = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    content = await open_content_store(f"file://{tmp_path}/content")
    yield metadata, content
    await content.close()
    await metadata.close()
