"""Forgetting and retention on a real (mini) HDFS (the `hdfs_cluster` fixture).

A file still being written by another writer cannot be rewritten: the forget waits for it to be
sealed, or fails naming it and erases nothing, and repeating it finishes the work. HDFS down is
a retryable StoreError saying so. `expire` deletes the sealed files last written before the
cut-off, never a file in progress, and the writer rolls at least every retention.content / 2.
"""
from __future__ import annotations

import asyncio
import socket
import time

import pytest

from spiderduck.core.errors import StoreError
from spiderduck.stores.content import warc_record
from spiderduck.stores.hdfs_content import HdfsContentStore, HdfsLocation
from spiderduck.stores.warc_rolling import ContentRef, dated_path, file_name, in_progress
from support.content_backends import HdfsBackend, fetched
from test_content_forget import MARKER, victim_records

VICTIM = "http://victim.test/page?id=1"


@pytest.fixture
def folder(hdfs_cluster):
    b = HdfsBackend(hdfs_cluster)
    yield b
    b.cleanup()


def other_writers_file(folder: HdfsBackend, records: list[bytes], *, sealed: bool,
                       serial: int = 1, age: float = 0.0) -> list[str]:
    """A log file another writer (another host) wrote; the refs of its records."""
    now = time.time() - age
    path = dated_path(now, file_name(now, serial, host="other", pid=99))
    full = f"{folder.base}/content/{path if sealed else in_progress(path)}"
    folder.client.write(full, data=b"".join(records))
    if age:
        folder.client.set_times(full, modification_time=int(now * 1000))
    refs, offset = [], 0
    for data in records:
        refs.append(str(ContentRef(path, offset, len(data))))
        offset += len(data)
    return refs


def store_of(folder: HdfsBackend, **options) -> HdfsContentStore:
    return HdfsContentStore(HdfsLocation.parse(folder.url()), **options)


async def test_a_file_another_writer_still_writes_is_waited_for_or_named(folder):
    victim, other = warc_record(victim_records()[0]), warc_record(fetched(1))
    victim_ref, other_ref = other_writers_file(folder, [victim, other], sealed=False)
    store = store_of(folder, seal_wait=0.5)
    try:
        with pytest.raises(StoreError, match=r"still being written .*\.inprogress") as info:
            await store.forget([VICTIM])
        assert info.value.retryable
        assert folder.member(ContentRef.parse(victim_ref)) == victim        # nothing erased yet
        # Its writer seals it while a patient forget waits: the forget then finishes.
        patient = store_of(folder, seal_wait=30)
        forgetting = asyncio.create_task(patient.forget([VICTIM]))
        path = ContentRef.parse(victim_ref).path
        await asyncio.to_thread(folder.client.rename, f"{folder.base}/content/{in_progress(path)}",
                                f"{folder.base}/content/{path}")
        assert await forgetting == 1
        await patient.close()
        with pytest.raises(StoreError, match="erased"):
            await store.read(victim_ref)
        assert (await store.read(other_ref))[0]["WARC-Target-URI"] == "http://a.test/1"
        assert all(MARKER not in data for data in folder.files().values())
        assert await store.forget([VICTIM]) == 0
    finally:
        await store.close()


async def test_hdfs_down_is_a_retryable_store_error_saying_so():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = HdfsContentStore.from_url(f"hdfs://127.0.0.1:{port}/spiderduck?user=u&timeout=2")
    with pytest.raises(StoreError, match="HDFS unreachable") as info:
        await store.forget([VICTIM])
    assert info.value.retryable
    await store.close()


async def test_expire_deletes_sealed_files_older_than_the_cut_off(folder):
    old = other_writers_file(folder, [warc_record(fetched(1))], sealed=True, serial=1, age=7200)
    new = other_writers_file(folder, [warc_record(fetched(2))], sealed=True, serial=2)
    writing = other_writers_file(folder, [warc_record(fetched(3))], sealed=False, serial=3, age=7200)
    store = store_of(folder)
    try:
        assert await store.expire(time.time() - 3600) == 1
        with pytest.raises(StoreError):
            await store.read(old[0])
        for ref in new + writing:          # a file in progress is its writer's to seal
            await store.read(ref)
        assert await store.expire(time.time() - 3600) == 0
    finally:
        await store.close()


async def test_the_writer_rolls_at_half_the_content_retention(folder):
    class Clock:
        now = 1_700_000_000.0

        def __call__(self):
            return self.now

    clock = Clock()
    store = HdfsContentStore.from_url(folder.url(), max_file_age=30.0, clock=clock, sweep=False)
    try:
        first = await store.append(fetched(1))
        clock.now += 29
        assert ContentRef.parse(await store.append(fetched(2))).path == ContentRef.parse(first).path
        clock.now += 2
        assert ContentRef.parse(await store.append(fetched(3))).path != ContentRef.parse(first).path
    finally:
        await store.close()
