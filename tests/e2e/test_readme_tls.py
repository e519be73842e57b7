"""docs/security.md's "TLS in four commands", run as written (ports and data_dir moved to free ones):
the CA and certificate made with openssl, `up` serving mutual TLS with them, `get` through it."""
from __future__ import annotations

import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import time

import pytest

from spiderduck.cli.nats_server import free_port, port_open

ROOT = pathlib.Path(__file__).resolve().parents[2]


def readme_commands() -> list[list[str]]:
    text = (ROOT / "docs" / "security.md").read_text("utf-8")
    block = re.search(r"<!-- tls-quickstart[^>]*-->\s*```sh\n(.*?)```", text, re.S)
    assert block, "docs/security.md has no tls-quickstart block"
    return [shlex.split(line) for line in block.group(1).splitlines() if line.strip()]


def wait_for_port(address: str, process: subprocess.Popen, timeout: float = 60) -> None:
    host, port = address.rsplit(":", 1)
    deadline = time.monotonic() + timeout
    while not port_open(host, int(port)):
        assert process.poll() is None, f"up exited {process.returncode}: {process.stderr.read()[-2000:]}"
        assert time.monotonic() < deadline, f"nothing listens on {address} after {timeout:g}s"
        time.sleep(0.05)


def test_the_readme_runs_a_tls_deployment_in_four_commands(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    commands = readme_commands()
    assert len(commands) == 4
    make_ca, make_cert, up, get = commands
    for command in (make_ca, make_cert):
        subprocess.run(command, cwd=tmp_path, check=True, capture_output=True, timeout=60)
    api = f"127.0.0.1:{free_port()}"
    moved = ["--set", f"data_dir={tmp_path / 'var'}", "--set", f"metadata_api.listen={api}",
             "--set", f"fetcher.listen=127.0.0.1:{free_port()}", "--set", f"web.listen=127.0.0.1:{free_port()}"]
    assert up[0] == get[0] == "bin/spiderduck"
    binary = str(ROOT / "bin" / "spiderduck")
    service = subprocess.Popen([binary, *up[1:], *moved], cwd=tmp_path, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    try:
        wait_for_port(api, service)
        answer = subprocess.run([binary, *get[1:], *moved], cwd=tmp_path, capture_output=True, text=True,
                                timeout=60)
        assert answer.returncode == 1, answer.stderr            # answered: not found (never crawled)
        assert json.loads(answer.stdout) == {"url": "https://example.com/", "found": False}
        plain = subprocess.run([binary, "get", "https://example.com/", *moved], cwd=tmp_path,
                               capture_output=True, text=True, timeout=60)
        assert plain.returncode == 2 and "UNAVAILABLE" in plain.stderr
    finally:
        service.terminate()
        service.wait(30)
    assert oct(os.stat(tmp_path / "spiderduck.key").st_mode & 0o777) == "0o600"
