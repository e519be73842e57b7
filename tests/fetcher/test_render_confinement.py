"""src/spiderduck/fetcher/render/confinement.py against real Chromium (issue 38): while a page
renders, every process of the browser is in a network namespace other than ours with no interface
but `lo`, down (a connection to the test's own site fails from there, and succeeds from ours), the
browser runs as a user other than root with Chromium's sandbox on (its renderers under seccomp-bpf
in user namespaces of their own), and the page still renders through the fetcher's interception.
Where the platform refuses namespaces (a user namespace whose namespace limits are 0: a real
refusal by the kernel, not a test hook), `render.isolation: required` does not start the renderer
and says why, and `auto` renders without them after one WARNING. A fetcher that is not root (uid
65534 in a user namespace) gets the same jail by its own user namespace."""
from __future__ import annotations

import asyncio
import ctypes
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import textwrap
import threading

import pytest

from spiderduck.core.settings import RenderSettings
from spiderduck.fetcher.render import Renderer
from spiderduck.fetcher.render.browser import group_members, strays
from support.browser import CHROMIUM
from support.render_sites import ORIGIN_HOST, USER_AGENT, fetch, site  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.skipif(not CHROMIUM, reason="Debian's chromium is not installed "
                                                       "(bin/test installs it)")]

CLONE_NEWNET = 0x40000000
ROOT = os.geteuid() == 0


def status(pid: int) -> dict[str, str]:
    lines = pathlib.Path(f"/proc/{pid}/status").read_text().splitlines()
    return {key: value.strip() for key, _, value in (line.partition(":") for line in lines)}


def namespace(pid: int | str, kind: str) -> str:
    return os.readlink(f"/proc/{pid}/ns/{kind}")


def proc_net(pid: int, name: str) -> list[str]:
    return pathlib.Path(f"/proc/{pid}/net", name).read_text().splitlines()


def connect_from(pid: int | str, host: str, port: int) -> str:
    """A TCP connection to host:port made from `pid`'s network namespace (a thread of its own
    enters it, then ends): "connected", or why not."""
    found = []

    def attempt() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
        try:
            if libc.setns(fd, CLONE_NEWNET) != 0:
                found.append(f"setns: {os.strerror(ctypes.get_errno())}")
                return
        finally:
            os.close(fd)
        try:
            socket.create_connection((host, port), timeout=2).close()
            found.append("connected")
        except OSError as exc:
            found.append(exc.strerror or repr(exc))

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join(10)
    return found[0] if found else "no answer"


async def test_while_a_page_renders_the_browser_has_no_network_and_a_sandbox(fetch, site):
    """A page waiting on /slow.js: every process of the browser in a network namespace not ours;
    the browser's has `lo` only, down (no address, no route), and a connection from it to the
    site fails (from ours it connects); the browser runs as a user other than root, without
    --no-sandbox, its renderers under seccomp-bpf (Seccomp: 2, NoNewPrivs) in user namespaces
    other than the browser's; the page renders through the fetcher (its /slow.js fetched) and
    closing leaves no process."""
    async with Renderer(RenderSettings(enabled=True, timeout=5.0), fetch[0], user_agent=USER_AGENT) as running:
        task = await site.slow_render_in_flight(running)
        browser = running._browser
        pids = set(group_members(browser.pid)) | set(strays(browser.profile))
        networks = {pid: namespace(pid, "net") for pid in pids}
        users = {pid: namespace(pid, "user") for pid in pids}
        statuses = {pid: status(pid) for pid in pids}
        cmdlines = {pid: pathlib.Path(f"/proc/{pid}/cmdline").read_bytes() for pid in pids}  # retitled: one string
        interfaces = [line.split(":")[0].strip() for line in proc_net(browser.pid, "dev")[2:]]
        routes = proc_net(browser.pid, "route")[1:]           # IPv4 (IPv6's holds reject entries only)
        locals_ = [line for line in proc_net(browser.pid, "fib_trie") if "LOCAL" in line]
        addresses = proc_net(browser.pid, "if_inet6")
        rendered = await task
        port = site.origin_port
        from_browser = connect_from(browser.pid, ORIGIN_HOST, port) if ROOT else "not root: not tried"
        from_ours = connect_from("self", ORIGIN_HOST, port) if ROOT else "connected"
        pid, profile = browser.pid, browser.profile

    assert rendered.outcome == "ok" and "<title>slow done</title>" in rendered.html, rendered
    assert rendered.requests >= 1 and site.hits["/slow.js"] >= 1
    ours = namespace("self", "net")
    assert len(pids) > 2 and ours not in networks.values(), networks
    assert (interfaces, routes, locals_, addresses) == (["lo"], [], [], [])
    assert from_ours == "connected" and from_browser != "connected", from_browser
    assert int(statuses[pid]["Uid"].split()[0]) != 0
    assert b"--remote-debugging-pipe" in cmdlines[pid] and b"--no-sandbox" not in cmdlines[pid]
    renderers = [p for p, args in cmdlines.items() if b"--type=renderer" in args]
    assert renderers
    for p in renderers:
        assert (statuses[p]["Seccomp"], statuses[p]["NoNewPrivs"]) == ("2", "1"), p
        assert users[p] != users[pid]
    assert group_members(pid) == [] and strays(profile) == [] and not pathlib.Path(profile).exists()


# Run by the tests below in a process of its own (under util-linux `unshare`): `required` tried
# first, then two renders (two browsers) under render.isolation argv[1]; prints what it found.
RENDER_TWICE = """
import asyncio, json, logging, os, sys
from spiderduck.core.errors import ConfigError
from spiderduck.core.settings import RenderSettings
from spiderduck.fetcher.render import Renderer

warnings = []
class Keep(logging.Handler):
    def emit(self, record):
        warnings.append(record.getMessage())
logging.getLogger("spiderduck.fetcher.render").addHandler(Keep(logging.WARNING))

async def refuse(url):
    raise AssertionError("the page asks for nothing")

async def render(running):
    page = b"<!doctype html><title>static</title><script>document.title = 'ran'</script>"
    rendered = await running.render("http://example.test/", page, [("Content-Type", "text/html")])
    pid = running._browser.pid
    own_network = os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
    sandbox = b"--no-sandbox" not in open(f"/proc/{pid}/cmdline", "rb").read()
    return [rendered.outcome, "<title>ran</title>" in rendered.html, own_network, sandbox]

async def main():
    found = {"euid": os.geteuid()}
    try:
        async with Renderer(RenderSettings(enabled=True, isolation="required"), refuse, user_agent="t"):
            found["required"] = "started"
    except ConfigError as exc:
        found["required"] = str(exc)
    settings = RenderSettings(enabled=True, timeout=5.0, max_pages_per_browser=1, isolation=sys.argv[1])
    async with Renderer(settings, refuse, user_agent="t") as running:
        found["renders"] = [await render(running) for _ in range(2)]
    found["warnings"] = warnings
    print(json.dumps(found))

asyncio.run(main())
"""


def unshare_works() -> bool:
    tool = shutil.which("unshare")
    return bool(tool) and subprocess.run([tool, "-U", "-r", "true"], capture_output=True).returncode == 0


async def render_twice_under(unshare: list[str], isolation: str, prepare: str = "") -> dict:
    """RENDER_TWICE run by this Python under `unshare [unshare...]`, after the shell `prepare`."""
    script = f"{prepare}exec \"$0\" -c \"$1\" \"$2\""
    done = await asyncio.to_thread(
        subprocess.run, ["unshare", *unshare, "sh", "-c", script, sys.executable,
                         textwrap.dedent(RENDER_TWICE), isolation],
        capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not unshare_works(), reason="util-linux unshare -U -r is refused here")
async def test_where_the_platform_refuses_namespaces_required_fails_closed_and_auto_warns_once():
    """Inside a user namespace whose max_user_namespaces and max_net_namespaces are 0, the kernel
    refuses every namespace: `required` raises ConfigError naming the network namespace and the
    sandbox with the kernel's reason; `auto` renders (two browsers: max_pages_per_browser 1), in
    our network with --no-sandbox, after exactly one WARNING."""
    found = await render_twice_under(
        ["-U", "-r", "--fork"], "auto",
        prepare="echo 0 > /proc/sys/user/max_user_namespaces && echo 0 > /proc/sys/user/max_net_namespaces && ")
    required = found["required"]
    assert required != "started"
    assert "render.isolation is required" in required and "network namespace" in required, required
    assert "No space left on device" in required and "sandbox" in required, required
    assert found["renders"] == [["ok", True, False, False]] * 2
    assert len(found["warnings"]) == 1 and "without a network namespace" in found["warnings"][0]


@pytest.mark.skipif(not unshare_works(), reason="util-linux unshare -U -r is refused here")
async def test_a_fetcher_not_root_jails_the_browser_too():
    """A fetcher running as uid 65534 (in a user namespace: the path a non-root fetcher takes,
    CLONE_NEWUSER|CLONE_NEWNET with its user mapped to itself): `required` starts, and each
    render is in a network namespace not the fetcher's, without --no-sandbox; no WARNING."""
    found = await render_twice_under(["--map-user=65534", "--map-group=65534"], "required")
    assert (found["euid"], found["required"]) == (65534, "started")
    assert found["renders"] == [["ok", True, True, True]] * 2
    assert found["warnings"] == []


@pytest.mark.skipif(not unshare_works(), reason="util-linux unshare -U -r is refused here")
async def test_a_fetcher_running_grpc_still_gets_the_sandbox():
    """A fork of a process running gRPC holds gRPC's threads, and the kernel refuses
    unshare(CLONE_NEWUSER) to a process with more than one: the jail is probed and entered in a
    fresh process, so the fetcher's own gRPC server (as in `up`) costs the browser nothing."""
    import grpc.aio

    from spiderduck.fetcher.render import confinement
    server = grpc.aio.server()
    server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        found = await asyncio.to_thread(confinement._probe, (65534, 65534) if ROOT else None)
    finally:
        await server.stop(None)
    assert found["network"] == "ok" and found["sandbox"] == "ok", found
