"""The `spiderduck` command in real processes, as a user or an operator runs it."""
from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time

import pytest
import yaml

from spiderduck.cli.nats_server import free_port

CLI = [sys.executable, "-m", "spiderduck.cli.main"]
READY = ("serving every shard", "metadata-api serving")   # `up`'s fetcher, then its metadata-api


async def run_cli(*args: str, timeout: float = 60) -> tuple[int, str, str]:
    """Run one command to its end: (exit code, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(*CLI, *args, stdout=subprocess.PIPE,
                                                stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode, out.decode(), err.decode()


def up_config(tmp_path, **extra) -> str:
    """A config file for `spiderduck up` on embedded defaults (nats_url empty: it embeds NATS),
    on free ports, serving `*.test` from loopback; `extra` adds top-level keys (`process`'s are
    merged with its `honesty: off`: these tests count the crawler's requests and each URL's one
    event; the browser's second look, issue 43, is tested where a test turns it on)."""
    extra["process"] = {"honesty": "off", **extra.get("process", {})}
    path = tmp_path / "spiderduck.yaml"
    path.write_text(yaml.safe_dump({
        "data_dir": str(tmp_path / "var"),
        "metadata_api": {"listen": f"127.0.0.1:{free_port()}"},
        "fetcher": {"listen": f"127.0.0.1:{free_port()}", "default_rate": 20,
                    "allowed_networks": ["127.0.0.0/8"], "dns_overrides": {"*.test": "127.0.0.1"}},
        "web": {"listen": f"127.0.0.1:{free_port()}"},
        **extra}))
    return str(path)


class Proc:
    """A long-running command (`up`, a role); stderr to a file (a full pipe would block it)."""

    def __init__(self, tmp_path, *args: str):
        self.log_path = tmp_path / f"{args[0]}-{time.monotonic_ns()}.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([*CLI, *args], stdout=subprocess.DEVNULL, stderr=self._log)

    @property
    def stderr(self) -> str:
        return self.log_path.read_text(errors="replace")

    async def wait_log(self, words: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while words not in self.stderr:
            assert self.proc.poll() is None, f"exited {self.proc.returncode}:\n{self.stderr[-3000:]}"
            assert time.monotonic() < deadline, f"no {words!r} in:\n{self.stderr[-3000:]}"
            await asyncio.sleep(0.05)

    async def stop(self, sig=signal.SIGTERM, timeout: float = 30) -> float:
        """Send `sig`; the seconds it took to exit (fails past `timeout`)."""
        started = time.monotonic()
        self.proc.send_signal(sig)
        return await self.wait_exit(started, timeout)

    async def wait_exit(self, started: float, timeout: float) -> float:
        while self.proc.poll() is None:
            if time.monotonic() - started > timeout:
                self.kill()
                pytest.fail(f"still running {timeout:g}s after the signal:\n{self.stderr[-3000:]}")
            await asyncio.sleep(0.02)
        self._log.close()
        return time.monotonic() - started

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


async def start_up(tmp_path, config: str) -> Proc:
    """`spiderduck up --config CONFIG`, once its fetcher and its metadata-api serve (killed if not)."""
    up = Proc(tmp_path, "up", "--config", config)
    try:
        for words in READY:
            await up.wait_log(words)
    except BaseException:
        up.kill()
        raise
    return up
