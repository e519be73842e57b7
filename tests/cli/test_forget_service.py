"""`spiderduck forget` against a real service (issue 39): the fetcher, scheduler and metadata-api
roles on a real nats-server, a page crawled from a local web. forget prints what it removed and the
URL is gone; --list shows it with its reason; --undo takes it off; a non-admin token is refused in
one line, exit 1; the admin token, read from a file or the environment, is never in the command's
arguments nor in what it prints."""
from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess

import pytest

from support.cli import CLI
from support.service import Client, RunningService, service_settings

ORDINARY, ADMIN = "tok-frontend-s3cret", "tok-oncall-s3cret"


async def forget_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str, list[str]]:
    """Run `spiderduck forget ARGS`: exit code, stdout, stderr and the argv it ran with."""
    argv = [*CLI, "forget", *args]
    proc = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                env={**os.environ, **(env or {})})
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode(), argv


@pytest.fixture
async def service(tmp_path, nats_server, localweb):
    (tmp_path / "admins").write_text(f"oncall:{ADMIN}\n")
    (tmp_path / "admin.token").write_text(ADMIN + "\n")
    (tmp_path / "frontend.token").write_text(ORDINARY + "\n")
    settings = service_settings(tmp_path, nats_server.url, **{
        "metadata_api.admin_tokens_file": str(tmp_path / "admins")})
    page = localweb.page("gone.test", "/post", "<title>A person's address</title>")
    async with RunningService(settings), Client(settings) as client:
        await client.submit_url(page)
        await client.events.wait_for(1, timeout=60)
        yield type("Service", (), {"settings": settings, "page": page, "client": client, "dir": tmp_path,
                                   "listen": ("--set", f"metadata_api.listen={settings.metadata_api.listen}")})


async def test_forget_list_and_undo_as_an_admin(service):
    [record] = await service.client.get([service.page])
    assert record and record["title"].startswith("A person")
    code, out, err, argv = await forget_cli(service.page, "--reason", "GDPR art. 17 request 1234",
                                            "--token-file", str(service.dir / "admin.token"), *service.listen)
    assert code == 0, err
    assert out.startswith(f"forgot {service.page}: ")
    assert re.fullmatch(r"forgot \S+: removed 1 record, [1-9][0-9]* content-log records?, 1 event; "
                        r"on the denylist until `spiderduck forget --undo`\n", out), out
    assert await service.client.get([service.page]) == [None]       # gone: never seen
    code, out, err, argv = await forget_cli(service.page, "--reason", "GDPR art. 17 request 1234", "--json",
                                            *service.listen, env={"SPIDERDUCK_ADMIN_TOKEN": ADMIN})
    assert code == 0, err                                             # a repeat removes nothing more
    assert json.loads(out) == {"urls": [service.page], "domain": "", "records": 0, "content_records": 0,
                               "events": 0}

    code, out, err, argv = await forget_cli("--list", *service.listen, env={"SPIDERDUCK_ADMIN_TOKEN": ADMIN})
    assert code == 0, err
    head, *rows = out.splitlines()
    assert head.split() == ["FORGOTTEN", "REASON", "BY", "WHEN"]
    [row] = [r for r in rows if r.startswith(service.page)]
    assert "GDPR art. 17 request 1234" in row and "oncall" in row
    code, out, err, argv = await forget_cli("--list", "--json", *service.listen, env={"SPIDERDUCK_ADMIN_TOKEN": ADMIN})
    entries = [json.loads(line) for line in out.splitlines()]
    assert {"url": service.page, "reason": "GDPR art. 17 request 1234", "by": "oncall"}.items() <= entries[0].items()

    code, out, err, argv = await forget_cli("--undo", service.page, *service.listen,
                                            env={"SPIDERDUCK_ADMIN_TOKEN": ADMIN})
    assert (code, out.strip()) == (0, "took 1 entry off the denylist"), err
    code, out, err, argv = await forget_cli("--list", "--json", *service.listen, env={"SPIDERDUCK_ADMIN_TOKEN": ADMIN})
    assert service.page not in out
    code, out, err, argv = await forget_cli("--undo", service.page, *service.listen,
                                            env={"SPIDERDUCK_ADMIN_TOKEN": ADMIN})
    assert code == 1 and "not on the denylist" in err
    for text in (" ".join(argv), out, err):
        assert ADMIN not in text


async def test_a_non_admin_token_is_refused_in_one_line_and_nothing_goes(service):
    code, out, err, argv = await forget_cli(service.page, "--reason", "ticket 9",
                                            "--token-file", str(service.dir / "frontend.token"), *service.listen)
    assert (code, out) == (1, "")
    assert "refused" in err and "forgetting needs an admin" in err and len(err.strip().splitlines()) == 1
    assert ORDINARY not in err and ORDINARY not in " ".join(argv)
    code, out, err, _ = await forget_cli("--list", *service.listen, env={"SPIDERDUCK_TOKEN": ORDINARY})
    assert code == 1 and "forgetting needs an admin" in err
    [record] = await service.client.get([service.page])
    assert record is not None                                         # still there


async def test_a_forget_without_a_reason_asks_nothing_and_removes_nothing(service):
    code, out, err, _ = await forget_cli(service.page, *service.listen, env={"SPIDERDUCK_ADMIN_TOKEN": ADMIN})
    assert (code, out) == (2, "") and "needs --reason" in err
    [record] = await service.client.get([service.page])
    assert record is not None
