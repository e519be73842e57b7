"""NATS by role in the chart (issue 38): each role may have its own NATS credentials
(<role>.natsAuth, nats.auth the default), and the chart renders the nats-server authorization
block of SpiderDuck's users, the one spiderduck.bus.permissions defines (and `up` uses), for the
operator to copy into their NATS. The block, as rendered, runs in a real nats-server: each role
does its job, and the client is refused what it may not do."""
from __future__ import annotations

import asyncio
import importlib.util

import nats
import pytest

from spiderduck.bus import permissions
from spiderduck.bus import streams as bus
from spiderduck.bus.claims import CLAIM_BUCKET
from spiderduck.cli.nats_server import EmbeddedNats
from spiderduck.fetcher import domain_controls

from support.chart import CHART, helm, mounted_files, notes, render, role_config, secrets_used

SCRIPT = CHART.parents[1] / "scripts" / "gen_nats_authorization.py"


def generator():
    spec = importlib.util.spec_from_file_location("gen_nats_authorization", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def authorization_conf(docs: list[dict]) -> str:
    [cm] = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-nats-authorization")]
    return cm["data"]["authorization.conf"]


def test_the_charts_block_is_the_one_permissions_makes():
    """files/nats-authorization.conf is what scripts/gen_nats_authorization.py writes from
    spiderduck.bus.permissions (run it after changing a role's permissions)."""
    assert (CHART / "files" / "nats-authorization.conf").read_text() == generator().render()
    conf = authorization_conf(render())
    assert conf.strip() == generator().render().strip()
    for role in permissions.ROLES:
        assert f'{{user: "{role}", password: ${generator().password_variable(role)},' in conf
    assert "nats-authorization" in notes() and "copy that block" in notes()


def test_each_role_may_have_its_own_nats_credentials():
    docs = render({"nats": {"auth": {"type": "token", "existingSecret": "sd-nats"}},
                   "scheduler": {"natsAuth": {"type": "password", "existingSecret": "sd-nats-scheduler",
                                              "user": "crawl-scheduler"}},
                   "fetcher": {"natsAuth": {"type": "nkey", "existingSecret": "sd-nats-fetcher"}}})
    scheduler, fetcher, api = (role_config(docs, r) for r in ("scheduler", "fetcher", "metadata-api"))
    assert scheduler["nats_user"] == "crawl-scheduler" and "nats_token_file" not in scheduler
    assert mounted_files(docs, "scheduler")[scheduler["nats_password_file"]] == ("secret", "sd-nats-scheduler", "password")
    assert mounted_files(docs, "fetcher")[fetcher["nats_nkey_seed"]] == ("secret", "sd-nats-fetcher", "nkey.seed")
    assert mounted_files(docs, "metadata-api")[api["nats_token_file"]] == ("secret", "sd-nats", "token")
    # Each role's Secret reaches that role only.
    assert "sd-nats-scheduler" not in secrets_used(docs, "fetcher") | secrets_used(docs, "metadata-api")
    assert "sd-nats" not in secrets_used(docs, "scheduler") | secrets_used(docs, "fetcher")
    assert "sd-nats-fetcher" not in secrets_used(docs, "schema")
    # The block names the scheduler's user as its Secret does.
    conf = authorization_conf(docs)
    assert '{user: "crawl-scheduler",' in conf and '{user: "scheduler",' not in conf


@pytest.mark.parametrize("auth,message", [
    ({"type": "password", "existingSecret": "s"}, "scheduler.natsAuth.user"),
    ({"type": "token"}, "scheduler.natsAuth: set both"),
])
def test_a_roles_credentials_half_set_are_refused(auth, message):
    with pytest.raises(helm.HelmError, match=message):
        render({"scheduler": {"natsAuth": auth}})


async def test_the_rendered_block_runs_in_nats_server(tmp_path, monkeypatch):
    """The block as rendered, in a real nats-server whose environment holds the passwords."""
    gen = generator()
    passwords = {role: f"secret-{role}-0123456789" for role in permissions.ROLES}
    for role, password in passwords.items():
        monkeypatch.setenv(gen.password_variable(role), password)
    refused: list[str] = []
    said = asyncio.Event()

    async def on_error(exc: Exception) -> None:
        refused.append(str(exc).lower())
        said.set()

    with EmbeddedNats(str(tmp_path / "nats"), config=authorization_conf(render())) as server:
        async def connect(role):
            return await nats.connect(server.url, user=role, password=passwords[role], error_cb=on_error,
                                      inbox_prefix=permissions.inbox_prefix(role), allow_reconnect=False)
        sched, fetcher, client = [await connect(r) for r in ("scheduler", "fetcher", "client")]
        try:
            await bus.ensure_streams(sched.jetstream())
            claims = await bus.claim_bucket(sched.jetstream(), 60)
            await claims.create("url", b"mine")
            controls = await domain_controls.open_bucket(fetcher.jetstream())
            await controls.put("example.com", b"{}")
            ack = await client.jetstream().publish(bus.SUBMIT_SUBJECT, b"https://example.com/")
            assert ack.stream == bus.URLS_STREAM
            assert not refused, refused
            for subject in (f"$KV.{domain_controls.BUCKET}.example.com", f"$KV.{CLAIM_BUCKET}.url",
                            bus.PROCESSED_SUBJECT, f"$JS.API.STREAM.PURGE.{bus.URLS_STREAM}"):
                said.clear()
                await client.publish(subject, b'{"rate": 100000}')
                await asyncio.wait_for(said.wait(), 10)
                assert f'permissions violation for publish to "{subject.lower()}"' in refused[-1]
            assert (await controls.get("example.com")).value == b"{}"
        finally:
            for nc in (sched, fetcher, client):
                await nc.close()
