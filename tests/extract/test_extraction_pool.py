"""Extraction in worker processes: the same answers, a time budget, crashes survived."""
from __future__ import annotations

import asyncio
import os
import pickle

import pytest

from spiderduck.core.record import PageMetadata
from spiderduck.extract import extract_page
from spiderduck.extract.channel import loads as _loads
from spiderduck.extract.pool import ExtractionFailed, ExtractionPool, ExtractionTimeout
from support.extraction import EXTRACTION

PAGE = (b"<html lang=en><head><title>A title</title><meta property='og:description' content='Said'>"
        b"<meta property='og:image' content='/i.png'></head><body><p>Text</p></body></html>")
# lexbor takes tens of seconds over this (quadratic in depth): only the budget ends it.
NESTED = b"<html><head><title>deep</title></head><body>" + b"<div>" * 100_000 + b"</body></html>"


def worker_pids() -> set[int]:
    """Our extraction workers: children of this process running spiderduck.extract.worker."""
    pids = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        if ppid == os.getpid() and b"spiderduck.extract.worker" in cmdline:
            pids.add(int(entry))
    return pids


async def until(predicate, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


async def test_a_worker_gives_the_same_metadata_as_this_process():
    async with ExtractionPool(workers=1, budget=10, **EXTRACTION) as pool:
        page = await pool.extract(PAGE, "http://a.test/x", "text/html; charset=utf-8")
    assert isinstance(page, PageMetadata)
    assert page == extract_page(PAGE, "http://a.test/x", "text/html; charset=utf-8", **EXTRACTION)
    assert (page.title, page.description, page.image.url) == ("A title", "Said", "http://a.test/i.png")


async def test_a_page_past_the_budget_is_a_timeout_and_stalls_no_other_page():
    async with ExtractionPool(workers=2, budget=2.0, **EXTRACTION) as pool:
        await pool.extract(PAGE, "http://a.test/", None)        # both workers may now be started
        await until(lambda: len(worker_pids()) == 2)
        hostile = asyncio.create_task(pool.extract(NESTED, "http://deep.test/", None))
        others = [await pool.extract(PAGE, f"http://a.test/{n}", None) for n in range(30)]
        assert not hostile.done()        # 30 pages went through the other worker meanwhile
        assert all(p.title == "A title" for p in others)
        with pytest.raises(ExtractionTimeout, match="process.extract_timeout"):
            await hostile
        # The killed worker is replaced: the pool goes on with as many workers as before.
        await until(lambda: len(worker_pids()) == 2)
        assert (await pool.extract(PAGE, "http://a.test/after", None)).title == "A title"


async def test_a_page_queued_behind_a_hostile_one_is_sent_to_another_worker():
    async with ExtractionPool(workers=2, budget=30.0, **EXTRACTION) as pool:
        await until(lambda: len(pool._workers) == 2)     # both ready: the jobs below go where we say
        hostile = asyncio.create_task(pool.extract(NESTED, "http://deep.test/", None))
        await asyncio.sleep(0)                            # dispatched: the first worker has it
        # One page to each worker; the second lands behind the hostile page (least loaded, first).
        pages = await asyncio.wait_for(asyncio.gather(
            pool.extract(PAGE, "http://a.test/1", None), pool.extract(PAGE, "http://a.test/2", None)), 20)
        assert [p.title for p in pages] == ["A title", "A title"]
        assert not hostile.done()                         # 30 s of budget left: nobody waited for it
        hostile.cancel()


async def test_a_worker_that_dies_is_replaced_and_the_page_tried_again():
    async with ExtractionPool(workers=1, budget=10, **EXTRACTION) as pool:
        await pool.extract(PAGE, "http://a.test/", None)
        [first] = worker_pids()
        os.kill(first, 9)                                 # the OOM killer, say
        page = await pool.extract(PAGE, "http://a.test/again", None)
        assert page.title == "A title"
        assert first not in worker_pids()


# A worker program that says it is ready, then dies (SIGSEGV, as a parser crash would) on any page.
CRASHING = ("import os, signal, struct, pickle, sys\n"
            "data = pickle.dumps('ready')\n"
            "sys.stdout.buffer.write(struct.pack('>I', len(data)) + data); sys.stdout.buffer.flush()\n"
            "sys.stdin.buffer.read(4)\n"
            "os.kill(os.getpid(), signal.SIGSEGV)\n")


async def test_a_page_whose_worker_dies_twice_fails_with_the_reason():
    import sys
    async with ExtractionPool(workers=1, budget=10, **EXTRACTION,
                              command=(sys.executable, "-c", CRASHING)) as pool:
        with pytest.raises(ExtractionFailed, match="SIGSEGV"):
            await pool.extract(PAGE, "http://a.test/", None)
        with pytest.raises(ExtractionFailed, match="SIGSEGV"):     # still answering, one at a time
            await pool.extract(PAGE, "http://a.test/2", None)


async def test_close_stops_every_worker():
    pool = ExtractionPool(workers=2, budget=5, **EXTRACTION)
    async with pool:
        await pool.extract(PAGE, "http://a.test/", None)
        await until(lambda: len(worker_pids()) == 2)
    assert worker_pids() == set()


def test_answers_are_unpickled_only_into_record_types():
    page = PageMetadata(title="t")
    assert _loads(pickle.dumps((1, "ok", page))) == (1, "ok", page)
    for hostile in (os.system, pickle.Unpickler, asyncio.Event()):
        with pytest.raises(pickle.UnpicklingError):
            _loads(pickle.dumps(hostile))


# A worker program that answers every job with a page titled by its URL, after sleeping as many
# seconds as the body says ("sleep0.2").
SLEEPY = ("import os, sys, time\n"
          "from spiderduck.extract.worker import read_job, write_frame\n"
          "from spiderduck.core.record import PageMetadata\n"
          "jobs, out = os.fdopen(0, 'rb'), os.fdopen(1, 'wb', buffering=0)\n"
          "write_frame(out, 'ready')\n"
          "while (job := read_job(jobs)) is not None:\n"
          "    time.sleep(float(job[1][5:] or 0))\n"
          "    write_frame(out, (job[0], 'ok', PageMetadata(title=job[2])))\n")


def test_a_page_sent_to_a_worker_that_just_died_goes_to_another_on_uvloop():
    """uvloop closes a dead worker's stdin before its reader has seen the end, and then refuses
    writes (asyncio drops them): a page picked for it in that moment must go elsewhere."""
    import sys

    import uvloop

    async def run():
        async with ExtractionPool(workers=2, budget=10, **EXTRACTION,
                                  command=(sys.executable, "-c", SLEEPY)) as pool:
            await until(lambda: len(pool._workers) == 2)
            busy, doomed = pool._workers
            slow = asyncio.create_task(pool.extract(b"sleep0.3", "http://slow.test/", None))
            await asyncio.sleep(0)
            os.kill(doomed.proc.pid, 9)
            for _ in range(100_000):                    # until the moment in question (reached at
                if doomed.proc.stdin.is_closing() and doomed in pool._workers:   # once here; if
                    break                               # not, the page must still go through)
                await asyncio.sleep(0)
            page = await asyncio.wait_for(pool.extract(b"sleep0", "http://in.window/", None), 10)
            return page.title, (await slow).title

    assert uvloop.run(run()) == ("http://in.window/", "http://slow.test/")


# A worker program that says it is ready, then reads its jobs and never answers.
SILENT = ("import pickle, struct, sys, time\n"
          "data = pickle.dumps('ready')\n"
          "sys.stdout.buffer.write(struct.pack('>I', len(data)) + data); sys.stdout.buffer.flush()\n"
          "sys.stdin.buffer.read()\n")


async def test_a_watchdog_kill_counts_only_against_the_page_it_bit():
    import sys

    from spiderduck.extract.channel import Job as _Job
    from spiderduck.extract.pool import PoolClosing

    pool = ExtractionPool(workers=1, budget=60, **EXTRACTION, command=(sys.executable, "-c", SILENT))
    async with pool:
        await until(lambda: len(pool._workers) == 1)
        pages = [asyncio.create_task(pool.extract(PAGE, f"http://a.test/{n}", None)) for n in range(2)]
        await until(lambda: len(pool._workers[0].jobs) == 2)
        worker = pool._workers[0]
        # The watchdog bit a page that has been answered since (its answer was in the pipe).
        worker.bitten = _Job(-1, b"", "http://answered.test/", None, asyncio.get_running_loop().create_future())
        worker.kill()
        await until(lambda: len(pool._workers) == 1 and pool._workers[0] is not worker)
        await until(lambda: len(pool._workers[0].jobs) == 2)      # both went to the new worker
        assert not any(p.done() for p in pages)                    # neither was called a timeout
    for page in pages:
        with pytest.raises(PoolClosing):
            await page
