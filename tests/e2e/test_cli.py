"""The newcomer's path through real processes: `spiderduck up`, `submit`, `get`, `watch`, `extract`."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess

import aiohttp
import pytest
import yaml

from support.cli import CLI, run_cli, up_config


@pytest.fixture
def config_file(tmp_path):
    return up_config(tmp_path)


async def test_up_submit_get_watch(config_file, localweb, tmp_path):
    page = localweb.page("blog.test", "/post", '<html lang="en"><title>Hello &amp; welcome</title>'
                         '<meta name="description" content="A post."></html>')
    log = open(tmp_path / "up.log", "wb")       # a file, not a pipe: a full pipe would block `up`
    up = subprocess.Popen([*CLI, "up", "--config", config_file], stdout=subprocess.DEVNULL,
                          stderr=log)
    marker = tmp_path / "var" / "nats.url"        # written by `up` once its nats-server listens
    try:
        for _ in range(600):
            if marker.exists() or up.poll() is not None:
                break
            await asyncio.sleep(0.1)
        assert marker.exists(), (tmp_path / "up.log").read_text()[-3000:]
        watch = await asyncio.create_subprocess_exec(
            *CLI, "watch", "--count", "1", "--timeout", "60", "--config", config_file,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = await asyncio.wait_for(watch.stderr.readline(), 60)   # subscribed from here on
        assert b"watching spiderduck.events.processed" in first, first
        record = None
        for _ in range(600):                      # until the service answers (bounded: ~60 s)
            code, out, err = await run_cli("submit", page, "--config", config_file)
            if code == 0:
                break
            await asyncio.sleep(0.1)
        assert code == 0, err
        for _ in range(600):
            code, out, err = await run_cli("get", page, "--config", config_file)
            if code == 0 and json.loads(out).get("status"):
                record = json.loads(out)
                break
            await asyncio.sleep(0.1)
        assert record is not None, err
        assert record["status"] == "OK"
        assert record["title"] == "Hello & welcome"
        assert record["description"] == "A post."
        assert record["lang"] == "en"
        # `up` serves the web UI too (web.listen): the page's card.
        web = yaml.safe_load(open(config_file))["web"]["listen"]
        async with aiohttp.ClientSession() as http, http.get(f"http://{web}/url", params={"u": page}) as answer:
            assert answer.status == 200
            assert "Hello &amp; welcome" in await answer.text()
        watch_out, watch_err = await asyncio.wait_for(watch.communicate(), 70)
        assert watch.returncode == 0, watch_err.decode()
        assert json.loads(watch_out.decode().splitlines()[0])["url"] == page
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(timeout=30)
        log.close()
    assert up.returncode == 0, (tmp_path / "up.log").read_text()[-3000:]
    assert not os.path.exists(os.path.join(os.path.dirname(config_file), "var", "nats.url"))


async def test_get_of_an_unseen_url_and_bad_input(config_file):
    code, out, err = await run_cli("get", "http://x.test/", "--set", "metadata_api.listen=127.0.0.1:1")
    assert code == 2 and "metadata-api" in err and len(err.strip().splitlines()) == 1
    code, out, err = await run_cli("submit", "--config", "/nonexistent.yaml")
    assert code == 2 and "cannot read config" in err
    code, out, err = await run_cli("submit", "--set", "fetcher.default_rate=fast", "x")
    assert code == 2 and "default_rate" in err


# Every role meets a bad value, and every kind of bad value (a negative number, a bad flag, a bad
# duration, a bad network) meets a role: the roles read config through one loader (its messages
# are tested value by value in tests/core/test_config.py), so one process per role suffices.
@pytest.mark.parametrize("role,setting,named", [
    ("up", "fetcher.default_rate=-1", "fetcher.default_rate: bad value -1.0"),
    ("fetcher", "process.related_fetches=flase", "process.related_fetches: bad value 'flase'"),
    ("scheduler", "scheduler.ack_wait=7x", "scheduler.ack_wait: not a duration: '7x'"),
    ("metadata-api", "fetcher.allowed_networks=10.0.0.0/33",
     "fetcher.allowed_networks: bad value '10.0.0.0/33'"),
])
async def test_a_bad_value_stops_every_role_at_start_with_one_line(config_file, role, setting, named):
    code, out, err = await run_cli(role, "--config", config_file, "--set", setting, timeout=30)
    assert code == 2 and named in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


async def test_extract_prints_the_record(tmp_path):
    html = tmp_path / "page.html"
    html.write_bytes(b'<html><head><meta property="og:title" content="OG title">'
                     b'<meta property="og:image" content="/i.png"></head></html>')
    code, out, err = await run_cli("extract", "--url", "http://site.test/a/b", str(html))
    assert code == 0, err
    record = json.loads(out)
    assert record["title"] == "OG title"
    assert record["image"]["url"] == "http://site.test/i.png"


def _processes() -> dict[int, tuple[int, str, int]]:
    """pid -> (parent pid, name, process group), living processes only."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        fields = raw.rsplit(b")", 1)[1].split()
        if fields[0] != b"Z":
            out[int(entry)] = (int(fields[1]), raw[raw.index(b"(") + 1:raw.rindex(b")")].decode(),
                               int(fields[2]))
    return out


def _descendants(root: int) -> dict[int, str]:
    procs = _processes()
    found, stack = {}, [root]
    while stack:
        parent = stack.pop()
        for pid, (ppid, name, _) in procs.items():
            if ppid == parent and pid not in found:
                found[pid] = name
                stack.append(pid)
    return found


async def test_ctrl_c_stops_up_and_every_process_it_started(config_file, tmp_path):
    """Ctrl-C signals the terminal's process group. up stops its intake, drains, stops its
    extraction workers and its nats-server, and exits 0 without a traceback; nothing it started
    is left running."""
    log = open(tmp_path / "up.log", "wb")
    up = subprocess.Popen([*CLI, "up", "--config", config_file, "--set", "process.workers=2"],
                          stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    try:
        started: dict[int, str] = {}
        for _ in range(600):                       # its nats-server and two workers
            started = _descendants(up.pid)
            if sum(n.startswith("python") for n in started.values()) >= 2 or up.poll() is not None:
                break
            await asyncio.sleep(0.1)
        names = list(started.values())
        assert any("nats" in n for n in names) and sum(n.startswith("python") for n in names) >= 2, names
        os.killpg(up.pid, signal.SIGINT)           # what a terminal's Ctrl-C does
        up.wait(timeout=30)
    finally:
        if up.poll() is None:
            up.kill()
        log.close()
    text = (tmp_path / "up.log").read_text()
    assert up.returncode == 0, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
    for _ in range(100):                           # children may take a moment to be reaped
        if not set(started) & set(_processes()):
            break
        await asyncio.sleep(0.05)
    assert not set(started) & set(_processes()), started
