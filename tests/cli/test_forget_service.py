"""`spiderduck forget` against a real service (issue 39): the fetcher, scheduler and metadata-api
roles on a real nats-server, a page crawled from a local web. forget prints what it removed and the
URL is gone; --list shows it with its reason; --undo takes it off; a non-admin token is refused in
one line, exit 1; the admin token, read from a file or the environment, is never in the command's
arguments nor in what it prints."""
from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import subprocess
from types import SimpleNamespace

import pytest
import pytest_asyncio

from spiderduck.cli.nats_server import EmbeddedNats
from support.cli import CLI
from support.localweb import LocalWeb
from support.service import Client, RunningService, service_settings, wait_until

ORDINARY, ADMIN = "tok-frontend-s3cret", "tok-oncall-s3cret"

# One service for the module (starting and stopping it per test cost a second or two each);
# each test crawls a page of its own (on a site of its own), so what one forgets no other looks at.
pytestmark = pytest.mark.asyncio(loop_scope="module")
_sites = itertools.count(1)


async def forget_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str, list[str]]:
    """Run `spiderduck forget ARGS`: exit code, stdout, stderr and the argv it ran with."""
    argv = [*CLI, "forget", *args]
    proc = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                env={**os.environ, **(env or {})})
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode(), argv


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("forget-service")


@pytest.fixture(scope="module")
def module_nats(folder):
    with EmbeddedNats(str(folder / "nats")) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_web():
    web = await LocalWeb().start()
    yield web
    await web.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def running(folder, module_nats):
    (folder / "admins").write_text(f"oncall:{ADMIN}\n")
    (folder / "admin.token").write_text(ADMIN + "\n")
    (folder / "frontend.token").write_text(ORDINARY + "\n")
    settings = service_settings(folder, module_nats.url, **{
        "metadata_api.admin_tokens_file": str(folder / "admins"),
        # A forget's wait for every scheduler to see the list (2 s by default) guards a crawl
        # in flight; here each page's crawl has ended (its event came) before any forget, and
        # nothing is submitted after one. The wait itself: tests/metadata_api/test_forget_requests.py.
        "metadata_api.forget_wait": 0,
        "process.workers": 1})               # one extraction worker process is enough here
    async with RunningService(settings), Client(settings) as client:
        yield settings, client


@pytest_asyncio.fixture(loop_scope="module")
async def service(folder, running, module_web):
    """The module's service, and a page of this test's own on it, crawled."""
    settings, client = running
    page = module_web.page(f"gone{next(_sites)}.test", "/post", "<title>A person's address</title>")
    await client.submit_url(page)

    async def crawled() -> bool:
        return bool(client.events.for_url(page))
    await wait_until(crawled, 60, f"the event of {page}")
    return SimpleNamespace(settings=settings, page=page, client=client, dir=folder,
                           listen=("--set", f"metadata_api.listen={settings.metadata_api.listen}"))


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
