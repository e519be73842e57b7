"""Extraction off the event loop: worker processes with a time budget per page.

    pool = ExtractionPool(workers=2, budget=2.0, parser="selectolax", robots_token="spiderduck")
    async with pool:
        page = await pool.extract(body, url, content_type)
        card = await pool.file_card(content_type, url, have)    # a file's (spiderduck.extract.files)

Parsing a page is CPU work that would stall every other URL of the scheduler's event loop (a
page of 100,000 nested elements takes lexbor 30 s), and worker processes use the other cores.
Each worker (worker.py) is a child process fed over its stdin and stdout, and works through its
jobs in order. The pool keeps up to QUEUED_PER_WORKER jobs written to each worker, so a worker
never waits on a busy event loop between pages (measured: with one job at a time, pages waited
two seconds for a worker that was idle two thirds of the time).

A page gets `budget` seconds of its worker's time. The worker's own timer ends it past that
(SIGALRM); a watchdog here kills it a moment later if it has not. That page raises
ExtractionTimeout, and the worker is replaced. No job is sent to a worker whose current page
has run for SLOW_AFTER of the budget, and the jobs already queued behind such a page are sent
to another worker as well (the first answer wins), so a hostile page holds back no other. A
worker that dies otherwise (a crash, the OOM killer) is replaced and its current page tried once
more; a second death raises ExtractionFailed.

Answers come from processes that parse hostile input, so they are unpickled only into the
record's own types (spiderduck.core.record), never into anything that runs code.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import os
import pathlib
import signal
import sys
import time

from spiderduck.core import metrics
from spiderduck.core.errors import SpiderDuckError
from spiderduck.core.record import PageMetadata
from spiderduck.extract.channel import Job, Worker, loads, widen
from spiderduck.extract.files import FileBytes, FileCard
from spiderduck.extract.worker import HEADER

log = logging.getLogger("spiderduck.scheduler")

_ROOT = str(pathlib.Path(__file__).resolve().parent.parent.parent)
START_TIMEOUT = 60.0      # seconds for a new worker to import and say it is ready
QUEUED_PER_WORKER = 4     # jobs written to a worker ahead of its answers (1 running, 3 waiting)
SLOW_AFTER = 0.1          # of the budget: a worker whose page has run this long gets no new jobs
WATCHDOG_GRACE = 1.0      # seconds past the budget before the pool kills a worker itself


class ExtractionTimeout(SpiderDuckError):
    """The page's extraction ran past the budget."""


class ExtractionFailed(SpiderDuckError):
    """The page could not be extracted: its worker died twice, or extraction raised."""


class PoolClosing(SpiderDuckError):
    """The pool is closing: the page was not extracted, and may be tried again elsewhere."""
    retryable = True


def _closing(jobs) -> None:
    """Fail the jobs not yet settled: the pool is closing (retryable elsewhere)."""
    for job in jobs:
        if not job.settled:
            job.future.set_exception(PoolClosing("the extraction pool is closing"))


class ExtractionPool:
    def __init__(self, *, workers: int, budget: float, parser: str, robots_token: str,
                 command: tuple[str, ...] | None = None):
        """`parser` and `robots_token` are extract_page's (process.parser, and the product token
        of fetcher.user_agent). `command` runs one worker (default: this Python, `-m
        spiderduck.extract.worker`); the budget in seconds is appended to it."""
        self._size = max(1, workers)
        self._budget = budget
        self._command = (*(command or (sys.executable, "-m", "spiderduck.extract.worker",
                                       parser, robots_token)), repr(float(budget)))
        self._workers: list[Worker] = []
        self._waiting: collections.deque[Job] = collections.deque()   # in order of arrival
        self._rescued: list[Job] = []        # copies of jobs queued behind a slow page
        self._starting: set[asyncio.Task] = set()
        self._ids = itertools.count()
        self._closed = False
        self._metrics = metrics.recorder("scheduler")

    def __repr__(self) -> str:
        return f"ExtractionPool(workers={self._size}, budget={self._budget:g}s)"

    async def __aenter__(self) -> "ExtractionPool":
        for _ in range(self._size):
            self._replace()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # --- the workers ---------------------------------------------------------------------
    def _replace(self) -> None:
        """Start a worker in the background; it takes jobs once ready."""
        if self._closed:
            return
        task = asyncio.create_task(self._start_one())
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    async def _start_one(self) -> None:
        delay = 0.5
        while not self._closed:
            try:
                worker = await self._spawn()
            except Exception as exc:   # noqa: BLE001 -- whatever it was, try again later
                log.error("cannot start an extraction worker (%r); trying again in %gs", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)
                continue
            if self._closed:
                worker.kill()
                await worker.proc.wait()
                return
            self._workers.append(worker)
            worker.reader = asyncio.create_task(self._read_answers(worker))
            self._pump()
            return

    async def _spawn(self) -> Worker:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (_ROOT, os.environ.get("PYTHONPATH", "")) if p)}
        # Its own session: a terminal's Ctrl-C is for the service, which ends its workers when
        # the pages in flight are done (by closing their stdin, which also closes if it dies).
        proc = await asyncio.create_subprocess_exec(
            *self._command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env,
            start_new_session=True)
        worker = Worker(proc)
        for pipe in (proc.stdin, proc.stdout):
            widen(pipe)
        try:
            async with asyncio.timeout(START_TIMEOUT):
                if await self._read_frame(worker) != "ready":
                    raise ValueError("extraction worker did not say it was ready")
        except BaseException:
            worker.kill()
            await proc.wait()
            raise
        return worker

    @staticmethod
    async def _read_frame(worker: Worker):
        head = await worker.proc.stdout.readexactly(HEADER.size)
        return loads(await worker.proc.stdout.readexactly(HEADER.unpack(head)[0]))

    async def _read_answers(self, worker: Worker) -> None:
        """Answers in order, each settling the oldest job; at the end, the worker's death."""
        while await self._take_answer(worker):
            self._pump()            # outside _take_answer: a fault here is not the worker's

    async def _take_answer(self, worker: Worker) -> bool:
        """Read one answer and settle its job; False once the worker is done (and buried)."""
        try:
            answer = await self._read_frame(worker)
            job = worker.jobs.popleft() if worker.jobs else None
            if not (isinstance(answer, tuple) and len(answer) == 3 and job is not None
                    and answer[0] == job.id):
                raise ValueError("extraction worker answered out of turn")
            job.holders.discard(worker)
            worker.started = time.monotonic()
            self._arm(worker)
            _, kind, value = answer
            if job.settled:
                pass
            elif kind == "ok":
                job.future.set_result(value)
            else:
                self._metrics.count("extraction_failures", reason="error")
                job.future.set_exception(ExtractionFailed(f"metadata extraction failed: {value}"))
            return True
        except asyncio.CancelledError:
            raise
        except Exception as exc:   # noqa: BLE001 -- EOF, garbage: this worker is done
            reason = str(exc) if isinstance(exc, ValueError) else ""
            await self._bury(worker, reason)
            return False

    def _arm(self, worker: Worker) -> None:
        """Timers on the worker's current job: at SLOW_AFTER of the budget, send the jobs queued
        behind it elsewhere too; WATCHDOG_GRACE past the budget, kill the worker."""
        for timer in worker.timers:
            timer.cancel()
        worker.timers.clear()
        if worker.jobs:
            loop, job, now = asyncio.get_running_loop(), worker.jobs[0], time.monotonic()
            worker.timers = [
                loop.call_later(max(0.0, worker.started + SLOW_AFTER * self._budget - now),
                                self._rescue, worker, job),
                loop.call_later(max(0.0, worker.started + self._budget + WATCHDOG_GRACE - now),
                                self._bite, worker, job)]

    def _rescue(self, worker: Worker, job: Job) -> None:
        if worker.jobs and worker.jobs[0] is job:
            self._rescued += [waiting for waiting in list(worker.jobs)[1:]
                              if not waiting.settled and waiting.holders == {worker}]
            self._pump()

    def _bite(self, worker: Worker, job: Job) -> None:
        if worker.jobs and worker.jobs[0] is job:
            worker.bitten = job
            worker.kill()

    async def _bury(self, worker: Worker, reason: str) -> None:
        """A worker's pipe closed: settle its jobs, replace it."""
        for timer in worker.timers:
            timer.cancel()
        if worker in self._workers:
            self._workers.remove(worker)
        death = await worker.death()           # before kill(), which would lose the exit status
        if reason:
            death = reason
        worker.kill()
        await worker.proc.wait()
        jobs = list(worker.jobs)
        worker.jobs.clear()
        for job in jobs:
            job.holders.discard(worker)
        self._replace()
        if self._closed:
            _closing(jobs)
            return
        # The worker's own timer ends only the job it is on; the watchdog's kill counts against
        # the job it bit, and only if that job was still the one running (answers in the pipe
        # may have been read since).
        alarm = worker.proc.returncode == -signal.SIGALRM
        for n, job in enumerate(jobs):
            if job.settled or job.holders:              # answered, or another worker has it
                continue
            innocent = worker.bitten is not None and worker.bitten is not job
            if n > 0 or innocent:                       # never started, or not its fault
                self._waiting.appendleft(job)
            elif alarm or worker.bitten is job:
                self._metrics.count("extraction_failures", reason="timeout")
                job.future.set_exception(ExtractionTimeout(
                    f"metadata extraction took longer than process.extract_timeout "
                    f"({self._budget:g}s)"))
            elif job.attempt >= 2:
                self._metrics.count("extraction_failures", reason="crash")
                job.future.set_exception(ExtractionFailed(f"metadata extraction failed: {death}"))
            else:
                log.warning("%s while extracting %s; trying it again", death, job.url)
                job.attempt += 1
                self._waiting.appendleft(job)
        self._pump()

    # --- the jobs ------------------------------------------------------------------------
    def _pick(self, job: Job) -> Worker | None:
        """The least loaded worker with room that does not hold the job, skipping one whose
        current page runs long."""
        now, best = time.monotonic(), None
        for worker in self._workers:
            queued = len(worker.jobs)
            if queued >= QUEUED_PER_WORKER or worker in job.holders or not worker.alive:
                continue
            if queued and now - worker.started > SLOW_AFTER * self._budget:
                continue
            if best is None or queued < len(best.jobs):
                best = worker
        return best

    def _pump(self) -> None:
        """Send waiting jobs to workers with room: rescued copies first, then in order."""
        still = []
        for job in self._rescued:
            if not job.settled and job.holders:
                worker = self._pick(job)
                if worker is None or not self._send(worker, job):
                    still.append(job)
        self._rescued = still
        while self._waiting:
            job = self._waiting[0]
            if job.settled:
                self._waiting.popleft()
                continue
            worker = self._pick(job)
            if worker is None or not self._send(worker, job):
                return
            self._waiting.popleft()

    def _send(self, worker: Worker, job: Job) -> bool:
        """Send; if the worker's pipe is gone, leave the job waiting (its reader buries the
        worker when it reads the end)."""
        if not worker.send(job):
            return False
        if len(worker.jobs) == 1:
            self._arm(worker)
        return True

    async def extract(self, body: bytes, url: str, content_type: str | None,
                      http_status: int = 200) -> PageMetadata:
        """The page's metadata, from a worker within the budget. Raises ExtractionTimeout,
        ExtractionFailed, or PoolClosing (retryable) once the pool is closing."""
        return await self._run(body, url, content_type, http_status)

    async def explain(self, body: bytes, url: str, content_type: str | None, http_status: int = 200):
        """(the page's metadata, every value each field's sources offered: spiderduck.extract.offers),
        from a worker within the budget; raises as `extract` does."""
        return await self._run(body, url, content_type, http_status, explain=True)

    async def file_card(self, content_type: str, url: str, have: FileBytes) -> FileCard:
        """A file's card from its parts (spiderduck.extract.files.file_card), from a worker
        within the budget; raises as `extract` does (ExtractionFailed for an answer that is no card)."""
        spans = tuple((offset, len(data)) for offset, data in have.parts)
        card = await self._run(b"".join(data for _, data in have.parts), url, content_type, 200,
                               file=(have.total, spans))
        if not isinstance(card, FileCard):
            raise ExtractionFailed(f"a file's card was answered by a {type(card).__name__}")
        return card

    async def next_range(self, content_type: str, url: str, have: FileBytes) -> tuple[int, int] | None:
        """The next range a file's card wants (spiderduck.extract.files.next_range), from a worker
        within the budget: parsing a hostile file's cross-references is no work for the event
        loop. Raises as `extract` does (ExtractionFailed for an answer that is no range)."""
        spans = tuple((offset, len(data)) for offset, data in have.parts)
        wanted = await self._run(b"".join(data for _, data in have.parts), url, content_type, 200,
                                 file=(have.total, spans, "range"))
        if wanted is None:
            return None
        if not (isinstance(wanted, tuple) and len(wanted) == 2 and all(type(n) is int for n in wanted)):
            raise ExtractionFailed(f"a file's next range was answered by a {type(wanted).__name__}")
        return wanted

    async def _run(self, body: bytes, url: str, content_type: str | None, http_status: int,
                   explain: bool = False, file: tuple | None = None):
        if self._closed:
            raise PoolClosing("the extraction pool is closing")
        job = Job(next(self._ids), body, url, content_type,
                   asyncio.get_running_loop().create_future(), http_status=http_status, explain=explain,
                   file=file)
        self._waiting.append(job)
        self._pump()
        return await job.future

    async def close(self) -> None:
        self._closed = True
        for task in list(self._starting):
            task.cancel()
        await asyncio.gather(*self._starting, return_exceptions=True)
        _closing(self._waiting)
        self._waiting.clear()
        workers, self._workers = list(self._workers), []
        for worker in workers:
            with contextlib.suppress(Exception):
                worker.proc.stdin.close()
        for worker in workers:
            try:
                await asyncio.wait_for(worker.proc.wait(), 1.0)
            except asyncio.TimeoutError:
                worker.kill()
                await worker.proc.wait()
            if worker.reader is not None:
                worker.reader.cancel()
            _closing(worker.jobs)
