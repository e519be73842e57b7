"""src/spiderduck/fetcher/render's browser has no way out of its own (issue 38): a page's
RTCPeerConnection sends no STUN packet to a UDP canary the test holds and no mDNS announcement to
the LAN (each of the three layers alone: the browser's switch, the script run before the page's,
the browser's own network namespace; with none, the canaries do hear the page: they are not deaf),
and while a page renders no process of the browser listens on a TCP or UDP port in whatever
network namespace it is (CDP runs over a pipe). Real Chromium, real sockets, /proc."""
from __future__ import annotations

import contextlib
import pathlib
import re
import socket

import pytest

from spiderduck.core.settings import RenderSettings
from spiderduck.fetcher.render import Renderer, browser as browser_module, page as page_module
from spiderduck.fetcher.render.browser import group_members, strays
from support.browser import CHROMIUM
from support.render_sites import USER_AGENT, fetch, site  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.skipif(not CHROMIUM, reason="Debian's chromium is not installed "
                                                       "(bin/test installs it)")]

MDNS_GROUP, MDNS_PORT = "224.0.0.251", 5353

# Gathers ICE candidates from a STUN server on the test's UDP port and one under a name, in the
# page and in a blank iframe's window; /slow.js keeps the render open until the title is set.
WEBRTC_PAGE = """<!doctype html><html><head><title>webrtc</title></head><body><script>
fetch('/slow.js');
const found = [];
function gather(PC) {{
  return new Promise(done => {{
    if (!PC) {{ done(); return; }}
    const pc = new PC({{iceServers: [{{urls: 'stun:127.0.0.1:{port}'}},
                                     {{urls: 'stun:webrtc-canary.invalid:{port}'}}]}});
    pc.onicecandidate = e => {{ if (e.candidate) found.push(e.candidate.candidate); else done(); }};
    pc.createDataChannel('x');
    pc.createOffer().then(o => pc.setLocalDescription(o)).catch(done);
    setTimeout(done, 300);
  }});
}}
const frame = document.createElement('iframe'); document.body.appendChild(frame);
Promise.all([gather(window.RTCPeerConnection), gather(frame.contentWindow.RTCPeerConnection)])
  .then(() => {{ document.title = 'candidates ' + found.length; }});
</script></body></html>"""


def udp_canary() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setblocking(False)
    return sock


def mdns_canary() -> socket.socket | None:
    """A socket in the mDNS group on every interface, or None where the host has no multicast."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(("", MDNS_PORT))
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                        socket.inet_aton(MDNS_GROUP) + socket.inet_aton("0.0.0.0"))
    except OSError:
        sock.close()
        return None
    sock.setblocking(False)
    return sock


def received(sock: socket.socket | None) -> list[tuple[str, int]]:
    senders = []
    with contextlib.suppress(BlockingIOError):
        while sock is not None:
            senders.append(sock.recvfrom(4096)[1])
    return senders


@pytest.mark.parametrize("layers", ["all", "switch only", "script only", "namespace only", "none"])
async def test_a_page_webrtc_sends_no_packet_and_no_mdns(fetch, site, monkeypatch, layers):
    """STUN at a UDP port the test holds: zero packets there and zero mDNS once the render
    ended, whichever of the three layers is on; with none, both canaries hear the page (the mDNS
    one where the host has multicast). The namespace is off with render.isolation: off."""
    if layers not in ("all", "switch only"):
        full = browser_module.flags
        monkeypatch.setattr(browser_module, "flags",
                            lambda *args: [f for f in full(*args) if "webrtc" not in f])
    if layers not in ("all", "script only"):
        monkeypatch.setattr(page_module, "NO_WEBRTC", "void 0")
    isolation = "auto" if layers in ("all", "namespace only") else "off"
    stun, mdns = udp_canary(), mdns_canary()
    try:
        received(mdns)          # whatever the LAN said before
        page = WEBRTC_PAGE.format(port=stun.getsockname()[1]).encode()
        async with Renderer(RenderSettings(enabled=True, timeout=5.0, isolation=isolation), fetch[0],
                            user_agent=USER_AGENT) as running:
            rendered = await running.render(site.origin("/webrtc"), page, [("Content-Type", "text/html")])
        assert rendered.outcome == "ok", rendered
        candidates = int(re.search(r"<title>candidates (\d+)</title>", rendered.html)[1])
        packets, announced = received(stun), received(mdns)
        if layers == "none":
            assert candidates > 0 and packets, (candidates, packets)
            assert mdns is None or announced
        else:
            assert (candidates, packets, announced) == (0, [], [])
    finally:
        stun.close()
        if mdns is not None:
            mdns.close()


def listening_inodes(pid: int) -> dict[str, str]:
    """socket inode -> "tcp 127.0.0.1:port"-like, for every listening TCP socket and every bound
    UDP socket of the network namespace `pid` is in (/proc/PID/net)."""
    found = {}
    for proto in ("tcp", "tcp6", "udp", "udp6"):
        lines = []
        with contextlib.suppress(OSError):      # a process that ended meanwhile
            lines = pathlib.Path(f"/proc/{pid}/net", proto).read_text().splitlines()[1:]
        for line in lines:
            fields = line.split()
            state, inode = fields[3], fields[9]
            if (proto.startswith("tcp") and state == "0A") or proto.startswith("udp"):
                found[inode] = f"{proto} {fields[1]}"
    return found


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in pathlib.Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                link = str(fd.readlink())
                if link.startswith("socket:["):
                    inodes.add(link[len("socket:["):-1])
    return inodes


async def test_no_process_of_the_browser_listens_while_a_page_renders(fetch, site):
    """During a render waiting on /slow.js: every process of the browser (its group and whatever
    names its profile) holds no listening TCP socket and no UDP socket (in the network namespace
    each is in: the browser's own, a sandboxed renderer's); the browser was started
    with a pipe, not a port, and wrote no DevToolsActivePort."""
    async with Renderer(RenderSettings(enabled=True, timeout=5.0), fetch[0], user_agent=USER_AGENT) as running:
        task = await site.slow_render_in_flight(running)
        browser = running._browser
        pids = set(group_members(browser.pid)) | set(strays(browser.profile))
        open_ports = {}
        for pid in pids:
            listening = listening_inodes(pid)
            open_ports[pid] = [listening[i] for i in socket_inodes(pid) if i in listening]
        cmdline = pathlib.Path(f"/proc/{browser.pid}/cmdline").read_bytes().split(b"\0")
        devtools_file = pathlib.Path(browser.profile, "DevToolsActivePort").exists()
        assert (await task).outcome == "ok"
    assert len(pids) > 2 and browser.pid in pids           # browser, zygotes, renderer
    assert {pid: found for pid, found in open_ports.items() if found} == {}
    assert b"--remote-debugging-pipe" in cmdline
    assert not [arg for arg in cmdline if arg.startswith(b"--remote-debugging-port")]
    assert not devtools_file
