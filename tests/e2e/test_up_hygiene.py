"""Set-up hygiene, over real processes: one `up` per data_dir, no nats-server left behind or run
twice, and a CLI that only ever talks to the NATS it was pointed at."""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pathlib
import signal
import stat

import nats
import pytest

from spiderduck.cli import up_nats
from spiderduck.cli.nats_server import EmbeddedNats, free_port, process_gone
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
    (data_dir / up_nats.EMBEDDED_URL_FILE).write_text(nats_server.url + "\n")
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


def command_lines() -> list[bytes]:
    """Every live process's command line, as `ps` shows it to any user."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError), open(f"/proc/{entry}/cmdline", "rb") as fh:
                found.append(fh.read())
    return found


async def test_ups_nats_admits_only_the_users_up_made_which_ps_does_not_show(tmp_path, up_config):
    data_dir = tmp_path / "var"
    up = Proc(tmp_path, "up", "--config", up_config)
    try:
        await up.wait_log("serving every shard")
        password_file = pathlib.Path(up_nats.password_path(str(data_dir)))
        password = password_file.read_text().strip()
        assert len(password) >= 32 and stat.S_IMODE(password_file.stat().st_mode) == 0o600
        url = (data_dir / up_nats.EMBEDDED_URL_FILE).read_text().strip()
        for anonymous in ({}, {"token": password}, {"user": "client", "password": password[::-1]},
                          {"user": "scheduler", "password": password}):
            with pytest.raises(nats.errors.Error, match="Authorization Violation"):
                await nats.connect(url, allow_reconnect=False, error_cb=_quiet, **anonymous)
        nc = await nats.connect(url, user="client", password=password, allow_reconnect=False)
        await nc.close()
        assert not [line for line in command_lines() if password.encode() in line]
        code, out, err = await run_cli("submit", "http://a.test/", "--config", up_config)
        assert code == 0, err                         # the CLI takes the password of the `up` it finds
        await up.stop(signal.SIGTERM)
        assert up.proc.returncode == 0, up.stderr[-3000:]
        server_log = (data_dir / "nats" / "nats-server.log").read_text()
        assert "authentication error" in server_log and password not in server_log
        assert password not in up.stderr
        assert not password_file.exists()             # gone with its server, as its config
        assert not (data_dir / up_nats.ROLE_PASSWORDS_DIR).exists()
        assert not (data_dir / "nats" / "nats-server.conf").exists()
    finally:
        up.kill()


async def _quiet(exc: Exception) -> None:
    pass


def modes_under(root) -> dict[str, int]:
    """path (relative to root) -> mode (type and permission bits), of root and everything below it."""
    found = {".": os.stat(root).st_mode}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = os.lstat(path).st_mode
    return found


def not_private(modes: dict[str, int], root) -> list[str]:
    """Of `modes` (modes_under, taken while they existed), what is not 0700 (a folder) or 0600."""
    return [f"{path} {stat.S_IMODE(mode):o}" for path, mode in sorted(modes.items())
            if stat.S_IMODE(mode) != (0o700 if stat.S_ISDIR(mode) else 0o600)]


async def test_everything_up_writes_under_data_dir_is_its_users_only(tmp_path, up_config, localweb):
    """Files 0600 and folders 0700, whatever the umask: the SQLite database and its WAL, the
    WARC files, nats.url, nats.password and nats-users/, up.lock, the nats-server's JetStream store and log. A
    data_dir (and up.lock) made readable to others before is made private."""
    data_dir = tmp_path / "var"
    data_dir.mkdir(mode=0o755)
    (data_dir / "up.lock").touch(mode=0o644)
    page = localweb.page("private.test", "/", "<title>Mine</title>")
    up = Proc(tmp_path, "up", "--config", up_config)
    try:
        await up.wait_log("serving every shard")
        code, out, err = await run_cli("submit", page, "--config", up_config)
        assert code == 0, err
        deadline = asyncio.get_running_loop().time() + 60
        while True:                                    # until the page is stored
            code, out, err = await run_cli("get", page, "--config", up_config)
            if code == 0:
                break
            assert asyncio.get_running_loop().time() < deadline, err
        assert json.loads(out)["status"] == "OK"
        running = modes_under(data_dir)
        await up.stop(signal.SIGTERM)
        assert up.proc.returncode == 0, up.stderr[-3000:]
    finally:
        up.kill()
    for seen in ("metadata.db", "metadata.db-wal", "nats.url", "nats.password", "nats-users/fetcher", "up.lock",
                 "nats/nats-server.log", "nats/jetstream"):
        assert seen in running, sorted(running)
    assert [path for path in running if path.endswith(".warc.gz")], sorted(running)
    assert not_private(running, data_dir) == []
    assert not_private(modes_under(data_dir), data_dir) == []
