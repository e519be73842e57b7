"""`spiderduck domains` against a running fetcher: list (table and --json), pause, resume, set-rate;
refused names; and the controls kept across a restart of `spiderduck up`."""
from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time

import grpc
import pytest
import yaml

from spiderduck.cli.main import main as cli_main
from spiderduck.cli.nats_server import free_port
from spiderduck.core import config
from spiderduck.fetcher.main import run_fetcher
from spiderduck.v1 import fetcher_pb2, fetcher_pb2_grpc
from support.service import wait_port

CLI = [sys.executable, "-m", "spiderduck.cli.main"]


async def domains(*args: str, config_file: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(*CLI, "domains", *args, "--config", config_file,
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


@pytest.fixture
def config_file(tmp_path, nats_server):
    path = tmp_path / "spiderduck.yaml"
    path.write_text(yaml.safe_dump({
        "data_dir": str(tmp_path / "var"),
        "nats_url": nats_server.url,
        "fetcher": {"listen": f"127.0.0.1:{free_port()}", "id": "fetcher-cli", "default_rate": 20,
                    "allowed_networks": ["127.0.0.0/8"], "dns_overrides": {"*.test": "127.0.0.1"}},
    }))
    return str(path)


@pytest.fixture
async def fetcher(config_file):
    settings = config.load(config_file, env={})
    stop = asyncio.Event()
    task = asyncio.create_task(run_fetcher(settings, stop, hold_all_shards=True))
    await wait_port(settings.fetcher.listen)
    yield settings
    stop.set()
    await task


async def test_list_pause_resume_set_rate(fetcher, config_file, localweb):
    localweb.page("news.test", "/", "<title>x</title>")
    async with grpc.aio.insecure_channel(fetcher.fetcher.listen) as channel:
        stub = fetcher_pb2_grpc.FetcherServiceStub(channel)
        for _ in range(2):
            await stub.Fetch(fetcher_pb2.FetchRequest(url=localweb.url("news.test", "/")))

    code, out, err = await domains(config_file=config_file)
    assert code == 0, err
    header, row = out.splitlines()
    assert header.split()[:4] == ["DOMAIN", "STATE", "QUEUE", "RATE/S"]
    assert row.split()[:5] == ["news.test", "active", "0", "20", "0.05s"]
    assert "200:2" in row and "fetcher-cli" in row

    code, out, err = await domains("list", "--json", config_file=config_file)
    assert code == 0, err
    [record] = [json.loads(line) for line in out.splitlines()]
    assert record["domain"] == "news.test" and record["owner"] == "fetcher-cli"
    # two pages and the robots.txt lookup (404: no robots.txt, allow all)
    assert record["state"] == "DOMAIN_ACTIVE" and record["status_counts"] == {"200": 2, "404": 1}
    assert record["queue_depth"] == 0 and record["rate"] == 20 and record["error_rate"] == 0

    code, out, err = await domains("pause", "www.news.test", "--for", "2m", "--json",
                                   config_file=config_file)
    assert code == 0, err
    paused = json.loads(out)
    assert paused["state"] == "DOMAIN_PAUSED" and paused["reason"] == "paused by an operator"

    code, out, err = await domains(config_file=config_file)      # `domains` alone lists
    assert code == 0 and " paused " in out and "until " in out, err

    code, out, err = await domains("resume", "news.test", "--json", config_file=config_file)
    assert code == 0 and json.loads(out)["state"] == "DOMAIN_ACTIVE", err

    code, out, err = await domains("set-rate", "news.test", "2.5", "--json", config_file=config_file)
    assert code == 0, err
    rated = json.loads(out)
    assert (rated["rate"], rated["rate_source"], rated["interval_seconds"]) == (2.5, "operator", 0.4)


async def test_errors_exit_non_zero_with_one_line(fetcher, config_file, tmp_path, capsys):
    # In-process (in a thread, since the command runs its own event loop), to keep this quick.
    async def run(*args: str, config: str = config_file) -> tuple[int, str]:
        capsys.readouterr()
        code = await asyncio.to_thread(cli_main, ["domains", *args, "--config", config])
        return code, capsys.readouterr().err

    for args, reason in [
        (("set-rate", "news.test", "-1"), "RATE must be a positive number"),
        (("set-rate", "news.test", "fast"), "RATE must be a positive number"),
        (("pause", "news.test", "--for", "soon"), "--for: not a duration"),
        (("pause", "http://[::1"), "INVALID_ARGUMENT"),
        (("pause", "co.uk"), "INVALID_ARGUMENT: 'co.uk' is not a registrable domain: co.uk is a public suffix"),
        (("resume", "*.news.test"), "'*.news.test' is not a registrable domain: a wildcard"),
        (("set-rate", "bad-.com", "2"), "'bad-.com' is not a registrable domain: bad label 'bad-'"),
        (("list", "news.test", "com"), "'com' is not a registrable domain"),
        (("pause", ""), "a domain is required"),
    ]:
        code, err = await run(*args)
        assert code != 0 and reason in err, (args, err)
        assert len(err.strip().splitlines()) == 1, err

    elsewhere = tmp_path / "nobody.yaml"
    elsewhere.write_text(yaml.safe_dump({"fetcher": {"listen": f"127.0.0.1:{free_port()}"}}))
    for args in ((), ("resume", "news.test")):
        code, err = await run(*args, config=str(elsewhere))
        assert code != 0 and "UNAVAILABLE" in err, err
        assert len(err.strip().splitlines()) == 1, err


async def test_controls_outlive_a_restart_of_up(tmp_path, localweb):
    """`up` on its own embedded NATS (JetStream under data_dir), stopped with SIGTERM and started
    again on the same data_dir: the pause and the rate are still there."""
    config_file = tmp_path / "up.yaml"
    config_file.write_text(yaml.safe_dump({
        "data_dir": str(tmp_path / "var"),               # nats_url empty: `up` embeds NATS
        "metadata_api": {"listen": f"127.0.0.1:{free_port()}"},
        "fetcher": {"listen": f"127.0.0.1:{free_port()}", "id": "fetcher-up",
                    "allowed_networks": ["127.0.0.0/8"], "dns_overrides": {"*.test": "127.0.0.1"}},
    }))
    settings = config.load(str(config_file), env={})
    log = open(tmp_path / "up.log", "ab")                # a file, not a pipe: a full pipe blocks `up`

    async def up_until_stopped(action) -> None:
        up = subprocess.Popen([*CLI, "up", "--config", str(config_file)],
                              stdout=subprocess.DEVNULL, stderr=log)
        try:
            await wait_port(settings.fetcher.listen, timeout=60)
            await action()
        finally:
            up.send_signal(signal.SIGTERM)
            code = await asyncio.to_thread(up.wait, 60)
        assert code == 0, (tmp_path / "up.log").read_text()[-3000:]

    async def pause_and_rate() -> None:
        code, out, err = await domains("set-rate", "example.com", "0.5", config_file=str(config_file))
        assert code == 0, err
        code, out, err = await domains("pause", "www.example.com", "--for", "1h", "--json",
                                       config_file=str(config_file))
        assert code == 0, err
        paused.update(json.loads(out))

    async def still_there() -> None:
        code, out, err = await domains("list", "--json", config_file=str(config_file))
        assert code == 0, err
        [record] = [json.loads(line) for line in out.splitlines()]
        listed.update(record)
        code, out, err = await domains(config_file=str(config_file))     # the table too
        assert code == 0 and " paused " in out and "until " in out, err

    paused: dict = {}
    listed: dict = {}
    try:
        await up_until_stopped(pause_and_rate)
        await up_until_stopped(still_there)
    finally:
        log.close()
    assert paused["state"] == "DOMAIN_PAUSED" and paused["domain"] == "example.com"
    assert (listed["domain"], listed["state"], listed["reason"], listed["owner"]) == \
        ("example.com", "DOMAIN_PAUSED", "paused by an operator", "fetcher-up")
    assert abs(listed["paused_until"] - paused["paused_until"]) < 1
    assert listed["paused_until"] > time.time() + 3000
    assert (listed["rate"], listed["rate_source"]) == (0.5, "operator")
