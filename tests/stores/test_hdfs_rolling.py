"""HDFS rolling files on a real (mini) HDFS: sealed by rename, never half a record, kill -9 safe.

A file is written under its hidden in-progress name and renamed when it rolls (size or age) or
the store closes; a reader that lists the folders sees only sealed files, each ending on a whole
record. A writer killed with SIGKILL leaves every record it acknowledged readable by its ref,
and the next writer's sweep cuts the orphan back to whole records and seals it.
"""
from __future__ import annotations

import asyncio
import io
import os
import pathlib
import signal
import subprocess
import sys
import time
import uuid
from urllib.parse import parse_qs, urlsplit

import pytest

from spiderduck.stores.content import FetchedContent, warc_record
from spiderduck.stores.hdfs_content import HdfsContentStore, HdfsLocation
from spiderduck.stores.hdfs_writer import HdfsWriter
from spiderduck.stores.warc_rolling import ContentRef, RollPolicy, complete_length, in_progress

ROOT = pathlib.Path(__file__).resolve().parents[3]


class Folder:
    """A fresh folder on the cluster, and a look at it as a directory reader has."""

    def __init__(self, cluster: str):
        import hdfs
        parts = urlsplit(cluster)
        self.netloc = parts.netloc
        self.user = parse_qs(parts.query)["user"][0]
        self.root = f"/tmp/spiderduck-rolling-{uuid.uuid4().hex}"
        self.client = hdfs.InsecureClient(f"http://{self.netloc}", user=self.user, root=self.root)

    def url(self, **options) -> str:
        query = "&".join(f"{k}={v}" for k, v in {"user": self.user, **options}.items())
        return f"hdfs://{self.netloc}{self.root}?{query}"

    def store(self, *, clock=time.time, **options) -> HdfsContentStore:
        location = HdfsLocation.parse(self.url())
        roll = RollPolicy(**{k: options.pop(k, getattr(location.roll, k))
                             for k in ("roll_bytes", "roll_seconds")})
        location = HdfsLocation(location.namenodes, location.root, location.user, roll)
        return HdfsContentStore(location, clock=clock, **options)

    def listing(self) -> tuple[dict[str, bytes], list[str]]:
        """(sealed files by path, in-progress paths) under the folder."""
        sealed, open_ = {}, []
        if not self.client.status("", strict=False):
            return sealed, open_
        for folder, _, names in self.client.walk(""):
            for name in names:
                path = f"{folder}/{name}"[len(self.root) + 1:]
                if name.startswith("."):
                    open_.append(path)
                else:
                    with self.client.read(path) as reader:
                        sealed[path] = reader.read()
        return sealed, open_


@pytest.fixture
def folder(hdfs_cluster):
    f = Folder(hdfs_cluster)
    yield f
    f.client.delete("", recursive=True)


def fetched(n: int, size: int = 2000) -> FetchedContent:
    return FetchedContent(url=f"http://r.test/{n}", http_status=200, headers=(),
                          body=os.urandom(size), fetched_at=time.time())


def records(data: bytes) -> list[str]:
    from warcio.archiveiterator import ArchiveIterator
    return [r.rec_headers.get_header("WARC-Target-URI")
            for r in ArchiveIterator(io.BytesIO(data), check_digests=True)]


async def wait_for(predicate, what: str, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while not (value := await asyncio.to_thread(predicate)):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)
    return value


async def test_a_file_is_written_in_progress_and_sealed_by_rename_when_it_rolls(folder):
    store = folder.store(roll_bytes=5000)
    async with store:
        first = [await store.append(fetched(n)) for n in range(3)]        # 3 x ~2 KB: rolls
        second = await store.append(fetched(3))
        sealed, open_ = folder.listing()
        a, b = ContentRef.parse(first[0]).path, ContentRef.parse(second).path
        assert a != b and list(sealed) == [a]                 # the full file, renamed
        assert open_ == [in_progress(b)]                      # the current one, hidden
        assert records(sealed[a]) == [f"http://r.test/{n}" for n in range(3)]
        for n, ref in enumerate(first + [second]):            # both read by ref
            assert (await store.read(ref))[0]["WARC-Target-URI"] == f"http://r.test/{n}"
    sealed, open_ = folder.listing()                          # closing seals the last one
    assert sorted(sealed) == sorted([a, b]) and open_ == []
    assert records(sealed[b]) == ["http://r.test/3"]


async def test_a_file_is_sealed_at_its_age_limit_with_no_further_records(folder):
    store = folder.store(roll_seconds=0.4, sweep=False)
    async with store:
        ref = ContentRef.parse(await store.append(fetched(0)))
        sealed = await wait_for(lambda: folder.listing()[0], "the file to be sealed by age")
        assert list(sealed) == [ref.path] and folder.listing()[1] == []
        assert (await store.read(str(ref)))[0]["WARC-Target-URI"] == "http://r.test/0"


async def test_concurrent_records_are_written_in_batches_and_each_ref_is_exact(folder, monkeypatch):
    writes = []
    real_flush = HdfsWriter.flush

    def counting_flush(self):
        writes.append(len(self._staged))
        real_flush(self)

    monkeypatch.setattr(HdfsWriter, "flush", counting_flush)
    store = folder.store()
    async with store:
        refs = await asyncio.gather(*(store.append(fetched(n, 500)) for n in range(200)))
        for n, ref in enumerate(refs):
            assert (await store.read(ref))[0]["WARC-Target-URI"] == f"http://r.test/{n}"
    batches = [n for n in writes if n]
    assert sum(batches) == 200
    assert len(batches) < 50, batches                      # not one WebHDFS call per record
    [data] = folder.listing()[0].values()
    in_file = records(data)                                 # in the order the refs say
    assert in_file == [f"http://r.test/{n}" for n in
                       sorted(range(200), key=lambda n: ContentRef.parse(refs[n]).offset)]


async def test_a_directory_reader_never_sees_half_a_record(folder):
    """While records of 300 KB stream in and files roll every ~1 MB, every file a reader
    lists ends on a whole record."""
    store = folder.store(roll_bytes=1 << 20)
    seen: set[str] = set()
    done = asyncio.Event()

    async def reader():
        while not done.is_set():
            sealed, _ = await asyncio.to_thread(folder.listing)
            for path, data in sealed.items():
                assert complete_length(data) == len(data), path
                assert records(data)
                seen.add(path)

    async with store:
        watching = asyncio.create_task(reader())
        for start in range(0, 24, 4):
            await asyncio.gather(*(store.append(fetched(n, 300_000)) for n in range(start, start + 4)))
        done.set()
        await watching
    sealed, open_ = folder.listing()
    assert open_ == [] and len(sealed) >= 4 and seen
    assert sorted(u for data in sealed.values() for u in records(data)) == \
        sorted(f"http://r.test/{n}" for n in range(24))


async def test_a_failed_write_cuts_the_file_back_to_whole_records_and_seals_it(folder):
    """As if an append broke off mid-record: the part that landed is cut away."""
    client = HdfsContentStore(HdfsLocation.parse(folder.url()))._client()
    writer = HdfsWriter(client, RollPolicy())
    with writer.batch():
        refs = [writer.stage(warc_record(fetched(n))) for n in range(3)]
    path = in_progress(ContentRef.parse(refs[0]).path)
    client.write(path, data=warc_record(fetched(3))[:700], append=True)     # half a record
    writer._give_up()
    sealed, open_ = folder.listing()
    assert open_ == [] and records(sealed[ContentRef.parse(refs[0]).path]) == \
        [f"http://r.test/{n}" for n in range(3)]


async def test_an_orphan_with_a_torn_tail_is_cut_back_and_sealed_by_the_next_writer(folder):
    name = time.strftime("%Y/%m/%d/spiderduck-%Y%m%d000000-gone-1-00001.warc.gz", time.gmtime())
    whole = b"".join(warc_record(fetched(n)) for n in range(2))
    folder.client.write(in_progress(name), data=whole + warc_record(fetched(2))[:500])
    folder.client.write(in_progress(name.replace("00001", "00002")), data=b"\x1f\x8b\x08")
    store = folder.store(clock=lambda: time.time() + 7300)         # past twice the roll age
    async with store:
        await store.append(fetched(9))                             # the sweep runs first
        await wait_for(lambda: name in folder.listing()[0], "the orphan to be sealed")
    sealed, open_ = folder.listing()
    assert sealed[name] == whole and records(sealed[name]) == ["http://r.test/0", "http://r.test/1"]
    assert open_ == []                                             # the empty one is gone


WRITER = """
import asyncio, os, sys, time
from spiderduck.stores.content import FetchedContent
from spiderduck.stores.hdfs_content import HdfsContentStore

async def main():
    store = HdfsContentStore.from_url(sys.argv[1])
    async def one(n):
        item = FetchedContent(url=f"http://k.test/{n}", http_status=200, headers=(),
                              body=os.urandom(100_000), fetched_at=time.time())
        print(n, await store.append(item), flush=True)
    n = 0
    while True:
        await asyncio.gather(*(one(n + k) for k in range(6)))
        n += 6

asyncio.run(main())
"""


async def test_kill_9_of_the_writer_leaves_every_acknowledged_record_readable(folder):
    proc = subprocess.Popen([sys.executable, "-c", WRITER, folder.url()], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    acked: dict[str, str] = {}
    try:
        while len(acked) < 30:
            line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60)
            assert line, f"the writer ended: {proc.stderr.read()[-2000:]}"
            n, ref = line.split()
            acked[ref] = f"http://k.test/{n}"
    finally:
        proc.send_signal(signal.SIGKILL)                   # mid-batch, as likely as not
        rest, _ = proc.communicate(timeout=30)
    for line in rest.splitlines():                         # acknowledged before it died
        n, ref = line.split()
        acked[ref] = f"http://k.test/{n}"
    reader = folder.store(sweep=False)
    async with reader:
        for ref, url in acked.items():                     # the file is still in progress
            assert (await reader.read(ref))[0]["WARC-Target-URI"] == url
    assert folder.listing()[1], "the killed writer's file stays in progress"
    next_writer = folder.store(clock=lambda: time.time() + 7200)   # its orphan is 2 x age old
    async with next_writer:
        await next_writer.append(fetched(0))
        for ref, url in acked.items():                     # sealed now: still read by ref
            assert (await next_writer.read(ref))[0]["WARC-Target-URI"] == url
    sealed, open_ = folder.listing()
    assert open_ == []
    urls = [u for data in sealed.values() for u in records(data)]
    assert set(acked.values()) <= set(urls)
