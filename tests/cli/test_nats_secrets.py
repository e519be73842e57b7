"""No NATS secret is ever shown: a password or token in nats_url or in a secret file appears in
no error, log line or stderr, through a failed connect, a refusal, a reconnect and the config
logged at start; in the service (bus.connect), the CLI and the client."""
from __future__ import annotations

import asyncio
import logging
import os

import pytest

from spiderduck.bus import credentials as nats_auth
from spiderduck.bus import streams as bus
from spiderduck.cli import logs
from spiderduck.cli.nats_server import EmbeddedNats, free_port
from spiderduck.client import AsyncClient, NotConfigured, Unavailable
from spiderduck.core import config
from spiderduck.core.errors import BusError, ConfigError
from support.cli import run_cli

CANARY = "c4nary" + os.urandom(6).hex()       # the secret
USERS = f'authorization {{ users = [ {{user: alice, password: "{CANARY}"}} ] }}\n'


def dead_urls() -> list[str]:
    return [f"nats://alice:{CANARY}@127.0.0.1:{free_port()}", f"nats://{CANARY}@127.0.0.1:{free_port()}"]


@pytest.fixture
def everything_logged(caplog):
    caplog.set_level(logging.DEBUG)
    return caplog


async def test_a_failed_connect_names_the_url_without_its_secret(everything_logged):
    for url in dead_urls():
        with pytest.raises(BusError) as failed:
            await bus.connect(url, timeout=0.5)
        assert CANARY not in str(failed.value) and "<set>@127.0.0.1:" in str(failed.value), failed.value
    assert CANARY not in everything_logged.text


async def test_a_refusal_names_the_url_without_its_secret(tmp_path, everything_logged):
    with EmbeddedNats(str(tmp_path / "nats"), config=USERS) as server:
        wrong = f"nats://alice:{CANARY[::-1]}@127.0.0.1:{server.port}"
        with pytest.raises(ConfigError) as refused:
            await bus.connect(wrong, timeout=10)
        assert str(refused.value) == (f"NATS at nats://alice:<set>@127.0.0.1:{server.port} refused the "
                                      "credentials in nats_url: Authorization Violation")
    assert CANARY[::-1] not in everything_logged.text


async def test_a_reconnect_logs_the_server_without_its_secret(tmp_path, everything_logged):
    store = str(tmp_path / "nats")
    server = EmbeddedNats(store, config=USERS).start()
    try:
        nc = await bus.connect(f"nats://alice:{CANARY}@127.0.0.1:{server.port}", timeout=10)
        try:
            server.stop()
            server.start()                                   # the same port
            async with asyncio.timeout(10):
                while "reconnected to" not in everything_logged.text:
                    await asyncio.sleep(0.02)
            await nc.flush(timeout=10)
        finally:
            await nc.close()
    finally:
        server.stop()
    assert f"NATS (spiderduck): reconnected to 127.0.0.1:{server.port}" in everything_logged.text
    assert "disconnected; reconnecting" in everything_logged.text
    assert CANARY not in everything_logged.text


async def test_the_cli_prints_no_secret_of_nats_url():
    for url in dead_urls():
        code, out, err = await run_cli("submit", "http://a.test/", "--set", f"nats_url={url}",
                                       "--set", "nats_connect_timeout=0.5")
        assert code == 2 and "cannot connect to NATS at nats://" in err, err
        assert CANARY not in err + out and "<set>@127.0.0.1" in err


async def test_the_client_shows_no_secret(tmp_path):
    for url in dead_urls():
        async with AsyncClient(nats_url=url, connect_timeout=0.5) as client:
            with pytest.raises(Unavailable) as failed:
                await client.submit(["http://a.test/"])
        assert CANARY not in str(failed.value) and "<set>@127.0.0.1" in str(failed.value)
    token_file = tmp_path / "token"
    token_file.write_text(CANARY + "\n")
    with EmbeddedNats(str(tmp_path / "nats"), token=CANARY[::-1]) as server:
        async with AsyncClient(nats_url=server.url, nats_token_file=str(token_file), connect_timeout=30) as client:
            with pytest.raises(NotConfigured) as refused:
                await client.submit(["http://a.test/"])
    assert str(refused.value) == (f"NATS at {server.url} refused the token of {token_file}: "
                                  "Authorization Violation")


def test_the_logged_config_shows_no_nats_secret(tmp_path, caplog):
    token_file = tmp_path / "token"
    token_file.write_text(CANARY)
    settings = config.load(env={}, overrides={
        "nats_url": f"nats://{CANARY}@n1:4222,nats://alice:{CANARY}@n2:4222",
        "nats_token_file": str(token_file)})
    nats_auth.nats_options(settings).connect_kwargs()        # the file is read: still not shown
    with caplog.at_level(logging.INFO, logger="spiderduck"):
        logs.log_settings(settings, "scheduler")
    [line] = [r.getMessage() for r in caplog.records]
    assert CANARY not in line
    assert '"nats_url": "nats://<set>@n1:4222,nats://alice:<set>@n2:4222"' in line
    assert f'"nats_token_file": "{token_file}"' in line
