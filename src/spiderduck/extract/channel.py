"""The pool's side of one extraction worker process: its jobs, its pipes, its answers.

    Job       one page to extract, with the future its caller awaits and the workers that owe
              an answer for it (a job may be written to two when its first worker is slow)
    Worker    one child process (src/spiderduck/extract/worker.py): `send` writes a job as one
              length-prefixed pickle frame, `jobs` holds those written and not yet answered,
              `death` says why its pipe closed
    loads     unpickles an answer into the record's own types only (spiderduck.core.record), never into
              anything that runs code: answers come from processes that parse hostile input
    widen     makes a worker's pipe hold a whole page, so a page is one write
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import fcntl
import io
import pickle
import signal
import time
from dataclasses import dataclass, field

from spiderduck.core.record import Audio, Candidate, Document, FieldSource, Image, Label, Offer, PageMetadata, Video
from spiderduck.extract.files import FileCard
from spiderduck.extract.worker import JOB_HEADER
from spiderduck.wire.record_proto import StructuredData

F_SETPIPE_SZ = 1031       # Linux fcntl
PIPE_BYTES = 4 << 20      # a whole page per write: a 64 KiB pipe takes a loop turn per 64 KiB
_ALLOWED = {("spiderduck.core.record", "PageMetadata"): PageMetadata, ("spiderduck.core.record", "Image"): Image,
            ("spiderduck.core.record", "Video"): Video, ("spiderduck.core.record", "FieldSource"): FieldSource,
            ("spiderduck.core.record", "Candidate"): Candidate,
            ("spiderduck.core.record", "Audio"): Audio, ("spiderduck.core.record", "Document"): Document,
            ("spiderduck.core.record", "Label"): Label, ("spiderduck.core.record", "Offer"): Offer,
            ("spiderduck.extract.files", "FileCard"): FileCard,
            ("spiderduck.wire.record_proto", "StructuredData"): StructuredData}


class _Answers(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"{module}.{name} is not an extraction answer") from None


def loads(data: bytes):
    return _Answers(io.BytesIO(data)).load()


def widen(stream) -> None:
    """Make a worker's pipe hold a whole page (up to 4 MiB, or what /proc/sys/fs/pipe-max-size
    allows), so a page is one write, not one write per turn of a busy event loop."""
    transport = getattr(stream, "transport", None) or getattr(stream, "_transport", None)
    pipe = transport.get_extra_info("pipe") if transport is not None else None
    if pipe is None:
        return
    for size in (PIPE_BYTES, _pipe_max()):
        try:
            fcntl.fcntl(pipe.fileno(), F_SETPIPE_SZ, size)
            return
        except OSError:
            continue


def _pipe_max() -> int:
    try:
        with open("/proc/sys/fs/pipe-max-size") as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return 1 << 20


@dataclass(eq=False)
class Job:
    id: int
    body: bytes
    url: str
    content_type: str | None
    future: asyncio.Future
    attempt: int = 1
    holders: set = field(default_factory=set)    # workers it was written to that owe an answer
    http_status: int = 200    # of the response (a wall may answer 403 or 503: see extraction.interstitial)
    explain: bool = False     # answer (PageMetadata, every value offered) (extraction.rejected)
    file: tuple | None = None  # a file's card instead: (total, ((offset, length), ...)), its parts
                               # the body's slices in order (spiderduck.extract.files.FileBytes)

    @property
    def settled(self) -> bool:
        return self.future.done()


@dataclass(eq=False)
class Worker:
    proc: asyncio.subprocess.Process
    jobs: collections.deque = field(default_factory=collections.deque)   # written, not answered
    started: float = 0.0      # monotonic time it began jobs[0] (estimated: its answer before)
    timers: list = field(default_factory=list)
    bitten: Job | None = None        # the job the watchdog killed the worker over
    reader: asyncio.Task | None = None

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None and not self.proc.stdin.is_closing()

    def send(self, job: Job) -> bool:
        """Write the job to the worker; False (and nothing queued) if its pipe is gone."""
        # The page out of band (protocol 5): the pickle holds the rest, the page is written as
        # it is, never copied into the pickle (worker.read_job reads the two).
        data = pickle.dumps((job.id, pickle.PickleBuffer(job.body), job.url, job.content_type,
                             job.http_status, job.explain, job.file), protocol=5, buffer_callback=lambda _: False)
        try:
            self.proc.stdin.write(JOB_HEADER.pack(len(data), len(job.body)) + data)
            self.proc.stdin.write(job.body)           # not joined: that would copy the page
        except (RuntimeError, ConnectionError, OSError):   # uvloop raises on a closed pipe
            return False
        if not self.jobs:
            self.started = time.monotonic()
        self.jobs.append(job)
        job.holders.add(self)
        return True

    def kill(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()

    async def death(self) -> str:
        """Why its pipe closed. Waits a moment for the exit status: asking with kill() first
        would reap it behind asyncio's back and lose the status."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 1.0)
        code = self.proc.returncode
        if code is not None and code < 0:
            return f"extraction worker killed by {signal.Signals(-code).name}"
        return f"extraction worker exited ({'running' if code is None else code})"
