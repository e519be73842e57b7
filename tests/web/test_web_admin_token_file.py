"""web.admin_token_file: the admin token kept in a file of its own (a mounted Secret), not in the
config. Its token opens the admin actions of a real web UI, a wrong one is 401, and the token is
in no log and no page; both keys set, or a file no one can use, stops the role at start."""
from __future__ import annotations

import asyncio
import logging

import aiohttp
import pytest

from spiderduck.cli.logs import log_settings
from spiderduck.cli.nats_server import free_port
from spiderduck.cli.roles import run_metadata_api_and_web, run_roles
from spiderduck.core import config
from spiderduck.core.errors import ConfigError
from support.service import Client, RunningService, service_settings, wait_port

TOKEN = "f1le-admin-s3cret"


async def test_the_files_token_opens_the_admin_actions_and_is_shown_nowhere(tmp_path, nats_server, caplog):
    secret = tmp_path / "admin.token"
    secret.write_text(f"{TOKEN}\n")                  # a Secret's file ends with a line end or not
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, nats_server.url, **{
        "web.listen": listen, "web.admin_token_file": str(secret)})
    assert settings.web.admin_token == "" and TOKEN not in repr(settings)
    form = {"u": "http://filed.test/a"}
    with caplog.at_level(logging.DEBUG):
        log_settings(settings, "metadata-api")          # the effective config, as the command logs it
        async with RunningService(settings), Client(settings) as client, aiohttp.ClientSession() as http:
            await wait_port(listen)
            for header in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Bearer {TOKEN}x"}):
                async with http.post(f"http://{listen}/admin/submit", data=form, headers=header) as response:
                    assert response.status == 401 and TOKEN not in await response.text()
            async with http.post(f"http://{listen}/admin/submit", data=form,
                                 headers={"Authorization": f"Bearer {TOKEN}"}) as response:
                assert response.status == 200 and (await response.json())["ok"]
            [event] = await client.events.wait_for(1, timeout=30)
            assert event["url"] == "http://filed.test/a" and event["source"] == "web"
            for page in ("/", "/url?u=http://never.test/"):
                async with http.get(f"http://{listen}{page}") as response:
                    text = await response.text()
                    assert TOKEN not in text and "admin actions are off" not in text
    assert f'"admin_token_file": "{secret}"' in caplog.text         # named by its path, never read
    assert TOKEN not in caplog.text


def test_the_token_and_its_file_both_set_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="web.admin_token and web.admin_token_file: set one") as refused:
        config.load(env={}, overrides={"web.admin_token": TOKEN, "web.admin_token_file": str(tmp_path / "t")})
    assert TOKEN not in str(refused.value)


@pytest.mark.parametrize("content, said", [
    (None, "no such file"), ("", "the file is empty"), (" \n", "holds no token"),
])   # each way read_secret_file refuses a file: tests/core/test_secrets.py
async def test_an_unusable_token_file_stops_the_web_ui_at_start(tmp_path, content, said):
    secret = tmp_path / "admin.token"
    if content is not None:
        secret.write_text(content)
    settings = service_settings(tmp_path, "", **{"web.listen": f"127.0.0.1:{free_port()}",
                                                 "web.admin_token_file": str(secret)})
    with pytest.raises(ConfigError, match=said) as refused:
        await asyncio.wait_for(run_roles(settings, [run_metadata_api_and_web], asyncio.Event()), 30)
    assert str(secret) in str(refused.value) and TOKEN not in str(refused.value)
