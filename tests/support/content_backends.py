"""The ContentStore backends the content-store suites run against: local WARC files, and a fresh
folder on a real HDFS cluster (the `hdfs_cluster` fixture of tests/conftest.py)."""
from __future__ import annotations

import pathlib
import time
import uuid
from urllib.parse import parse_qs, urlsplit

import pytest

from spiderduck.stores.content import ContentStore, FetchedContent
from spiderduck.stores.open import open_content_store
from spiderduck.stores.warc_rolling import ContentRef


class FileBackend:
    """Stores under a temporary local folder."""

    def __init__(self, base: pathlib.Path):
        self.base = base

    def url(self, sub: str = "content") -> str:
        return f"file://{self.base / sub}"

    async def open(self, sub: str = "content", **options) -> ContentStore:
        if not options:
            return await open_content_store(self.url(sub))
        from spiderduck.stores.warc_files import WarcFileStore
        return WarcFileStore(str(self.base / sub), **options)

    def files(self, sub: str = "content") -> dict[str, bytes]:
        root = self.base / sub
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*.warc.gz")}

    def member(self, ref: ContentRef, sub: str = "content") -> bytes:
        with open(self.base / sub / ref.path, "rb") as fh:
            fh.seek(ref.offset)
            return fh.read(ref.length)

    def cleanup(self) -> None:
        pass                                     # tmp_path goes by itself


class HdfsBackend:
    """Stores under a fresh folder on a real cluster, deleted afterwards."""

    def __init__(self, cluster: str):
        parts = urlsplit(cluster)
        user = parse_qs(parts.query).get("user", [""])[0]
        if parts.scheme != "http" or not parts.netloc or not user:
            pytest.fail(f"HDFS cluster {cluster!r}: want http://namenode:9870?user=U")
        import hdfs
        self.netloc, self.user = parts.netloc, user
        self.base = f"/tmp/spiderduck-test-{uuid.uuid4().hex}"
        self.client = hdfs.InsecureClient(f"http://{parts.netloc}", user=user)

    def url(self, sub: str = "content") -> str:
        return f"hdfs://{self.netloc}{self.base}/{sub}?user={self.user}"

    async def open(self, sub: str = "content", **options) -> ContentStore:
        if not options:
            return await open_content_store(self.url(sub))
        from spiderduck.stores.hdfs_content import HdfsContentStore, HdfsLocation
        from spiderduck.stores.warc_rolling import RollPolicy
        location = HdfsLocation.parse(self.url(sub))
        clock = options.pop("clock", time.time)
        policy = RollPolicy(**{k: options.pop(k, getattr(location.roll, k))
                               for k in ("roll_bytes", "roll_seconds")})
        assert not options, options
        location = HdfsLocation(location.namenodes, location.root, location.user, policy)
        return HdfsContentStore(location, clock=clock)

    def files(self, sub: str = "content") -> dict[str, bytes]:
        """The sealed files, as a reader listing the folders sees them (no in-progress ones)."""
        root = f"{self.base}/{sub}"
        out = {}
        for folder, _, names in self.client.walk(root):
            for name in names:
                if name.startswith("."):
                    continue
                with self.client.read(f"{folder}/{name}") as reader:
                    out[f"{folder}/{name}"[len(root) + 1:]] = reader.read()
        return out

    def member(self, ref: ContentRef, sub: str = "content") -> bytes:
        """The ref's bytes, from its file whether sealed or still in progress."""
        from spiderduck.stores.warc_rolling import in_progress
        for path in (ref.path, in_progress(ref.path)):
            if self.client.status(f"{self.base}/{sub}/{path}", strict=False):
                with self.client.read(f"{self.base}/{sub}/{path}", offset=ref.offset,
                                      length=ref.length) as reader:
                    return reader.read()
        raise AssertionError(f"no file for {ref}")

    def cleanup(self) -> None:
        self.client.delete(self.base, recursive=True)


@pytest.fixture(params=["file", "hdfs"])
def backend(request, tmp_path):
    if request.param == "file":
        b = FileBackend(tmp_path)
    else:
        b = HdfsBackend(request.getfixturevalue("hdfs_cluster"))
    yield b
    b.cleanup()


@pytest.fixture
async def store(backend):
    s = await backend.open()
    yield s
    await s.close()


def fetched(n: int, size: int = 50) -> FetchedContent:
    return FetchedContent(url=f"http://a.test/{n}", http_status=200,
                          headers=(("Content-Type", "text/html"),), body=f"<p>{n}</p>".encode() * size,
                          fetched_at=1_700_000_000.0 + n, remote_address="127.0.0.1")
