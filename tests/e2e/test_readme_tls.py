"""docs/security.md's "TLS in four commands", run as written (ports and data_dir moved to free ones):
the CA and certificate made with openssl, `up` serving mutual TLS with them, `get` through it.
Then the files are rotated on disk to another CA's (issue 38): `get` with the new files is
served without a restart and the old files are refused; and `up` stops promptly on SIGTERM."""
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
             "--set", f"fetcher.listen=127.0.0.1:{free_port()}", "--set", f"web.listen=127.0.0.1:{free_port()}",
             "--set", f"tls.reload_interval={RELOAD}"]
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
        rotate_to_a_new_ca(tmp_path, make_ca, make_cert)
        deadline = time.monotonic() + 60
        while (answer := run_get(binary, get, moved, tmp_path)).returncode != 1:
            assert answer.returncode == 2 and "UNAVAILABLE" in answer.stderr, answer.stderr
            assert time.monotonic() < deadline, "up did not take the rotated files within 60 s"
        assert json.loads(answer.stdout) == {"url": "https://example.com/", "found": False}
        old = [arg.replace("spiderduck.", "old/spiderduck.").replace("=ca.crt", "=old/ca.crt") for arg in get]
        refused = run_get(binary, old, moved, tmp_path)
        assert refused.returncode == 2 and "UNAVAILABLE" in refused.stderr, refused.stderr
    finally:
        service.terminate()
        started = time.monotonic()
        service.wait(30)
    # Promptly: within shutdown_grace (10 s), never waiting on a TLS handshake.
    assert service.returncode == 0 and time.monotonic() - started < 10, service.stderr.read()[-2000:]
    assert oct(os.stat(tmp_path / "spiderduck.key").st_mode & 0o777) == "0o600"


RELOAD = 0.2        # tls.reload_interval of this up: seconds between looks at its files


def run_get(binary: str, get: list[str], moved: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run([binary, *get[1:], *moved], cwd=cwd, capture_output=True, text=True, timeout=60)


def rotate_to_a_new_ca(folder: pathlib.Path, make_ca: list[str], make_cert: list[str]) -> None:
    """The same two openssl commands in folder/new (another CA, another key); the old files kept
    in folder/old; the new ones renamed over the live ones, key first, as a Secret rotates."""
    (folder / "new").mkdir()
    (folder / "old").mkdir()
    for command in (make_ca, make_cert):
        subprocess.run(command, cwd=folder / "new", check=True, capture_output=True, timeout=60)
    for name in ("spiderduck.key", "spiderduck.crt", "ca.crt"):
        shutil.copy2(folder / name, folder / "old" / name)
        os.replace(folder / "new" / name, folder / name)
