"""The production stores for end-to-end tests: a fresh keyspace on the run's Cassandra and a fresh
folder on its HDFS (the `cassandra_target` and `hdfs_cluster` fixtures of tests/conftest.py), and
what the tests read back from them (warcio over the WARC files, the keyspace's rows).

A test module takes the fixtures by importing them: `from support.production_backends import
hdfs_folder, keyspace`."""
from __future__ import annotations

import asyncio
import io
import posixpath
import uuid
from urllib.parse import parse_qs, urlsplit

import pytest


# --- Cassandra -------------------------------------------------------------------------------------

def metadata_store_url(target: str) -> str:
    """`cassandra://HOSTS/KEYSPACE[?options]` of a new keyspace name (no schema yet), from the
    fixture's `host1,host2[:port][?options]`."""
    hosts, _, options = target.removeprefix("cassandra://").partition("?")
    keyspace = f"spiderduck_e2e_{uuid.uuid4().hex[:16]}"
    return f"cassandra://{hosts.rstrip('/')}/{keyspace}" + (f"?{options}" if options else "")


async def drop_keyspace(url: str) -> None:
    from spiderduck.stores.cassandra_cluster import CassandraOptions, connect
    options = CassandraOptions.from_url(url)
    cluster, session = await connect(options)
    try:
        await asyncio.to_thread(session.execute, f"DROP KEYSPACE IF EXISTS {options.keyspace}")
    finally:
        await asyncio.to_thread(cluster.shutdown)


async def keyspace_rows(url: str) -> dict[str, list[dict]]:
    """Every row of every table of the store URL's keyspace (as the driver reads them, deleted
    rows not among them): table -> rows."""
    from spiderduck.stores.cassandra_cluster import CassandraOptions, connect
    options = CassandraOptions.from_url(url)
    cluster, session = await connect(options)

    def read() -> dict[str, list[dict]]:
        tables = [row["table_name"] for row in session.execute(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (options.keyspace,))]
        return {table: list(session.execute(f"SELECT * FROM {options.keyspace}.{table}"))
                for table in tables}
    try:
        return await asyncio.to_thread(read)
    finally:
        await asyncio.to_thread(cluster.shutdown)


@pytest.fixture
async def keyspace(cassandra_target):
    """The store URL of a new keyspace on the run's Cassandra (schema not applied), dropped
    afterwards."""
    url = metadata_store_url(cassandra_target)
    yield url
    await drop_keyspace(url)


# --- HDFS ------------------------------------------------------------------------------------------

class HdfsFolder:
    """A fresh folder on the fixture's HDFS (`http://namenode:PORT?user=U`), under /tmp (writable
    by any user, as on a real cluster), and an `hdfs` client to look at it as that user."""

    def __init__(self, cluster: str, **options):
        import hdfs
        parts = urlsplit(cluster)
        self.user = parse_qs(parts.query)["user"][0]
        self.root = f"/tmp/spiderduck-e2e-{uuid.uuid4().hex[:12]}"
        query = "&".join(f"{k}={v}" for k, v in {"user": self.user, **options}.items())
        self.store_url = f"hdfs://{parts.netloc}{self.root}?{query}"
        self.client = hdfs.InsecureClient(f"{parts.scheme}://{parts.netloc}", user=self.user)

    def names(self) -> list[str]:
        """Every file under the folder (sealed, and in progress: `.NAME.inprogress`), relative to it."""
        if self.client.status(self.root, strict=False) is None:
            return []
        return sorted(posixpath.relpath(posixpath.join(folder, name), self.root)
                      for folder, _, files in self.client.walk(self.root) for name in files)

    def read(self, name: str) -> bytes:
        with self.client.read(posixpath.join(self.root, name)) as reader:
            return reader.read()

    def read_all(self) -> dict[str, bytes]:
        """name -> bytes of every file under the folder."""
        return {name: self.read(name) for name in self.names()}

    def remove(self) -> None:
        self.client.delete(self.root, recursive=True)


@pytest.fixture
def hdfs_folder(hdfs_cluster):
    """HdfsFolder(**store options) on the run's HDFS; the folders are removed afterwards."""
    made: list[HdfsFolder] = []

    def make(**options) -> HdfsFolder:
        made.append(HdfsFolder(hdfs_cluster, **options))
        return made[-1]
    yield make
    for folder in made:
        folder.remove()


def warc_index(files: dict[str, bytes]) -> dict[tuple[str, int, int], dict]:
    """Every record of the files as warcio reads it, digests checked: (file, offset, length) ->
    {uri, type, status, body}."""
    from warcio.archiveiterator import ArchiveIterator
    index = {}
    for name, data in files.items():
        records = ArchiveIterator(io.BytesIO(data), check_digests=True)
        for record in records:
            body = record.content_stream().read()
            assert record.digest_checker.problems == [], (name, record.digest_checker.problems)
            status = record.http_headers.get_statuscode() if record.http_headers else None
            index[(name, records.get_record_offset(), records.get_record_length())] = {
                "uri": record.rec_headers.get_header("WARC-Target-URI"),
                "type": record.rec_type, "status": int(status) if status else None, "body": body}
    return index
