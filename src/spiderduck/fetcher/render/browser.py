"""One headless Chromium of ours: launched locked down, reached over CDP, killed whole on close.

The browser runs in a session (and process group) of its own, with PR_SET_PDEATHSIG=SIGKILL so
it dies with the fetcher, a temporary profile (removed on close) and a proxy that does not exist
(127.0.0.1:9, loopback included): whatever request the renderer does not intercept and answer
itself (a WebSocket, anything escaping interception) fails there. Closing kills the process group,
then any process left naming the profile (a helper that started a session of its own), and reaps
the browser."""
from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from spiderduck.core.errors import ConfigError, SpiderDuckError
from spiderduck.fetcher.render.cdp import CdpConnection

LAUNCH_TIMEOUT = 15.0       # seconds for the browser to open its DevTools port
DEAD_PROXY = "http://127.0.0.1:9"
_PR_SET_PDEATHSIG = 1


class BrowserFailed(SpiderDuckError):
    """Chromium could not be started or reached."""
    retryable = True


def executable(configured: str) -> str:
    """`render.chromium`, or `chromium` on PATH."""
    found = shutil.which(configured or "chromium")
    if not found:
        raise ConfigError(f"render.chromium: {configured or 'chromium'!r} is not an executable "
                          "(install Debian's chromium or name the browser)")
    return found


def flags(profile: str, max_memory_mb: int) -> list[str]:
    return [
        "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
        "--disable-sync", "--mute-audio", "--disable-dev-shm-usage",
        "--disable-crash-reporter", "--disable-breakpad",
        "--disable-component-update", "--disable-domain-reliability", "--disable-default-apps",
        "--disable-features=DnsPrefetch,NetworkPrediction,ServiceWorker,MediaRouter,"
        "OptimizationHints,Translate,InterestFeedContentSuggestions",
        "--dns-prefetch-disable", "--no-pings", "--disable-notifications",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        f"--proxy-server={DEAD_PROXY}", "--proxy-bypass-list=<-loopback>",
        f"--js-flags=--max-old-space-size={max_memory_mb}",
        f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank",
    ]


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the fetcher dies (Linux)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class Browser:
    """Started by `launch`; `cdp` is its browser-level connection."""

    def __init__(self, process: subprocess.Popen, profile: str, cdp: CdpConnection):
        self.process = process
        self.profile = profile
        self.cdp = cdp
        self.pages = 0          # renders started on it
        self.active = 0         # renders running on it
        self.retired = False    # no new render: closed when the last one ends

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process.poll() is None and not self.cdp.closed

    @classmethod
    async def launch(cls, chromium: str, max_memory_mb: int) -> "Browser":
        profile = tempfile.mkdtemp(prefix="spiderduck-render-")
        env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(profile, "config"),
                   XDG_CACHE_HOME=os.path.join(profile, "cache"), HOME=profile)
        try:
            with open(os.path.join(profile, "chromium.log"), "wb") as log:
                process = subprocess.Popen(
                    [chromium, *flags(profile, max_memory_mb)], stdin=subprocess.DEVNULL,
                    stdout=log, stderr=log, env=env, start_new_session=True,
                    preexec_fn=_die_with_parent, close_fds=True)
        except OSError as exc:
            shutil.rmtree(profile, ignore_errors=True)
            raise BrowserFailed(f"cannot start {chromium}: {exc}") from exc
        try:
            url = await _devtools_url(process, profile)
            cdp = await CdpConnection.connect(url, timeout=LAUNCH_TIMEOUT)
        except BaseException:
            await kill(process, profile)
            raise
        return cls(process, profile, cdp)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.cdp.close(), 2.0)
        await kill(self.process, self.profile)


async def _devtools_url(process: subprocess.Popen, profile: str) -> str:
    """ws://127.0.0.1:<port><path>, from <profile>/DevToolsActivePort once the browser wrote it."""
    port_file = pathlib.Path(profile, "DevToolsActivePort")
    deadline = time.monotonic() + LAUNCH_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BrowserFailed(f"chromium exited with {process.returncode} at start: {_log_tail(profile)}")
        with contextlib.suppress(OSError):
            lines = port_file.read_text().split()
            if len(lines) >= 2:
                return f"ws://127.0.0.1:{int(lines[0])}{lines[1]}"
        await asyncio.sleep(0.02)
    raise BrowserFailed(f"chromium opened no DevTools port within {LAUNCH_TIMEOUT:g}s: {_log_tail(profile)}")


def _log_tail(profile: str) -> str:
    with contextlib.suppress(OSError):
        return pathlib.Path(profile, "chromium.log").read_text(errors="replace")[-500:].strip()
    return ""


async def kill(process: subprocess.Popen, profile: str) -> None:
    """SIGKILL the browser's process group and whatever else names the profile; reap; remove it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    for pid in strays(profile):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        await asyncio.to_thread(process.wait, 5.0)
    await asyncio.to_thread(shutil.rmtree, profile, True)


def strays(profile: str) -> list[int]:
    """Processes whose command line or environment names the profile (Linux /proc)."""
    found = []
    needle = profile.encode()
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if needle in (entry / "cmdline").read_bytes() or needle in (entry / "environ").read_bytes():
                found.append(int(entry.name))
    return found


def group_members(pgid: int) -> list[int]:
    """Live processes of the process group `pgid` (zombies excluded)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry.name))
    return found
