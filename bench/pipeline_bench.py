"""bench/pipeline: corpus pages over many local host names, through NATS into a running service.

Serves the pages of ../shared/corpus/metascraper (cycled) as HOSTS sites on loopback and measures,
in one run:

1. bare: a bare aiohttp fetch-and-parse of the burst's URLs (bench/bare_fetch.py: 64 GETs at a
   time, selectolax for title and metas), in its own process, before and after the service runs;
   and once with our whole extraction in place of the title and metas (`--extract`): what the
   record's content alone costs, one process, no NATS, stores, WARC or events;
2. burst: `spiderduck up` in its own process (embedded nats-server, SQLite, WARC files) is sent
   URLS URLs at once; URLs per second from first submit to last event, and the ratio to bare;
3. steady: then STEADY_RATE new URLs per second for STEADY_SECONDS; the latency the service
   adds per URL (submit to event, minus the time its fetches spent at the origin), p50 and p99.

It also samples the RSS of `up` and all its processes (nats-server and workers included) and
prints the peak.

`--roles` runs the service as a deployment does instead of `up`: a fetcher, a scheduler and a
metadata-api, each its own process (bench/roles.py), on a nats-server of the bench's, so every hop
goes from the scheduler to the fetcher over gRPC and its shard lease. `--tls` turns mutual TLS on
for every gRPC server and client of the service (a CA and certificates made in the run): with
`--roles`, the cost of TLS on the scheduler's hops; under `up` (hops in-process) it should cost
nothing. `--py-spy FILE` records a py-spy profile (raw format; see
bench/profile_summary.py) of the service during the burst.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import nats
import yaml

import tree  # noqa: E402
tree.use_this_tree()
from spiderduck.cli import up_nats
from spiderduck.cli.nats_server import EmbeddedNats, free_port, port_open
from spiderduck.bus import streams as bus
from spiderduck.v1 import events_pb2
from process_tree import RssSampler, cpu_by_role, process_tree, tree_cpu
from production_stores import cassandra_requests, requests_line, start_production
from tls_setup import make_tls, tls_settings
from up_streams import streams_made
from service_log import log_counts, service_log
from corpus_origin import PAGE_REQUESTS, corpus_hosts, corpus_pages, serve  # noqa: F401 -- api_bench imports them here

ROOT = pathlib.Path(__file__).resolve().parent.parent
def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


async def bare(urls: list[str], work: str, *flags: str) -> tuple[float, float]:
    """(URLs per second, CPU ms per URL) of bench/bare_fetch.py over `urls`, in its own process."""
    path = os.path.join(work, "bare-urls.txt")
    with open(path, "w") as fh:
        fh.write("\n".join(urls))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "bench" / "bare_fetch.py"), path, *flags,
        stdout=asyncio.subprocess.PIPE, env=tree.env())
    out, _ = await proc.communicate()
    result = json.loads(out)
    return result["urls"] / result["seconds"], result["cpu"] * 1000 / result["urls"]


class Events:
    """UrlProcessed events as they arrive, by URL."""

    def __init__(self):
        self.by_url: dict[str, events_pb2.UrlProcessed] = {}
        self._waiting: tuple[set[str], asyncio.Event] | None = None

    async def on_message(self, msg) -> None:
        event = events_pb2.UrlProcessed()
        event.ParseFromString(msg.data)
        self.by_url[event.url] = event
        if self._waiting is not None:
            wanted, done = self._waiting
            wanted.discard(event.url)
            if not wanted:
                done.set()

    async def wait_for(self, urls: list[str], timeout: float) -> list[events_pb2.UrlProcessed]:
        wanted = set(urls) - set(self.by_url)
        done = asyncio.Event()
        self._waiting = (wanted, done)
        if wanted:
            try:
                await asyncio.wait_for(done.wait(), timeout)
            except asyncio.TimeoutError:
                print(f"timed out: {len(urls) - len(wanted)} of {len(urls)} events", file=sys.stderr)
        self._waiting = None
        return [self.by_url[u] for u in urls if u in self.by_url]


def statuses(events: list[events_pb2.UrlProcessed]) -> dict[str, int]:
    names = events_pb2.UrlProcessed.DESCRIPTOR.fields_by_name["status"].enum_type.values_by_number
    out: dict[str, int] = {}
    for e in events:
        out[names[e.status].name] = out.get(names[e.status].name, 0) + 1
    return out


def start_service(args, port_api: int, port_fetcher: int, work: str,
                  nats_url: str = "") -> tuple[subprocess.Popen, dict]:
    """`up` (or with args.roles, bench/roles.py's three roles on `nats_url`) in its own process."""
    config = {
        "data_dir": os.path.join(work, "var"), "log_level": "WARNING",
        "metadata_api": {"listen": f"127.0.0.1:{port_api}"},
        "web": {"listen": f"127.0.0.1:{free_port()}"},   # served as `up` serves it: its feed reads every event
        "fetcher": {"listen": f"127.0.0.1:{port_fetcher}", "default_rate": args.rate,
                    "allowed_networks": ["127.0.0.0/8"],
                    # Every other name too: the pages' images are on real hosts, which must not be
                    # reached; their related fetches find nothing listening on 127.0.0.1:80/443.
                    "dns_overrides": {"*.test": "127.0.0.1", "*": "127.0.0.1"}},
        "scheduler": {"max_in_flight": args.in_flight},
        "process": {"related_fetches": args.related},
    }
    if nats_url:
        config["nats_url"] = nats_url
    tls = [] if not getattr(args, "tls", False) else tls_settings(make_tls(work), tokens=False)
    for item in [*tls, *args.set]:
        key, _, value = item.partition("=")
        node = config
        for part in key.split(".")[:-1]:
            node = node.setdefault(part, {})
        node[key.split(".")[-1]] = yaml.safe_load(value)
    config_path = os.path.join(work, "spiderduck.yaml")
    with open(config_path, "w") as fh:
        yaml.safe_dump(config, fh)
    command = ([str(ROOT / "bench" / "roles.py"), config_path] if getattr(args, "roles", False) else
               ["-m", "spiderduck.cli.main", "up", "--config", config_path])
    # stderr to a file, not a pipe nobody reads during the run: a service logging more than a
    # pipe holds (64 KiB) would block in its logger.
    log_path = os.path.join(work, "service.stderr")
    with open(log_path, "wb") as log:
        service = subprocess.Popen(
            [sys.executable, *os.environ.get("BENCH_PY_ARGS", "").split(), *command],
            stdout=subprocess.DEVNULL, stderr=log, env=tree.env())
    service.log_path = log_path
    return service, config


async def publish_all(js, urls: list[str]) -> None:
    for i in range(0, len(urls), 500):
        await asyncio.gather(*(js.publish(bus.SUBMIT_SUBJECT, json.dumps({"url": u}).encode())
                               for u in urls[i:i + 500]))


async def publish_steady(js, urls: list[str], rate: float) -> None:
    started = time.monotonic()
    for i, u in enumerate(urls):
        await asyncio.sleep(max(0.0, started + i / rate - time.monotonic()))
        await js.publish(bus.SUBMIT_SUBJECT, json.dumps({"url": u}).encode())


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--urls", type=int, default=3000, help="URLs of the burst")
    ap.add_argument("--hosts", type=int, default=300)
    ap.add_argument("--own-hosts", action="store_true",
                    help="serve each corpus page under its own site's host name (its og:url and canonical "
                         "URL then name the site it is on, as on the web), not site<N>.test")
    ap.add_argument("--rate", type=float, default=50.0, help="fetcher.default_rate per domain")
    ap.add_argument("--in-flight", type=int, default=256, help="scheduler.max_in_flight")
    ap.add_argument("--steady-rate", type=float, default=200.0, help="URLs per second offered after the burst")
    ap.add_argument("--steady-seconds", type=float, default=10.0, help="0: no steady phase")
    ap.add_argument("--related", action="store_true",
                    help="process.related_fetches on (an image probe and oEmbed per page)")
    ap.add_argument("--no-bare", action="store_true", help="skip the bare baseline")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="any other config key of the service, e.g. process.workers=1")
    ap.add_argument("--py-spy", metavar="FILE", help="record a py-spy profile of the service during the burst")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--roles", action="store_true",
                    help="fetcher, scheduler and metadata-api as separate processes (hops over gRPC), not up")
    ap.add_argument("--tls", action="store_true", help="mutual TLS on every gRPC server and client")
    ap.add_argument("--production", action="store_true",
                    help="run the burst twice, on SQLite and files, then on Cassandra and HDFS (started "
                         "from the tests' jars unless --cassandra/--hdfs name running ones), and compare")
    ap.add_argument("--warmup", type=int, default=None,
                    help="URLs sent to each service (and its stores) before the burst, not measured "
                         "(default: 1,000 with --production, where the JVMs start cold; else 0)")
    ap.add_argument("--cassandra", default="", help="with --production: HOST:PORT of a running Cassandra")
    ap.add_argument("--hdfs", default="", help="with --production: http://NAMENODE:PORT?user=U of a running HDFS")
    return ap.parse_args()


async def run_service(args, burst: list[str], steady: list[str], work: str, settings: list[str],
                      py_spy: str | None, also: tuple[int, ...] = ()) -> dict:
    """Start the service (`up`, or the roles) with `settings` added, send it the burst, then the
    steady load, stop it; what was measured. `also`: other processes (the stores' JVMs) whose
    CPU over the burst is counted apart. Under `up`, /metrics is served and its Cassandra
    requests over the burst read (bench/production_stores.py)."""
    listen = "" if args.roles else f"127.0.0.1:{free_port()}"   # the roles would share one port
    served = [f"metrics_listen={listen}"] if listen else []
    run_args = argparse.Namespace(**{**vars(args), "set": [*args.set, *settings, *served]})
    run_work = tempfile.mkdtemp(prefix="run-", dir=work)
    own_nats = EmbeddedNats(os.path.join(run_work, "nats")).start() if args.roles else None
    service, config = start_service(run_args, free_port(), free_port(), run_work,
                                    nats_url=own_nats.url if own_nats else "")
    profiler = None
    try:
        url_file = os.path.join(config["data_dir"], up_nats.EMBEDDED_URL_FILE)
        fetcher_port = int(config["fetcher"]["listen"].rsplit(":", 1)[1])
        deadline = time.monotonic() + 60
        while not ((own_nats or os.path.exists(url_file)) and port_open("127.0.0.1", fetcher_port)):
            if service.poll() is not None or time.monotonic() > deadline:
                sys.exit("service did not start: " + service_log(service))
            await asyncio.sleep(0.1)
        rss = RssSampler(service.pid)
        if own_nats:
            nc = await nats.connect(own_nats.url)
            await bus.ensure_streams(js := nc.jetstream())
        else:       # up's `client` user may not create streams: wait for up's own (NATS by role)
            nc = await nats.connect(open(url_file).read().strip(), **up_nats.up_credentials(config["data_dir"]))
            await streams_made(js := nc.jetstream(), deadline)
        events = Events()
        await nc.subscribe(bus.PROCESSED_SUBJECT, cb=events.on_message)
        await nc.flush()

        if args.warmup:
            # Pages like the burst's, under paths of their own (the origin serves by the number).
            warm = [burst[n % len(burst)].rsplit("/", 2)[0] + f"/w/{10**6 + n}" for n in range(args.warmup)]
            await publish_all(js, warm)
            await events.wait_for(warm, args.timeout)
        if py_spy:
            spy = shutil.which("py-spy", path=os.path.dirname(sys.executable)) or shutil.which("py-spy")
            if spy is None:
                sys.exit("--py-spy needs py-spy (pip install py-spy, in the test extra)")
            profiler = subprocess.Popen(
                [spy, "record", "--pid", str(service.pid), "--subprocesses", "--rate", "200",
                 "--format", "raw", "-o", py_spy, "--nonblocking"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        tree_before, self_before = process_tree(service.pid), os.times()
        also_before = [process_tree(pid) for pid in also]
        sent_before = await cassandra_requests(listen)
        started = time.monotonic()
        asked_before = dict(PAGE_REQUESTS)
        await publish_all(js, burst)
        got = await events.wait_for(burst, args.timeout)
        burst_seconds = time.monotonic() - started
        asked = {who: PAGE_REQUESTS[who] - asked_before[who] for who in PAGE_REQUESTS}
        requests = requests_line(sent_before, await cassandra_requests(listen), len(got))
        tree_after, self_after = process_tree(service.pid), os.times()
        also_cpu = [tree_cpu(before, process_tree(pid)) for before, pid in zip(also_before, also)]
        cpu = (f"{cpu_by_role(service.pid, tree_before, tree_after, 'roles.py' if args.roles else 'up')}, bench (origin and NATS "
               f"client) {self_after.user + self_after.system - self_before.user - self_before.system:.1f}")
        if profiler is not None:
            profiler.send_signal(signal.SIGINT)
            profiler.wait(60)

        steady_got: list[events_pb2.UrlProcessed] = []
        if steady:
            await publish_steady(js, steady, args.steady_rate)
            steady_got = await events.wait_for(steady, args.timeout)
        await nc.close()
        peak = await rss.stop()
    finally:
        service.send_signal(signal.SIGINT)
        try:
            service.wait(60)
        except subprocess.TimeoutExpired:
            service.kill()
            print("service did not stop within 60 s of SIGINT: killed", file=sys.stderr)
        if own_nats:
            own_nats.stop()
    return {"got": got, "seconds": burst_seconds, "cpu": cpu, "steady": steady_got, "peak": peak,
            "log": log_counts(service), "asked": asked,
            "requests": requests,
            "cpu_ms": tree_cpu(tree_before, tree_after) * 1000 / max(len(got), 1),
            "also_ms": [cpu * 1000 / max(len(got), 1) for cpu in also_cpu]}


def print_run(args, run: dict, steady_n: int) -> None:
    got, ours = run["got"], len(run["got"]) / run["seconds"]
    print(f"burst: {len(got)}/{args.urls} URLs over {len(set(corpus_hosts())) if args.own_hosts else args.hosts} hosts at once, rate {args.rate:g}/s "
          f"per domain, max_in_flight {args.in_flight}, related fetches {'on' if args.related else 'off'}; "
          f"statuses {statuses(got)}")
    print(f"  ours  {ours:7.1f} URLs/s; CPU seconds over its {run['seconds']:.1f} s: {run['cpu']}")
    print(f"  CPU per URL: service {run['cpu_ms']:.2f} ms (every process of the service, origin excluded)")
    asked = run["asked"]
    print(f"  page requests over the burst: crawler {asked['crawler']}, browser's second look {asked['browser']} "
          f"({100 * asked['browser'] / max(asked['crawler'], 1):.1f}% extra; process.honesty)")
    print(f"  service log: {run['log']}")
    if run["steady"]:
        added = [e.latency_seconds - e.origin_seconds for e in run["steady"]]
        print(f"steady: {len(run['steady'])}/{steady_n} URLs at {args.steady_rate:g}/s for "
              f"{args.steady_seconds:g} s; statuses {statuses(run['steady'])}")
        print(f"  latency added by the service: p50 {percentile(added, 50) * 1000:.1f} ms, "
              f"p99 {percentile(added, 99) * 1000:.1f} ms, max {max(added) * 1000:.1f} ms")
    print(f"peak RSS of {'the roles' if args.roles else 'up'} (all their processes): {run['peak'] / 2**20:.0f} MiB")


async def main() -> None:
    args = parse_args()
    if args.warmup is None:
        args.warmup = 1000 if args.production else 0
    pages = corpus_pages()
    runner, port = await serve(pages)
    work = tempfile.mkdtemp(prefix="spiderduck-bench-")
    own = corpus_hosts() if args.own_hosts else []     # each page on its own site's name
    host = (lambda n: own[n % len(own)]) if own else (lambda n: f"site{n % args.hosts}.test")
    burst = [f"http://{host(n)}:{port}/p/{n}" for n in range(args.urls)]
    steady_n = int(args.steady_rate * args.steady_seconds)
    steady = [f"http://{host(n)}:{port}/s/{n}" for n in range(steady_n)]
    servers, lines = [], []
    try:
        production: list[str] = []
        if args.production:
            import uuid
            from spiderduck.stores.cassandra_cluster import apply_schema
            servers, cassandra, hdfs_url = start_production(args, lines)
            metadata = f"cassandra://{cassandra}/bench_{uuid.uuid4().hex[:8]}"
            await apply_schema(metadata)
            netloc, _, query = hdfs_url.removeprefix("http://").partition("?")
            production = [f"metadata_store={metadata}",
                          f"content_store=hdfs://{netloc}/tmp/bench-{uuid.uuid4().hex[:8]}?{query}"]
            print("\n".join(lines), flush=True)
        bare_runs = [] if args.no_bare else [await bare(burst, work)]
        extract_run = None if args.no_bare else await bare(burst, work, "--extract")
        run = await run_service(args, burst, steady, work, [], args.py_spy)
        prod_run = None
        if args.production:
            # New URLs for the second service: the origin serves the same pages under /q/.
            prod_run = await run_service(args, [u.replace("/p/", "/q/") for u in burst],
                                         [u.replace("/s/", "/t/") for u in steady], work, production, None,
                                         also=tuple(s.proc.pid for s in servers))
        if not args.no_bare:
            bare_runs.append(await bare(burst, work))
    finally:
        for server in servers:
            server.stop()
        await runner.cleanup()

    print(f"service: {'fetcher, scheduler and metadata-api processes' if args.roles else 'up'}, "
          f"gRPC TLS {'on (mutual)' if args.tls else 'off'}"
          f"{', SQLite and WARC files' if args.production else ''}")
    print_run(args, run, steady_n)
    ours = len(run["got"]) / run["seconds"]
    if bare_runs:
        mean = sum(rate for rate, _ in bare_runs) / len(bare_runs)
        bare_ms = sum(ms for _, ms in bare_runs) / len(bare_runs)
        extract_rate, extract_ms = extract_run
        print(f"  bare  {mean:7.1f} URLs/s (aiohttp + selectolax title/metas; runs: "
              f"{', '.join(f'{r:.1f}' for r, _ in bare_runs)}); CPU {bare_ms:.2f} ms per URL")
        print(f"  ratio {ours / mean:7.2f} x bare; CPU per URL {run['cpu_ms'] / bare_ms:.2f} x bare's")
        print(f"  bare with our extraction {extract_rate:7.1f} URLs/s, {extract_rate / mean:.2f} x bare, "
              f"CPU {extract_ms:.2f} ms per URL "
              f"(one process: the record's content alone, no NATS, stores, WARC or events)")
    if prod_run is not None:
        print("service on the production stores: Cassandra metadata, HDFS content")
        print_run(args, prod_run, steady_n)
        prod = len(prod_run["got"]) / prod_run["seconds"]
        if servers:
            print("  CPU per URL of the stores' JVMs over the burst: " + ", ".join(
                f"{type(server).__name__.removesuffix('Server')} {ms:.2f} ms"
                for server, ms in zip(servers, prod_run["also_ms"])))
        print("  " + prod_run["requests"])
        print(f"  production / embedded burst: {prod:.1f} / {ours:.1f} URLs/s = {prod / ours:.2f} x")


if __name__ == "__main__":
    asyncio.run(main())
