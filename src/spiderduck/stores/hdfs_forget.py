"""Forgetting and retention on HDFS: the content log's files found, rewritten, expired.

HDFS files cannot be changed in place. A sealed file holding records a forget erases is
rewritten: read as a stream, written back with each erased member replaced by a filler of its
length (spiderduck.stores.warc_erase, warc_filler) under the file's in-progress name, which
readers already fall back to; then the original is deleted and the copy renamed to its name.
Offsets do not move, so every content_ref stays valid, and a reader finds the record at every
moment (the sealed name first, the copy while the name is free). The old file's blocks are
deleted by HDFS (WebHDFS DELETE skips the trash); a snapshot of the folder would still hold them.

A file still being written (in progress) cannot be rewritten: its writer must seal it first
(HdfsContentStore.roll, or its roll age). `files` tells sealed from in-progress; the store waits
for those holding matches, and nothing is rewritten until all of them can be (so a forget that
gives up leaves every record that leads to the others: a repeated forget finds them all).
"""
from __future__ import annotations

import posixpath
from typing import Iterable

from spiderduck.stores.hdfs_writer import WebHdfsClient
from spiderduck.stores.warc_erase import Member, Selection, patched, plan
from spiderduck.stores.warc_rolling import in_progress, is_log_file, sealed_name


class LogFile:
    """One file of the content log: its sealed path (relative to the store's root), whether it
    is still in progress, and its last modification (epoch milliseconds)."""

    __slots__ = ("path", "in_progress", "modified")

    def __init__(self, path: str, in_progress: bool, modified: int):
        self.path, self.in_progress, self.modified = path, in_progress, modified

    @property
    def name(self) -> str:
        """Where it is now."""
        return in_progress(self.path) if self.in_progress else self.path


def files(client: WebHdfsClient, root: str) -> list[LogFile]:
    """Every file of the content log under `root` (the dated folders), in name (time) order. A
    file both sealed and in progress (a rewrite's copy left by a forget that stopped) is listed
    once, sealed."""
    found: dict[str, LogFile] = {}
    for folder, _, entries in client.walk("", status=True, ignore_missing=True):
        base = posixpath.relpath(folder[0], root) if folder[0] != root else ""
        for name, status in entries:
            if status.get("type") != "FILE":
                continue
            sealed = sealed_name(name)
            final = sealed or name
            if not is_log_file(final):
                continue
            path = posixpath.join(base, final) if base else final
            if sealed and path in found:
                continue
            found[path] = LogFile(path, bool(sealed), int(status.get("modificationTime", 0)))
    return sorted(found.values(), key=lambda f: (posixpath.dirname(f.path), posixpath.basename(f.path)))


def find(client: WebHdfsClient, log: Iterable[LogFile],
         selection: Selection) -> list[tuple[LogFile, list[Member]]]:
    """The files holding records `selection` takes, with those records (one streamed pass)."""
    by_name = {f.name: f for f in log}
    found = plan(((f.name, _opener(client, f.name)) for f in by_name.values()), selection)
    return [(by_name[name], hits) for name, hits in found]


def _opener(client: WebHdfsClient, path: str):
    return lambda: client.read(path)


def rewrite(client: WebHdfsClient, log_file: LogFile, hits: list[Member], when: float) -> None:
    """Replace a sealed file by a copy with `hits` erased (see the module's docstring)."""
    path, copy = log_file.path, in_progress(log_file.path)
    with client.read(path) as reader:
        client.write(copy, data=patched(reader, hits, when), overwrite=True)
    if client.status(copy)["length"] != client.status(path)["length"]:
        client.delete(copy)
        raise OSError(f"the rewritten copy of {path} has not its length")
    client.delete(path)
    client.rename(copy, path)


def expire(client: WebHdfsClient, root: str, before: float) -> list[str]:
    """Delete the sealed files last written before `before` (epoch seconds); their paths."""
    gone = []
    for log_file in files(client, root):
        if not log_file.in_progress and log_file.modified < before * 1000:
            if client.delete(log_file.path):
                gone.append(log_file.path)
    return gone
