"""NATS by role under a real `spiderduck up` (issue 38): the credential `up` writes for programs
beside it (the user `client`, its password in var/nats.password) submits, watches and gets as
before, and is refused by nats-server everything else: writing any key-value bucket, publishing
events, dead letters or replies, purging or deleting a stream. The roles inside `up` crawl under
users of their own without one permissions violation, and a role started beside `up` and
`resolve --trace` use their role's user."""
from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess

import nats
import pytest

from spiderduck.bus import permissions
from spiderduck.bus import streams as bus
from spiderduck.bus.claims import CLAIM_BUCKET
from spiderduck.cli import up_nats
from spiderduck.client.names import QUEUED_BUCKET
from spiderduck.fetcher.domain_controls import BUCKET as CONTROLS_BUCKET

from support.cli import CLI, Proc, run_cli, up_config

FORBIDDEN = [f"$KV.{b}.forged" for b in (bus.LEASE_BUCKET, CLAIM_BUCKET, CONTROLS_BUCKET, QUEUED_BUCKET)] + [
    bus.PROCESSED_SUBJECT, bus.DEAD_SUBJECT, f"{bus.REPLIES_PREFIX}.someone.call", "_INBOX.someone.else",
    f"$JS.API.STREAM.PURGE.{bus.URLS_STREAM}", f"$JS.API.STREAM.DELETE.{bus.EVENTS_STREAM}",
    f"$JS.API.STREAM.DELETE.KV_{CONTROLS_BUCKET}"]


async def test_programs_beside_up_submit_watch_and_get_and_nothing_more(tmp_path, localweb):
    page = localweb.page("roles.test", "/", "<title>By role</title>")
    config = up_config(tmp_path)
    data_dir = str(tmp_path / "var")
    up = Proc(tmp_path, "up", "--config", config)
    try:
        await up.wait_log("metadata-api serving")
        password = up_nats.password_path(data_dir)
        for user in permissions.ROLES:          # one password per user, each the user's only
            mode = os.stat(up_nats.password_path(data_dir, user)).st_mode
            assert stat.S_IMODE(mode) == 0o600, (user, oct(mode))
        assert not os.path.exists(os.path.join(data_dir, "nats.token"))
        with open(os.path.join(data_dir, "nats", "nats-server.conf")) as fh:
            conf = fh.read()
        assert all(f'user: "{role}"' in conf for role in permissions.ROLES)

        watch = await asyncio.create_subprocess_exec(
            *CLI, "watch", "--count", "1", "--timeout", "60", "--config", config,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = await asyncio.wait_for(watch.stderr.readline(), 60)
        assert b"watching spiderduck.events.processed" in first, first
        code, _, err = await run_cli("submit", page, "--config", config)
        assert code == 0, err
        out, err = await asyncio.wait_for(watch.communicate(), 70)
        assert watch.returncode == 0, err.decode()
        assert json.loads(out.decode().splitlines()[0])["url"] == page
        code, out, err = await run_cli("get", page, "--config", config)
        assert code == 0 and json.loads(out)["title"] == "By role", (out, err)
        # An unseen URL: the metadata-api reads the claims and queued buckets, as its user may.
        code, out, err = await run_cli("get", "http://never.roles.test/", "--config", config)
        assert code == 1 and json.loads(out) == {"url": "http://never.roles.test/", "found": False}, (out, err)
        # resolve --trace runs the pipeline here, as the scheduler's user.
        code, out, err = await run_cli("resolve", page, "--trace", "--config", config)
        assert code == 0 and json.loads(out.splitlines()[-1])["title"] == "By role", err

        # The client's credential, with nats-py as a program of one's own uses it.
        refused: list[str] = []
        said = asyncio.Event()

        async def on_error(exc: Exception) -> None:
            refused.append(str(exc).lower())
            said.set()
        with open(up_nats.url_path(data_dir)) as fh:
            url = fh.read().strip()
        nc = await nats.connect(url, error_cb=on_error, allow_reconnect=False, **up_nats.up_credentials(data_dir))
        try:
            for subject in FORBIDDEN:
                said.clear()
                await nc.publish(subject, b'{"rate": 100000}')
                await asyncio.wait_for(said.wait(), 10)
                assert f'permissions violation for publish to "{subject.lower()}"' in refused[-1], refused
            assert (await nc.jetstream().publish(bus.SUBMIT_SUBJECT, page.encode())).stream == bus.URLS_STREAM
        finally:
            await nc.close()
        with open(password) as fh:
            assert fh.read().strip() == up_nats.up_credentials(data_dir)["password"]
    finally:
        await up.stop()
    log = open(os.path.join(data_dir, "nats", "nats-server.log")).read()
    violations = [line for line in log.splitlines() if "Violation" in line]
    # Every refusal was the client's: the roles crawled, answered and resolved within their rights.
    assert violations and all('"$G/user:client"' in line for line in violations), violations
    assert len(violations) == len(FORBIDDEN)
    assert not os.path.exists(password) and not os.path.exists(up_nats.password_path(data_dir, "fetcher"))


@pytest.mark.parametrize("role", ["scheduler"])
async def test_a_role_started_beside_up_uses_its_own_user(tmp_path, role):
    config = up_config(tmp_path)
    up = Proc(tmp_path, "up", "--config", config)
    try:
        await up.wait_log("metadata-api serving")
        beside = Proc(tmp_path, role, "--config", config, "--set", "scheduler.listen=")
        try:
            await beside.wait_log("scheduler pipeline")
        finally:
            await beside.stop()
        assert "Violation" not in beside.stderr
    finally:
        await up.stop()
    log = open(tmp_path / "var" / "nats" / "nats-server.log").read()
    assert "Violation" not in log, log[-3000:]
