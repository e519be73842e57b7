"""Open the stores a config names (`metadata_store`, `content_store`)."""
from __future__ import annotations

from urllib.parse import urlsplit

from spiderduck.core.errors import ConfigError
from spiderduck.core.secrets import redact_url
from spiderduck.stores.content import ContentStore
from spiderduck.stores.metadata import MetadataStore


async def open_metadata_store(url: str, *, retention: float = 0) -> MetadataStore:
    """`retention` (retention.metadata, seconds; 0 = forever): Cassandra writes it as the TTL of
    every row a put writes; SQLite keeps records until the retention sweep deletes them
    (spiderduck.stores.retention), so it takes none."""
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        from spiderduck.stores.sqlite_metadata import SqliteMetadataStore
        # SQLAlchemy's convention: sqlite:///relative/path, sqlite:////absolute/path
        path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else url[len("sqlite://"):]
        return await SqliteMetadataStore.open(path or ":memory:")
    if scheme == "cassandra":
        from spiderduck.stores.cassandra_metadata import CassandraMetadataStore
        # cassandra://[user[:password]@]h1,h2[:9042]/keyspace[?consistency=LOCAL_QUORUM&ssl=true]
        return await CassandraMetadataStore.open(url, retention=retention)
    raise ConfigError(f"metadata_store: unsupported {redact_url(url)!r} "
                      "(use sqlite:///PATH or cassandra://h1,h2:9042/keyspace)")


async def open_content_store(url: str, *, max_file_age: float = 0.0) -> ContentStore:
    """`max_file_age` (seconds, 0 = the store's default): the writer starts a new file at least
    this often (retention.content's half; on HDFS, sooner if the URL's roll_seconds= says so)."""
    scheme = urlsplit(url).scheme
    if scheme == "file":
        from spiderduck.stores.warc_files import WarcFileStore
        from spiderduck.stores.warc_rolling import DEFAULT_ROLL_SECONDS
        return WarcFileStore(url[len("file://"):], roll_seconds=min(
            DEFAULT_ROLL_SECONDS, max_file_age or DEFAULT_ROLL_SECONDS))
    if scheme in ("hdfs", "hdfs+https"):
        from spiderduck.stores.hdfs_content import HdfsContentStore
        return HdfsContentStore.from_url(url, max_file_age=max_file_age)
    raise ConfigError(f"content_store: unsupported {redact_url(url)!r} (use file://PATH, "
                      "hdfs://NAMENODE:9870/PATH?user=U or hdfs+https://NAMENODE:9871/PATH?user=U)")
