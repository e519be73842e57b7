"""`spiderduck up` warns once at start, in a real process, when the web UI or the metadata API
listens beyond loopback and metadata_api.tokens_file is not set (issue 38): anyone who reaches
such a port reads every URL and starts crawls."""
from __future__ import annotations

import signal

import pytest

from spiderduck.cli.nats_server import free_port
from support.cli import Proc, up_config

WARNING = "beyond loopback with no metadata_api.tokens_file"


async def _start_up(tmp_path, **extra) -> str:
    """Run `up` until it serves, stop it, and give its log."""
    up = Proc(tmp_path, "up", "--config", up_config(tmp_path, **extra))
    try:
        await up.wait_log("serving every shard")
        await up.stop(signal.SIGTERM)
        assert up.proc.returncode == 0, up.stderr[-3000:]
        return up.stderr
    finally:
        up.kill()


@pytest.mark.parametrize("key", ["web", "metadata_api"])
async def test_a_listen_beyond_loopback_without_tokens_is_warned_once(tmp_path, key):
    log = await _start_up(tmp_path, **{key: {"listen": f"0.0.0.0:{free_port()}"}})
    (line,) = [ln for ln in log.splitlines() if WARNING in ln]
    assert " WARNING " in line and f"{key}.listen 0.0.0.0:" in line
    other = "metadata_api" if key == "web" else "web"
    assert f"{other}.listen" not in line          # the one on loopback is not named


async def test_tokens_or_loopback_silence_it(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("ops:" + "t" * 32 + "\n")
    tokens.chmod(0o600)
    with_tokens = await _start_up(tmp_path, web={"listen": f"0.0.0.0:{free_port()}"},
                                  metadata_api={"listen": f"0.0.0.0:{free_port()}",
                                                "tokens_file": str(tokens)})
    assert WARNING not in with_tokens
    assert str(tokens) in with_tokens               # the config it started with was logged
    loopback = await _start_up(tmp_path)            # up_config: every listen on 127.0.0.1
    assert WARNING not in loopback
