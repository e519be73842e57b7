"""`spiderduck domains` against a running fetcher: list (table and --json), pause, resume, set-rate."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import grpc
import pytest
import yaml

from common import config
from common.nats_server import free_port
from fetcher.main import run_fetcher
from spiderduck.cli.main import main as cli_main
from spiderduck.v1 import fetcher_pb2, fetcher_pb2_grpc
from support.service import wait_port

CLI = [sys.executable, "-m", "spiderduck.cli.main"]


async def domains(*args: str, config_file: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(*CLI, "domains", *args, "--config", config_file,
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "spiderduck.yaml"
    path.write_text(yaml.safe_dump({
        "data_dir": str(tmp_path / "var"),
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
