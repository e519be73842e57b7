"""bench/pipeline: corpus pages over many local host names, through NATS into a running service.

Serves the pages of ../shared/corpus/metascraper (cycled) as HOSTS sites on loopback, starts
`spiderduck up` in its own process (embedded nats-server, SQLite, WARC files), publishes URLS
URLs to spiderduck.urls.submit at once, and waits for one UrlProcessed per URL. Prints URLs per
second (first submit to last event) and the latency the service adds per URL (submit to event,
minus the time its fetches spent at the origin) at p50 and p99.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

import nats
import yaml
from aiohttp import web

from common import bus
from common.nats_server import free_port, port_open
from spiderduck.v1 import events_pb2

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "metascraper"


def corpus_pages() -> list[bytes]:
    cases_path = CORPUS / "cases.json"
    if not cases_path.exists():
        sys.exit(f"{CORPUS} not found: the benchmark reads ../shared/corpus beside the repo")
    cases = json.loads(cases_path.read_text("utf-8"))
    return [(CORPUS / c["html"]).read_bytes() for c in cases]


# A 1x1 PNG: what the pages' own-host images (relative og:image URLs) and anything else
# that is not a numbered page get, so their related fetches find an image to probe.
PIXEL = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                      "1f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4520000000049454e44ae426082")


async def serve(pages: list[bytes]) -> tuple[web.AppRunner, int]:
    async def page(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nAllow: /\n")
        last = request.path.rsplit("/", 1)[-1] or "0"
        if not last.isdigit():
            return web.Response(body=PIXEL, content_type="image/png")
        return web.Response(body=pages[int(last) % len(pages)], content_type="text/html", charset="utf-8")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port, backlog=1024).start()
    return runner, port


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--urls", type=int, default=3000)
    ap.add_argument("--hosts", type=int, default=300)
    ap.add_argument("--rate", type=float, default=50.0, help="fetcher.default_rate per domain")
    ap.add_argument("--in-flight", type=int, default=256, help="scheduler.max_in_flight")
    ap.add_argument("--submit-rate", type=float, default=0.0,
                    help="URLs per second offered (0: all at once, which measures throughput)")
    ap.add_argument("--no-related", action="store_true",
                    help="process.related_fetches off (no image probe or oEmbed per page)")
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args()

    pages = corpus_pages()
    runner, port = await serve(pages)
    work = tempfile.mkdtemp(prefix="spiderduck-bench-")
    api_port, fetcher_port = free_port(), free_port()
    config = {
        "data_dir": os.path.join(work, "var"), "log_level": "WARNING",
        "metadata_api": {"listen": f"127.0.0.1:{api_port}"},
        "fetcher": {"listen": f"127.0.0.1:{fetcher_port}", "default_rate": args.rate,
                    "allowed_networks": ["127.0.0.0/8"],
                    # Every other name too: the pages' images are on real hosts, which must not be
                    # reached; their related fetches find nothing listening on 127.0.0.1:80/443.
                    "dns_overrides": {"*.test": "127.0.0.1", "*": "127.0.0.1"}},
        "scheduler": {"max_in_flight": args.in_flight},
        "process": {"related_fetches": not args.no_related},
    }
    config_path = os.path.join(work, "spiderduck.yaml")
    with open(config_path, "w") as fh:
        yaml.safe_dump(config, fh)
    service = subprocess.Popen([sys.executable, *os.environ.get("BENCH_PY_ARGS", "").split(), "-m", "spiderduck.cli.main", "up", "--config", config_path],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url_file = os.path.join(config["data_dir"], bus.EMBEDDED_URL_FILE)
        deadline = time.monotonic() + 60
        while not (os.path.exists(url_file) and port_open("127.0.0.1", fetcher_port)):
            if service.poll() is not None or time.monotonic() > deadline:
                sys.exit("service did not start: " + service.stderr.read().decode()[-2000:])
            await asyncio.sleep(0.1)
        nats_url = open(url_file).read().strip()
        nc = await nats.connect(nats_url)
        js = nc.jetstream()
        await bus.ensure_streams(js)
        done = asyncio.Event()
        events: list[events_pb2.UrlProcessed] = []

        async def on_event(msg):
            event = events_pb2.UrlProcessed()
            event.ParseFromString(msg.data)
            events.append(event)
            if len(events) >= args.urls:
                done.set()

        await nc.subscribe(bus.PROCESSED_SUBJECT, cb=on_event)
        urls = [f"http://site{n % args.hosts}.test:{port}/p/{n}" for n in range(args.urls)]
        started = time.time()
        if args.submit_rate > 0:        # a steady offered load: latency below saturation
            for i, u in enumerate(urls):
                await asyncio.sleep(max(0.0, started + i / args.submit_rate - time.time()))
                await js.publish(bus.SUBMIT_SUBJECT, json.dumps({"url": u}).encode())
        else:
            for i in range(0, len(urls), 500):
                await asyncio.gather(*(js.publish(bus.SUBMIT_SUBJECT, json.dumps({"url": u}).encode())
                                       for u in urls[i:i + 500]))
        submitted = time.time()
        try:
            await asyncio.wait_for(done.wait(), args.timeout)
        except asyncio.TimeoutError:
            print(f"timed out: {len(events)} of {args.urls} events", file=sys.stderr)
        finished = time.time()
        await nc.close()
    finally:
        service.send_signal(signal.SIGINT)
        try:
            service.wait(30)
        except subprocess.TimeoutExpired:
            service.kill()
        await runner.cleanup()

    added = [e.latency_seconds - e.origin_seconds for e in events]
    statuses: dict[str, int] = {}
    for e in events:
        name = events_pb2.UrlProcessed.DESCRIPTOR.fields_by_name["status"].enum_type.values_by_number[e.status].name
        statuses[name] = statuses.get(name, 0) + 1
    offered = f"{args.submit_rate:g}/s" if args.submit_rate > 0 else "all at once"
    print(f"urls {len(events)}/{args.urls} over {args.hosts} hosts (offered {offered}), rate "
          f"{args.rate:g}/s per domain, max_in_flight {args.in_flight}, related fetches "
          f"{'off' if args.no_related else 'on'}; statuses {statuses}")
    print(f"submitted in {submitted - started:.2f}s; all events after {finished - started:.2f}s")
    print(f"throughput {len(events) / (finished - started):.1f} URLs/s")
    if added:
        print(f"latency added by the service: p50 {percentile(added, 50) * 1000:.0f} ms, "
              f"p99 {percentile(added, 99) * 1000:.0f} ms")


if __name__ == "__main__":
    asyncio.run(main())
