"""bench/api: GetUrlMetadata of `spiderduck up` against a bare grpc.aio server, in the same run.

Crawls RECORDS corpus pages (served as local sites, as bench/pipeline does) through a real
`spiderduck up`, then loads its MetadataService from a client in a separate process
(bench/api_client.py), and loads a bare grpc.aio server (bench/bare_api.py) that answers the very
bytes ours answered, from a dict, in another process. Phases, ours and bare interleaved:

  single   1-URL calls, CONCURRENCY in flight: calls per second, and the ratio to bare
  batch    BATCH-URL calls, CONCURRENCY in flight: URLs per second
  rate     1-URL calls offered at RATE per second (an open loop): p50 and p99 latency

and the peak RSS of `up` with all its processes. For single-URL calls it also prints the CPU time
each server process used per call (ours: up's own process, where the metadata-api runs; bare: the
bare server), which a busy machine disturbs less than calls per second.

--py-spy FILE: a py-spy profile (raw format) of `up` during its single-URL phases, and of the bare
server during its own in FILE.bare (summarise with bench/profile_summary.py).

--tls: the same with security on, as a deployment runs it: `up` serves mutual TLS (a CA and
certificates made here, tls.client_auth require) and asks a bearer token of every call
(metadata_api.tokens_file); the client presents its certificate and the token, and the bare
server serves mutual TLS with the same certificate. Compare a run with and without --tls for the
cost of security, and ours against bare within one run for what is ours.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import pathlib
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import grpc
import nats

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import tree  # noqa: E402
tree.use_this_tree()
from pipeline_bench import corpus_pages, serve, start_service              # noqa: E402
from service_log import service_log                                      # noqa: E402
from process_tree import RssSampler                                        # noqa: E402
from tls_setup import BENCH_TOKEN, make_tls, tls_settings                 # noqa: E402

from spiderduck.cli import up_nats                                                   # noqa: E402
from spiderduck.cli.nats_server import free_port, port_open                          # noqa: E402
from spiderduck.bus import streams as bus                                                    # noqa: E402
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc                # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
IDLE_SECONDS = 3.0        # CPU of each server measured without load, before the phases


async def crawl(js, nc, urls: list[str], timeout: float) -> None:
    pending, done = set(urls), asyncio.Event()

    async def on_event(msg):
        from spiderduck.v1 import events_pb2
        event = events_pb2.UrlProcessed()
        event.ParseFromString(msg.data)
        pending.discard(event.url)
        if not pending:
            done.set()

    sub = await nc.subscribe(bus.PROCESSED_SUBJECT, cb=on_event)
    for url in urls:
        await js.publish(bus.SUBMIT_SUBJECT, json.dumps({"url": url}).encode())
    await asyncio.wait_for(done.wait(), timeout)
    await sub.unsubscribe()


def channel_to(address: str, tls: str | None) -> grpc.aio.Channel:
    if tls is None:
        return grpc.aio.insecure_channel(address)
    def read(name: str) -> bytes:
        with open(os.path.join(tls, name), "rb") as fh:
            return fh.read()
    return grpc.aio.secure_channel(address, grpc.ssl_channel_credentials(
        read("ca.crt"), read("client.key"), read("client.crt")))


async def answers_of(address: str, urls: list[str], path: str, tls: str | None) -> None:
    """Ours' serialized result for each URL, for the bare server to send back."""
    metadata = (("authorization", f"Bearer {BENCH_TOKEN}"),) if tls else None
    async with channel_to(address, tls) as channel:
        stub = metadata_pb2_grpc.MetadataServiceStub(channel)
        with open(path, "w", encoding="utf-8") as fh:
            for url in urls:
                [result] = (await stub.GetUrlMetadata(
                    metadata_pb2.GetUrlMetadataRequest(urls=[url]), timeout=10, metadata=metadata)).results
                if not result.found:
                    sys.exit(f"{url} was crawled but is not found")
                fh.write(json.dumps({"url": url, "result_hex": result.SerializeToString().hex()}) + "\n")


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system, every thread) the process `pid` has used."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        stat = fh.read().rsplit(b")", 1)[1].split()
    return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")


class Profiler:
    """py-spy recording `pid` while in the block; each block's samples appended to `path`."""

    def __init__(self, pid: int, path: str, native: bool = False):
        self.pid, self.path = pid, path
        # --native stops the process while sampling (py-spy cannot unwind C stacks otherwise)
        self.flags = ["--native"] if native else ["--nonblocking"]
        self.spy = shutil.which("py-spy", path=os.path.dirname(sys.executable)) or shutil.which("py-spy")
        if self.spy is None:
            sys.exit("--py-spy needs py-spy (pip install py-spy, in the test extra)")
        open(path, "w").close()

    async def __aenter__(self):
        self.part = self.path + ".part"
        self.proc = await asyncio.create_subprocess_exec(
            self.spy, "record", "--pid", str(self.pid), "--rate", "250", "--format", "raw",
            "-o", self.part, *self.flags, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL)
        await asyncio.sleep(0.5)          # attached before the load starts
        return self

    async def __aexit__(self, *exc) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGINT)
        await self.proc.wait()
        if os.path.exists(self.part):
            with open(self.part) as src, open(self.path, "a") as dst:
                dst.write(src.read())
            os.remove(self.part)


async def load(address: str, url_file: str, *extra: str) -> dict:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "bench" / "api_client.py"), address, url_file, *extra,
        stdout=asyncio.subprocess.PIPE, env=tree.env())
    out, _ = await proc.communicate()
    return json.loads(out)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=600)
    ap.add_argument("--hosts", type=int, default=60)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--seconds", type=float, default=4.0, help="per phase")
    ap.add_argument("--rounds", type=int, default=3, help="of the single and batch phases")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--tls", action="store_true",
                    help="mutual TLS and bearer tokens on, for ours and (TLS) the bare server")
    ap.add_argument("--py-spy", metavar="FILE",
                    help="py-spy profile of up in its single-URL phases (and FILE.bare of the bare server)")
    ap.add_argument("--py-spy-native", action="store_true",
                    help="with --py-spy: C frames too (gRPC's core and Cython); slows the processes profiled")
    args = ap.parse_args()

    pages = corpus_pages()
    runner, port = await serve(pages)
    work = tempfile.mkdtemp(prefix="spiderduck-bench-api-")
    urls = [f"http://site{n % args.hosts}.test:{port}/p/{n}" for n in range(args.records)]
    url_file = os.path.join(work, "urls.txt")
    with open(url_file, "w") as fh:
        fh.write("\n".join(urls))
    tls = make_tls(work) if args.tls else None
    service_args = argparse.Namespace(rate=50.0, in_flight=256, related=False,
                                      set=[*(tls_settings(tls) if tls else []), *args.set])
    service, config = start_service(service_args, free_port(), free_port(), work)
    ours = config["metadata_api"]["listen"]
    bare_port = free_port()
    bare_address = f"127.0.0.1:{bare_port}"
    bare_proc = None
    results: dict[str, list[dict]] = {}
    try:
        marker = os.path.join(config["data_dir"], up_nats.EMBEDDED_URL_FILE)
        deadline = time.monotonic() + 60
        while not (os.path.exists(marker) and port_open("127.0.0.1", int(ours.rsplit(":", 1)[1]))):
            if service.poll() is not None or time.monotonic() > deadline:
                sys.exit("service did not start: " + service_log(service))
            await asyncio.sleep(0.1)
        nc = await nats.connect(open(marker).read().strip(), **up_nats.up_credentials(config["data_dir"]))
        js = nc.jetstream()
        await crawl(js, nc, urls, 300)
        await nc.close()
        answers = os.path.join(work, "answers.jsonl")
        await answers_of(ours, urls, answers, tls)
        bare_proc = await asyncio.create_subprocess_exec(
            sys.executable, str(ROOT / "bench" / "bare_api.py"), str(bare_port), answers, *([tls] if tls else []),
            stdout=asyncio.subprocess.PIPE, env=tree.env())
        await asyncio.wait_for(bare_proc.stdout.readline(), 30)

        rss = RssSampler(service.pid)
        secure = ["--tls", tls, "--token", BENCH_TOKEN] if tls else []
        closed = ["--mode", "closed", "--concurrency", str(args.concurrency), "--seconds", str(args.seconds),
                  *secure]
        pids = {"ours": service.pid, "bare": bare_proc.pid}
        idle = {who: cpu_seconds(pid) for who, pid in pids.items()}
        await asyncio.sleep(IDLE_SECONDS)
        idle = {who: (cpu_seconds(pid) - idle[who]) / IDLE_SECONDS for who, pid in pids.items()}
        profilers = {}
        if args.py_spy:
            profilers = {"ours": Profiler(service.pid, args.py_spy, args.py_spy_native),
                         "bare": Profiler(bare_proc.pid, args.py_spy + ".bare", args.py_spy_native)}
        for _ in range(args.rounds):
            for who, address in (("ours", ours), ("bare", bare_address)):
                async with profilers.get(who) or contextlib.nullcontext():
                    cpu = cpu_seconds(pids[who])
                    row = await load(address, url_file, *closed)
                    row["cpu"] = cpu_seconds(pids[who]) - cpu
                results.setdefault(f"single {who}", []).append(row)
                results.setdefault(f"batch {who}", []).append(
                    await load(address, url_file, *closed, "--batch", str(args.batch)))
        for who, address in (("ours", ours), ("bare", bare_address)):
            results[f"rate {who}"] = [await load(address, url_file, "--mode", "rate", "--rate",
                                                 str(args.rate), "--seconds", str(args.seconds), *secure)]
        peak = await rss.stop()
    finally:
        if bare_proc is not None:
            bare_proc.kill()
            await bare_proc.wait()
        service.send_signal(signal.SIGINT)
        try:
            service.wait(60)
        except subprocess.TimeoutExpired:
            service.kill()
        await runner.cleanup()

    def per_second(key: str, what: str) -> float:
        return statistics.median(r[what] / r["seconds"] for r in results[key])

    errors = sum(r["errors"] for rows in results.values() for r in rows)
    print(f"{'mutual TLS and bearer tokens on; ' if tls else ''}"
          f"{args.records} crawled records; client in its own process, {args.concurrency} calls in "
          f"flight, {args.seconds:g} s per phase, {args.rounds} rounds (medians); errors {errors}")
    single, single_bare = per_second("single ours", "calls"), per_second("single bare", "calls")
    print(f"  single-URL calls: ours {single:7.0f}/s, bare {single_bare:7.0f}/s, "
          f"ratio {single / single_bare:.2f}")
    cpu = {who: statistics.median(r["cpu"] / r["calls"] * 1e6 for r in results[f"single {who}"])
           for who in ("ours", "bare")}
    print(f"  single-URL CPU per call: ours {cpu['ours']:.0f} us, bare {cpu['bare']:.0f} us, "
          f"ratio {cpu['bare'] / cpu['ours']:.2f}")
    batch, batch_bare = per_second("batch ours", "urls"), per_second("batch bare", "urls")
    print(f"  {args.batch}-URL batches:   ours {batch:7.0f} URLs/s, bare {batch_bare:7.0f} URLs/s, "
          f"ratio {batch / batch_bare:.2f}")
    for who in ("ours", "bare"):
        r = results[f"rate {who}"][0]
        print(f"  {args.rate:g} calls/s offered, {who}: {r['calls'] / r['seconds']:.0f}/s answered, "
              f"p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms")
    print(f"CPU without load: up {idle['ours'] * 100:.1f}% of a core, bare {idle['bare'] * 100:.1f}%")
    print(f"peak RSS of up (all its processes) during the load: {peak / 2**20:.0f} MiB")


if __name__ == "__main__":
    asyncio.run(main())
