"""`spiderduck up` against a hostile web: every case gets its event, memory stays bounded, and a
stop under load is quick.

Starts `up` as its own process (embedded NATS, a temporary data_dir), serves the hostile web of
tests/support/hostile.py on loopback (pages attacking extraction, compression bombs, endless and
1 GB bodies, slow origins, redirect tricks into private space, garbage bodies and headers),
publishes every case plus malformed NATS messages, and waits for one UrlProcessed per URL. It
samples the resident memory of `up` and everything it started (extraction workers, nats-server)
every 50 ms. Then it holds 40 URLs at a slow origin, sends SIGTERM, and times the stop.

    bench/hostile_up            # prints per-case outcomes and the figures
"""
from __future__ import annotations

import asyncio
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter

import nats
import yaml
from aiohttp import web
from google.protobuf import json_format

ROOT = pathlib.Path(__file__).resolve().parent.parent
import tree  # noqa: E402
tree.use_this_tree()
sys.path.insert(0, str(ROOT / "tests"))

from spiderduck.cli import up_nats  # noqa: E402
from spiderduck.cli.nats_server import free_port  # noqa: E402
from spiderduck.bus import streams as bus  # noqa: E402
from spiderduck.v1 import events_pb2  # noqa: E402
from support.hostile import (bomb_routes, garbage_routes, hostile_pages,  # noqa: E402
                             redirect_routes, slow_routes)
from support.localweb import LocalWeb  # noqa: E402
from up_streams import streams_made  # noqa: E402

CLI = [sys.executable, "-m", "spiderduck.cli.main"]
GRACE = 10.0           # shutdown_grace as shipped
HELD = 40              # URLs held at a slow origin when SIGTERM comes

# Messages no producer should send: each is dead-lettered with its reason, nothing crashes.
BAD_MESSAGES = [b"\x00\xff" * 1000, b"", b"{", b'{"urls": 5}', b'{"tweet": ""}',
                b'{"url": "' + b"a" * 500_000 + b'"}', b"javascript:alert(1)",
                json.dumps({"urls": ["http://ok.test/"] * 5000}).encode(),
                b"[" * 100_000]


def _statuses(want: str | tuple[str, ...]) -> tuple[str, ...]:
    return (want,) if isinstance(want, str) else want


def rss_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) in KiB, 0 if gone."""
    try:
        text = pathlib.Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0, 0
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    return (int(fields.get("VmRSS", "0 kB").split()[0]), int(fields.get("VmHWM", "0 kB").split()[0]))


def descendants(root: int) -> list[int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = pathlib.Path(f"/proc/{entry}/stat").read_bytes()
                parents[int(entry)] = int(stat.rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, stack = [], [root]
    while stack:
        parent = stack.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found.append(pid)
                stack.append(pid)
    return found


class Sampler:
    def __init__(self, pid: int):
        self.pid = pid
        self.peak_main = 0
        self.peak_total = 0
        self.ready_main = 0            # once its NATS is up and its roles are starting

    async def run(self) -> None:
        while True:
            main, _ = rss_kib(self.pid)
            total = main + sum(rss_kib(p)[0] for p in descendants(self.pid))
            self.peak_main = max(self.peak_main, main)
            self.peak_total = max(self.peak_total, total)
            await asyncio.sleep(0.05)


async def main() -> None:
    web_ = await LocalWeb().start()
    expected: dict[str, str | tuple[str, ...]] = {}
    for path, page in hostile_pages(web_).items():
        expected[web_.page("evil.test", path, page)] = "OK"
    expected.update({u: "TOO_LARGE" for u in bomb_routes(web_)})
    expected.update(slow_routes(web_))
    expected.update(redirect_routes(web_))
    expected.update(garbage_routes(web_))
    release = asyncio.Event()

    async def held(request):
        await release.wait()
        return web.Response(text="<title>held</title>", content_type="text/html")
    held_urls = [web_.route(f"held{i}.test", "/", held) for i in range(HELD)]

    tmp = tempfile.mkdtemp(prefix="sd-hostile-")
    config = pathlib.Path(tmp, "c.yaml")
    config.write_text(yaml.safe_dump({
        "data_dir": str(pathlib.Path(tmp, "var")),
        "metadata_api": {"listen": f"127.0.0.1:{free_port()}"},
        "web": {"listen": f"127.0.0.1:{free_port()}"},
        "fetcher": {"listen": f"127.0.0.1:{free_port()}", "total_timeout": 5,
                    "default_rate": 50, "allowed_networks": ["127.0.0.0/8"],
                    "dns_overrides": {"*.test": "127.0.0.1"}},
        "scheduler": {"retry_delay": 0.5}}))
    log = open(pathlib.Path(tmp, "up.log"), "wb")
    up = subprocess.Popen([*CLI, "up", "--config", str(config)], stdout=subprocess.DEVNULL, stderr=log,
                          env=tree.env())
    sampler = Sampler(up.pid)
    sampling = asyncio.create_task(sampler.run())
    marker = pathlib.Path(tmp, "var", up_nats.EMBEDDED_URL_FILE)
    while not marker.exists():
        assert up.poll() is None, pathlib.Path(tmp, "up.log").read_text()[-3000:]
        await asyncio.sleep(0.05)
    sampler.ready_main = rss_kib(up.pid)[0]
    nc = await nats.connect(marker.read_text().strip(), **up_nats.up_credentials(str(marker.parent)))
    js = nc.jetstream()
    events: dict[str, list[str]] = {}
    seen = asyncio.Condition()

    async def on_event(msg):
        event = events_pb2.UrlProcessed.FromString(msg.data)
        d = json_format.MessageToDict(event, preserving_proto_field_name=True)
        async with seen:
            events.setdefault(d["url"], []).append(d["status"])
            seen.notify_all()
    await nc.subscribe(bus.PROCESSED_SUBJECT, cb=on_event)
    await streams_made(js, time.monotonic() + 60)     # up's client may not create them

    started = time.monotonic()
    for url in expected:
        await js.publish(bus.SUBMIT_SUBJECT, json.dumps({"url": url}).encode())
    for data in BAD_MESSAGES:
        await js.publish(bus.SUBMIT_SUBJECT, data)
    async with seen:
        await asyncio.wait_for(seen.wait_for(lambda: all(u in events for u in expected)), 300)
    took = time.monotonic() - started
    dead = (await js.stream_info(bus.DEAD_STREAM)).state.messages

    wrong = {u: (expected[u], events[u]) for u in expected
             if len(events[u]) != 1 or events[u][0] not in _statuses(expected[u])}
    by_status = Counter(s for u in expected for s in events[u])
    print(f"cases: {len(expected)} URLs + {len(BAD_MESSAGES)} malformed messages; all processed in "
          f"{took:.1f}s; statuses {dict(by_status)}; dead letters {dead}")
    for url, (want, got) in wrong.items():
        print(f"  UNEXPECTED {url}: wanted {want}, got {got}")

    # Stop under load: HELD URLs at an origin that does not answer yet.
    for url in held_urls:
        await js.publish(bus.SUBMIT_SUBJECT, json.dumps({"url": url}).encode())
    while sum(1 for h in web_.hits if h.host.startswith("held") and h.path == "/") < HELD // 2:
        await asyncio.sleep(0.05)
    await nc.close()
    stop_at = time.monotonic()
    up.send_signal(signal.SIGTERM)
    while up.poll() is None:
        await asyncio.sleep(0.02)
    stopped = time.monotonic() - stop_at
    sampling.cancel()
    release.set()
    log.close()
    text = pathlib.Path(tmp, "up.log").read_text(errors="replace")
    tracebacks = text.count("Traceback")
    print(f"stop under load: SIGTERM with {HELD} URLs held -> exit {up.returncode} in {stopped:.2f}s "
          f"(shutdown_grace {GRACE:g}s), tracebacks in its log: {tracebacks}")
    print(f"memory: up at start {sampler.ready_main / 1024:.0f} MiB, peak {sampler.peak_main / 1024:.0f} MiB; "
          f"up + workers + nats-server peak {sampler.peak_total / 1024:.0f} MiB")
    print(f"hostile_up: cases={len(expected) + len(BAD_MESSAGES)} unexpected={len(wrong)} "
          f"peak_rss_mib={sampler.peak_main / 1024:.0f} peak_total_mib={sampler.peak_total / 1024:.0f} "
          f"stop_seconds={stopped:.2f} exit={up.returncode} tracebacks={tracebacks}")
    await web_.stop()


if __name__ == "__main__":
    asyncio.run(main())
