"""What the WARC content stores share: file names, roll decisions, content_ref.

Both the local store (`file://`) and the HDFS store (`hdfs://`) append gzip-per-record
WARC files and roll to a new file by size or age. A content_ref is

    PATH@OFFSET+LENGTH

PATH is the file relative to the store's root (the local store writes flat names; the HDFS
store adds `YYYY/MM/DD/` folders, so a ref may hold `/`), OFFSET the byte offset of the
record's gzip member and LENGTH its compressed length. A ref never holds `..`, a leading `/`
or empty segments, so it cannot leave the store's root.

A file being written may live under its in-progress name (`in_progress(path)`: the same folder,
`.NAME.inprogress`, hidden from Hadoop's and Spark's readers, which skip names starting with
`.` or `_`) until its writer seals it by renaming it to PATH. A ref always names PATH; a reader
that does not find it there looks for the in-progress name.
"""
from __future__ import annotations

import os
import re
import socket
import time
import zlib
from dataclasses import dataclass

from isal import igzip_lib, isal_zlib

from spiderduck.core.errors import StoreError
from spiderduck.stores.content import parse_warc_record, read_warc_record
from spiderduck.stores.warc_filler import is_erased

DEFAULT_ROLL_BYTES = 256 << 20        # 256 MiB: a few HDFS blocks, a file a reader can copy
DEFAULT_ROLL_SECONDS = 3600.0         # at least one file an hour, so old content gets sealed

_SEGMENT = r"[A-Za-z0-9_][\w.\-]*"
_REF = re.compile(rf"((?:{_SEGMENT}/)*{_SEGMENT})@(\d{{1,18}})\+(\d{{1,12}})")   # fullmatch
_HOST_UNSAFE = re.compile(r"[^\w.\-]+")


@dataclass(frozen=True)
class ContentRef:
    path: str            # relative to the store's root
    offset: int
    length: int

    def __str__(self) -> str:
        return f"{self.path}@{self.offset}+{self.length}"

    @classmethod
    def parse(cls, ref: str) -> "ContentRef":
        """Raises StoreError (not retryable) for anything this shape does not match."""
        m = _REF.fullmatch(ref) if isinstance(ref, str) else None
        if not m or int(m.group(3)) == 0:
            raise StoreError(f"not a content_ref: {ref!r} (want PATH@OFFSET+LENGTH)",
                             retryable=False)
        return cls(m.group(1), int(m.group(2)), int(m.group(3)))


def decode_record(ref: ContentRef, member: bytes) -> tuple[dict[str, str], bytes]:
    """read_warc_record, with a wrong ref (short or not a gzip member) or an erased record (a
    forget's filler: spiderduck.stores.warc_filler) as StoreError."""
    if len(member) != ref.length:
        raise StoreError(f"content_ref {ref} reaches past the end of its file", retryable=False)
    try:
        headers, block = read_warc_record(member)
    except (OSError, EOFError, zlib.error, isal_zlib.error, igzip_lib.IsalError, ValueError) as exc:
        raise StoreError(f"content_ref {ref} does not locate a WARC record: {exc}",
                         retryable=False) from exc
    if is_erased(headers):
        raise StoreError(f"content_ref {ref}: the record was erased (forgotten)", retryable=False)
    return headers, block


@dataclass(frozen=True)
class RollPolicy:
    """When a writer starts a new file. A file may pass roll_bytes by one record."""
    roll_bytes: int = DEFAULT_ROLL_BYTES
    roll_seconds: float = DEFAULT_ROLL_SECONDS

    def __post_init__(self):
        if self.roll_bytes <= 0 or self.roll_seconds <= 0:
            raise ValueError(f"roll_bytes and roll_seconds must be positive: {self}")

    def should_roll(self, size: int, opened_at: float, now: float) -> bool:
        return size >= self.roll_bytes or now - opened_at >= self.roll_seconds


IN_PROGRESS_SUFFIX = ".inprogress"


def in_progress(path: str) -> str:
    """`a/b/NAME` -> `a/b/.NAME.inprogress`: where a file lives until it is sealed."""
    folder, _, name = path.rpartition("/")
    return f"{folder}/" * bool(folder) + f".{name}{IN_PROGRESS_SUFFIX}"


def sealed_name(name: str) -> str | None:
    """`.NAME.inprogress` -> `NAME`; None for any other name."""
    if name.startswith(".") and name.endswith(IN_PROGRESS_SUFFIX):
        return name[1:-len(IN_PROGRESS_SUFFIX)] or None
    return None


def complete_length(data: bytes, *, chunk: int = 1 << 20) -> int:
    """How many leading bytes of `data` are whole gzip members: where a file cut mid-record (its
    writer killed during an append) must be truncated so readers never see half a record.
    Memory stays at about `chunk` whatever the members inflate to."""
    view = memoryview(data)
    end = 0
    while end < len(view):
        d = zlib.decompressobj(wbits=31)
        pos = end
        try:
            while not d.eof and pos < len(view):
                d.decompress(view[pos:pos + chunk], chunk)
                pos = min(pos + chunk, len(view))
                while d.unconsumed_tail and not d.eof:
                    d.decompress(d.unconsumed_tail, chunk)
        except zlib.error:
            return end
        if not d.eof:
            return end
        end = pos - len(d.unused_data)
    return end


def host_label(host: str | None = None) -> str:
    label = _HOST_UNSAFE.sub("_", (host if host is not None else socket.gethostname()).split(".")[0])
    return label.strip("._-") or "host"


def file_name(now: float, serial: int, *, host: str | None = None, pid: int | None = None) -> str:
    """`spiderduck-YYYYmmddHHMMSS-HOST-PID-SERIAL.warc.gz`: host, pid and a per-process serial
    keep writers on many machines (and one writer rolling twice a second) apart."""
    stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(now))
    return (f"spiderduck-{stamp}-{host_label(host)}-{os.getpid() if pid is None else pid}"
            f"-{serial:05d}.warc.gz")


def is_log_file(name: str) -> bool:
    """A name file_name gives (a file of the content log, not one an operator put beside it)."""
    return name.startswith("spiderduck-") and name.endswith(".warc.gz")


def dated_path(now: float, name: str) -> str:
    """`YYYY/MM/DD/NAME` (UTC): keeps each folder of a long-lived store small."""
    return time.strftime("%Y/%m/%d/", time.gmtime(now)) + name


class RollingFile:
    """The current file of one writer: name, age and length, and when to roll.

    The writer asks `next(now)` before each record; a new name means "create this file".
    After a write it calls `wrote(n)`; after a failed write it calls `abandon()`, so the next
    record starts a fresh file and every offset handed out stays exact.
    """

    def __init__(self, policy: RollPolicy, *, dated: bool = False, host: str | None = None,
                 pid: int | None = None):
        self.policy = policy
        self._dated = dated
        self._host = host_label(host)
        self._pid = os.getpid() if pid is None else pid
        self._serial = 0
        self.path = ""               # "" until the first record
        self.size = 0
        self.opened_at = 0.0

    def next(self, now: float) -> bool:
        """Roll if due; True when `path` is a new file the writer must create."""
        if self.path and not self.policy.should_roll(self.size, self.opened_at, now):
            return False
        self._serial += 1
        name = file_name(now, self._serial, host=self._host, pid=self._pid)
        self.path = dated_path(now, name) if self._dated else name
        self.size = 0
        self.opened_at = now
        return True

    def due(self, now: float) -> bool:
        """The current file has reached its size or age limit (False when there is none)."""
        return bool(self.path) and self.policy.should_roll(self.size, self.opened_at, now)

    def wrote(self, n: int) -> ContentRef:
        ref = ContentRef(self.path, self.size, n)
        self.size += n
        return ref

    def abandon(self) -> None:
        self.path = ""


def following(ref: ContentRef, max_bytes: int) -> ContentRef:
    """The window of max_bytes after `ref`'s record in its file."""
    return ContentRef(ref.path, ref.offset + ref.length, max_bytes)


def split_records(data: bytes, max_records: int) -> list[tuple[dict[str, str], bytes]]:
    """The whole WARC records (one gzip member each) at the start of `data`, at most max_records;
    a member cut short or not gzip ends the list; erased records (fillers) are left out."""
    out: list[tuple[dict[str, str], bytes]] = []
    while data and len(out) < max_records:
        member = isal_zlib.decompressobj(31)
        try:
            raw = member.decompress(data)
        except (isal_zlib.error, igzip_lib.IsalError, zlib.error, ValueError):
            break
        if not member.eof:
            break
        data = member.unused_data
        record = parse_warc_record(raw)
        if not is_erased(record[0]):
            out.append(record)
    return out
