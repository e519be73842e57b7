"""bench/api_memory: the metadata-api's RSS under many concurrent GetUrlMetadata calls for big records.

Fills a SQLite metadata store with RECORDS records as large as the service will store (built by
src/spiderduck/wire/record_limits.py's bounded() and written with the store's put, as src/spiderduck/scheduler/stages/crawl_record.py
does), and fires rounds of CALLS concurrent calls over CHANNELS grpc.aio channels, each round at
a `spiderduck metadata-api` of its own (a process, started for the round):

  over   each call asks for metadata_api.max_urls big records: an answer far past max_response_bytes
  fit    each call asks for as many big records as fit under max_response_bytes

Per round: outcomes by status code, latency p50 and p99, the server's peak RSS (VmHWM, reset
before the round through /proc/PID/clear_refs; VmRSS is also sampled every 50 ms), its RSS after,
and the latency of a small 1-URL call during the round (one every 100 ms) and right after it.
The bound metadata_api.max_concurrent_calls x max_response_bytes is printed beside the peaks.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import grpc
import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import tree  # noqa: E402
tree.use_this_tree()
from pipeline_bench import percentile                                     # noqa: E402

from spiderduck.core import config

from spiderduck.wire import record_proto

from spiderduck.wire import struct_wire

from spiderduck.core import urls                # noqa: E402
from spiderduck.cli.nats_server import free_port, port_open                      # noqa: E402
from spiderduck.core.record import Image, Redirect, UrlRecord, Video               # noqa: E402
from spiderduck.wire.record_limits import MAX_URL_CHARS, OTHER_TEXT_LIMIT, TEXT_LIMITS, bounded  # noqa: E402
from spiderduck.core.status import Status                                          # noqa: E402
from spiderduck.stores.open import open_metadata_store                        # noqa: E402
from spiderduck.metadata_api.server import SERVICE_NAME                              # noqa: E402
from spiderduck.v1 import metadata_pb2                                    # noqa: E402

MIB = 2**20
METHOD = f"/{SERVICE_NAME}/GetUrlMetadata"
SMALL_URL = "https://small.test/"
WIDE = "\U0001F986"        # 4 bytes of UTF-8: the limits count characters, so the widest one
LOCATION_CHARS = 8_000     # a redirect's URL: aiohttp reads response header lines up to 8,190 bytes
KEYS = ("OK", "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED", "other")


def biggest_record(url: str, hops: int) -> UrlRecord:
    """A page's record with every field at (or past) its limit; bounded() cuts it to what is stored.
    The chain is `hops` redirects through long URLs (fetcher.max_redirects allows that many)."""
    def text(name: str) -> str:
        return WIDE * (TEXT_LIMITS.get(name, OTHER_TEXT_LIMIT) + 10)

    def long_url(tag: str, chars: int = MAX_URL_CHARS) -> str:     # longer ones are dropped, not cut
        head = f"{url}{tag}/"
        return head + "x" * (chars - len(head))

    block = {"@type": "Thing", "description": "d" * 4_000}
    structured = {"opengraph": {"og:title": "t" * 1_000},
                  "json-ld": [{**block, "name": f"block {i}"} for i in range(64)],   # 64: extraction's cap
                  "microdata": [{"type": "Thing", "properties": {"name": "m" * 200}}] * 200}
    return UrlRecord(
        url=url, status=Status.OK, http_status=200, canonical_url=long_url("canonical"),
        final_url=long_url("final", LOCATION_CHARS),
        redirects=tuple(Redirect(long_url(f"hop{i}", LOCATION_CHARS) if i else url, 301)
                        for i in range(hops)),
        content_type=text("content_type"), charset=text("charset"), title=text("title"),
        description=text("description"), site_name=text("site_name"), author=text("author"),
        published_time=text("published_time"), lang=text("lang"), type=text("type"),
        image=Image(long_url("image"), 1200, 630, text("content_type")),
        video=Video(long_url("video"), 1920, 1080, text("content_type")),
        favicon=long_url("favicon"), structured_data=structured,
        fetched_at=time.time(), content_ref="warc://bench/00000.warc.gz#0", content_length=2_097_152)


async def fill(settings: config.Settings, count: int) -> tuple[list[str], int, int]:
    """Store `count` biggest records and one small one; their URLs, the largest stored size and
    its structured data's size."""
    big = [f"https://big{n}.test/page/{n}" for n in range(count)]
    async with await open_metadata_store(settings.metadata_store_url) as store:
        async def put(record: UrlRecord) -> UrlRecord:
            record = bounded(record)                    # as src/spiderduck/scheduler/stages/crawl_record.py stores every record
            key = urls.canonicalize(record.final_url or record.url)
            return await store.put(key, record, {record.url, *record.chain} - {""})

        stored = await asyncio.gather(*(put(biggest_record(u, settings.fetcher.max_redirects)) for u in big))
        await put(UrlRecord(url=SMALL_URL, status=Status.OK, http_status=200, final_url=SMALL_URL,
                            title="small"))
    largest = max(stored, key=lambda r: len(record_proto.to_bytes(r)))
    return big, len(record_proto.to_bytes(largest)), len(struct_wire.encode(largest.structured_data))


class Rss:
    """VmRSS of a process sampled every `every` seconds on a thread; VmHWM on demand."""

    def __init__(self, pid: int, every: float = 0.05):
        self.pid, self.every = pid, every
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def status(self) -> dict[str, int]:
        with open(f"/proc/{self.pid}/status") as fh:
            return {k: int(v.split()[0]) * 1024 for k, _, v in (line.partition(":") for line in fh)
                    if k in ("VmRSS", "VmHWM")}

    def reset_peak(self) -> bool:
        """Starts VmHWM over at the current RSS (Linux 4.0+); False where that is not allowed."""
        try:
            with open(f"/proc/{self.pid}/clear_refs", "w") as fh:
                fh.write("5")
            return True
        except OSError:
            return False

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.samples.append(self.status()["VmRSS"])
            except (OSError, KeyError):
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@dataclasses.dataclass
class Round:
    name: str
    urls_per_call: int
    baseline: int = 0                    # the server's RSS before the round
    outcomes: dict[str, int] = dataclasses.field(default_factory=lambda: dict.fromkeys(KEYS, 0))
    refused: int = 0                     # RESOURCE_EXHAUSTED by the concurrency limit
    latencies: list[float] = dataclasses.field(default_factory=list)
    probes: list[float] = dataclasses.field(default_factory=list)     # small calls during the round
    probe_failures: int = 0
    answered_bytes: int = 0
    seconds: float = 0.0
    peak_hwm: int = 0
    peak_sampled: int = 0
    rss_after: int = 0
    small_after: str = ""                # a small call's latency right after, or how it failed


async def small_call(call, timeout: float) -> float:
    """Seconds one 1-URL call of the small record took; raises grpc.aio.AioRpcError."""
    t0 = time.perf_counter()
    await call(metadata_pb2.GetUrlMetadataRequest(urls=[SMALL_URL]).SerializeToString(), timeout=timeout)
    return time.perf_counter() - t0


async def run_round(rnd: Round, calls, big: list[str], count: int, timeout: float, rss: Rss) -> None:
    requests = [metadata_pb2.GetUrlMetadataRequest(
        urls=[big[(i * rnd.urls_per_call + j) % len(big)] for j in range(rnd.urls_per_call)]
    ).SerializeToString() for i in range(count)]
    hwm_reset = rss.reset_peak()
    first_sample = len(rss.samples)
    done = asyncio.Event()

    async def one(i: int) -> None:
        t0 = time.perf_counter()
        try:
            answer = await calls[i % len(calls)](requests[i], timeout=timeout)
            rnd.answered_bytes += len(answer)
            key = "OK"
        except grpc.aio.AioRpcError as exc:
            key = exc.code().name if exc.code().name in KEYS else "other"
            if exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED and "max_response_bytes" not in exc.details():
                rnd.refused += 1
        rnd.outcomes[key] += 1
        rnd.latencies.append(time.perf_counter() - t0)

    async def probe() -> None:
        while not done.is_set():
            try:
                rnd.probes.append(await small_call(calls[0], timeout))
            except grpc.aio.AioRpcError:
                rnd.probe_failures += 1
            await asyncio.sleep(0.1)

    started = time.perf_counter()
    prober = asyncio.create_task(probe())
    await asyncio.gather(*(one(i) for i in range(count)))
    rnd.seconds = time.perf_counter() - started
    done.set()
    await prober
    try:
        rnd.small_after = f"{await small_call(calls[0], timeout) * 1000:.1f} ms"
    except grpc.aio.AioRpcError as exc:
        rnd.small_after = exc.code().name
    rnd.peak_sampled = max(rss.samples[first_sample:], default=0)
    rnd.peak_hwm = rss.status()["VmHWM"] if hwm_reset else rnd.peak_sampled
    await asyncio.sleep(2.0)
    rnd.rss_after = rss.status()["VmRSS"]


@contextlib.asynccontextmanager
async def metadata_api(config_path: str, sets: list[str], port: int, channels: int):
    """`spiderduck metadata-api` in its own process, answering: its Rss, and one call function
    (bytes in, bytes out) per channel to it."""
    flags = [f for item in sets for f in ("--set", item)]
    server = subprocess.Popen([sys.executable, "-m", "spiderduck.cli.main", "metadata-api", "--config",
                               config_path, *flags], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env=tree.env())
    rss, opened = None, []
    try:
        deadline = time.monotonic() + 30
        while not port_open("127.0.0.1", port):
            if server.poll() is not None or time.monotonic() > deadline:
                sys.exit("metadata-api did not start: " + server.stderr.read().decode()[-2000:])
            await asyncio.sleep(0.05)
        rss = Rss(server.pid)
        opened = [grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=[
            ("grpc.max_receive_message_length", 256 * MIB),
            ("grpc.use_local_subchannel_pool", 1)]) for _ in range(channels)]     # a connection each
        calls = [ch.unary_unary(METHOD) for ch in opened]      # no (de)serializers: bytes both ways
        for call in calls:
            await small_call(call, 10)
        yield rss, calls
    finally:
        for ch in opened:
            await ch.close()
        if rss is not None:
            rss.stop()
        server.send_signal(signal.SIGINT)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()


def print_round(rnd: Round, bound: int) -> None:
    lat = rnd.latencies
    out = ", ".join(f"{k} {v}" for k, v in rnd.outcomes.items())
    print(f"  round {rnd.name}: {len(lat)} calls of {rnd.urls_per_call} URLs in {rnd.seconds:.1f} s: {out} "
          f"({rnd.refused} refused by the concurrency limit); {rnd.answered_bytes / MIB:.0f} MiB answered")
    print(f"    latency p50 {percentile(lat, 50) * 1000:.0f} ms, p99 {percentile(lat, 99) * 1000:.0f} ms; "
          f"a small call every 100 ms meanwhile: {len(rnd.probes)} answered, p50 "
          f"{percentile(rnd.probes or [0], 50) * 1000:.0f} ms, max {max(rnd.probes or [0]) * 1000:.0f} ms, "
          f"{rnd.probe_failures} failed")
    print(f"    server RSS baseline {rnd.baseline / MIB:.0f} MiB, peak {rnd.peak_hwm / MIB:.0f} MiB (VmHWM; "
          f"sampled max {rnd.peak_sampled / MIB:.0f}), {rnd.peak_hwm / bound:.2f}x the bound; "
          f"2 s after {rnd.rss_after / MIB:.0f} MiB; "
          f"a small call right after: {rnd.small_after}")


async def measure(args, work: str) -> None:
    port = free_port()
    config_path = os.path.join(work, "spiderduck.yaml")
    with open(config_path, "w") as fh:
        yaml.safe_dump({"data_dir": os.path.join(work, "var"), "log_level": "WARNING",
                        "metadata_api": {"listen": f"127.0.0.1:{port}"},
                        "web": {"listen": f"127.0.0.1:{free_port()}"}}, fh)
    settings = config.load(config_path, overrides=dict(s.partition("=")[::2] for s in args.set))
    api = settings.metadata_api
    bound = api.max_concurrent_calls * api.max_response_bytes

    t0 = time.perf_counter()
    big, record_bytes, structured_bytes = await fill(settings, args.records)
    per_url = record_bytes + len(big[-1]) + 16                  # the server's estimate, framing included
    fit = max(1, min(api.max_urls, api.max_response_bytes // per_url))
    print(f"{args.records} records stored in {time.perf_counter() - t0:.1f} s, each {record_bytes:,} bytes "
          f"as stored (structured data {structured_bytes:,}); {api.max_urls} per call would be "
          f"{api.max_urls * per_url / MIB:.0f} MiB, {fit} fit under max_response_bytes "
          f"({api.max_response_bytes / MIB:g} MiB)")

    print(f"{args.calls} concurrent calls a round over {args.channels} channels, deadline {args.timeout:g} s, "
          f"a fresh metadata-api each round; max_concurrent_calls {api.max_concurrent_calls} x "
          f"max_response_bytes {api.max_response_bytes / MIB:g} MiB = bound {bound / MIB:.0f} MiB")
    rounds: list[Round] = []
    for _ in range(args.repeat):
        for name, per_call in (("over", api.max_urls), ("fit", fit)):
            rnd = Round(name, per_call)
            async with metadata_api(config_path, args.set, port, args.channels) as (rss, calls):
                rnd.baseline = rss.status()["VmRSS"]
                await run_round(rnd, calls, big, args.calls, args.timeout, rss)
            print_round(rnd, bound)
            rounds.append(rnd)

    total = {k: sum(r.outcomes[k] for r in rounds) for k in KEYS}
    peak = max(r.peak_hwm for r in rounds)
    print(f"api_memory: peak_rss_mib={peak / MIB:.0f} baseline_mib={rounds[0].baseline / MIB:.0f} "
          f"bound_mib={bound / MIB:.0f} record_bytes={record_bytes} rounds={len(rounds)} ok={total['OK']} "
          f"exhausted={total['RESOURCE_EXHAUSTED']} deadline={total['DEADLINE_EXCEEDED']} other={total['other']}")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=300, help="distinct big records stored")
    ap.add_argument("--calls", type=int, default=300, help="concurrent calls per round")
    ap.add_argument("--channels", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=10.0, help="deadline of each call, seconds")
    ap.add_argument("--repeat", type=int, default=1, help="times the two rounds run")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a config key for the server, e.g. metadata_api.max_concurrent_calls=16")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="spiderduck-bench-api-memory-")
    try:
        await measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)      # the store is 120 MB


if __name__ == "__main__":
    asyncio.run(main())
