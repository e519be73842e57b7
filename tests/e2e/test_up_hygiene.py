"""Set-up hygiene, over real processes: one `up` per data_dir, no nats-server left behind or run
twice, and a CLI that only ever talks to the NATS it was pointed at."""
from __future__ import annotations

import asyncio
import os
import signal

import nats
import pytest

from common import bus
from common.nats_server import EmbeddedNats, free_port, process_gone
from support.cli import Proc, run_cli, up_config


@pytest.fixture(name="up_config")
def _up_config(tmp_path):
    return up_config(tmp_path, process={"workers": 1})


def nats_servers_on(store: str) -> list[int]:
    """Live nats-server processes whose command line names this store folder."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or process_gone(int(entry)):
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if os.path.basename(argv[0]) == b"nats-server" and os.fsencode(store) in argv:
            found.append(int(entry))
    return found


async def wait_gone(pid: int, timeout: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not process_gone(pid):
        assert asyncio.get_running_loop().time() < deadline, f"pid {pid} still runs"
        await asyncio.sleep(0.05)


async def test_a_second_up_on_the_same_data_dir_exits_2_naming_the_first(tmp_path, up_config):
    first = Proc(tmp_path, "up", "--config", up_config)
    try:
        await first.wait_log("serving every shard")
        code, out, err = await run_cli("up", "--config", up_config)
        assert code == 2, err
        assert f"pid {first.proc.pid}" in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1, err
        assert len(nats_servers_on(str(tmp_path / "var" / "nats"))) == 1
        await first.stop(signal.SIGTERM)
        assert first.proc.returncode == 0, first.stderr[-3000:]
    finally:
        first.kill()


async def test_after_kill_9_the_next_up_runs_one_nats_server(tmp_path, up_config):
    store = str(tmp_path / "var" / "nats")
    first = Proc(tmp_path, "up", "--config", up_config)
    try:
        await first.wait_log("serving every shard")
        [orphan] = nats_servers_on(store)
        first.proc.kill()                         # kill -9: no cleanup of its own
        first.proc.wait()
        await wait_gone(orphan)                   # it dies with `up` (PR_SET_PDEATHSIG)
    finally:
        first.kill()
    second = Proc(tmp_path, "up", "--config", up_config)
    try:
        await second.wait_log("serving every shard")
        assert len(nats_servers_on(store)) == 1
        code, out, err = await run_cli("submit", "http://a.test/", "--config", up_config)
        assert code == 0, err                      # the CLI finds the new one, not a stale file
        await second.stop(signal.SIGTERM)
        assert second.proc.returncode == 0, second.stderr[-3000:]
    finally:
        second.kill()


async def test_up_stops_a_nats_server_left_running_on_its_store(tmp_path, up_config):
    """A nats-server that outlived its `up` some other way (an older version, a container's
    pid namespace): the next `up` stops it before starting its own, never runs two."""
    store = str(tmp_path / "var" / "nats")
    orphan = EmbeddedNats(store).start()          # not ours to keep: as if left behind
    try:
        up = Proc(tmp_path, "up", "--config", up_config)
        try:
            await up.wait_log("serving every shard")
            assert f"stopped nats-server pid {orphan.proc.pid}" in up.stderr
            orphan.proc.wait(timeout=10)
            assert len(nats_servers_on(store)) == 1
            await up.stop(signal.SIGTERM)
            assert up.proc.returncode == 0, up.stderr[-3000:]
        finally:
            up.kill()
    finally:
        orphan.stop()


@pytest.mark.parametrize("command", [["submit", "http://a.test/"], ["watch", "--count", "1"],
                                     ["get", "http://a.test/"]])
async def test_the_cli_never_uses_a_nats_it_was_not_pointed_at(tmp_path, nats_server, command):
    """No nats_url and no `up` on data_dir: one line saying how to start or point it, exit 2.
    A nats.url left by a killed `up` (here naming a live server that is not ours) is not
    trusted, and that server gets no SpiderDuck stream."""
    data_dir = tmp_path / "var"
    data_dir.mkdir()
    (data_dir / bus.EMBEDDED_URL_FILE).write_text(nats_server.url + "\n")
    code, out, err = await run_cli(*command, "--set", f"data_dir={data_dir}",
                                   "--set", f"metadata_api.listen=127.0.0.1:{free_port()}")
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    point_it = "metadata_api.listen" if command[0] == "get" else "nats_url"
    assert "spiderduck up" in err and point_it in err, err
    nc = await nats.connect(nats_server.url)
    try:
        assert await nc.jetstream().streams_info() == []
    finally:
        await nc.close()


async def test_data_dir_is_found_from_any_working_directory(tmp_path, up_config, monkeypatch):
    """A relative data_dir names one folder: `submit` run from elsewhere with that same
    relative path is refused (no up there) rather than resolved against the wrong folder."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)
    code, out, err = await run_cli("submit", "http://a.test/", "--set", "data_dir=var")
    assert code == 2 and str(other / "var") in err, err
