"""One headless Chromium of ours: launched locked down, driven over CDP, killed whole on close.

CDP runs over a pair of pipes (`--remote-debugging-pipe`: the browser's fd 3 and 4), never a
DevTools port: no other local process can reach the browser. WebRTC is off (see `flags`). Where
the platform allows, the browser has a network namespace of its own, runs as a user other than
root and with Chromium's sandbox on (`confinement.Jail`, entered by jail_exec before Chromium).

The browser runs in a session (and process group) of its own, with PR_SET_PDEATHSIG=SIGKILL so
it dies with the fetcher, a temporary profile (removed on close) and a proxy that does not exist
(127.0.0.1:9, loopback included): whatever request the renderer does not intercept and answer
itself (a WebSocket, anything escaping interception) fails there. Closing kills the process group,
then any process left naming the profile (a helper that started a session of its own), waits for
them to exit, and reaps the browser."""
from __future__ import annotations

import asyncio
import contextlib
import ctypes
import fcntl
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile

from spiderduck.core.errors import ConfigError, SpiderDuckError
from spiderduck.fetcher.render.cdp import CdpConnection, CdpError
from spiderduck.fetcher.render.confinement import Jail

LAUNCH_TIMEOUT = 15.0       # seconds for the browser to answer its first command
REAP_TIMEOUT = 5.0          # seconds for killed processes to be gone
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


def flags(profile: str, max_memory_mb: int, sandbox: bool) -> list[str]:
    """Chromium's command line; `--no-sandbox` unless `sandbox`. WebRTC: `--webrtc-ip-handling-policy` (headless Chromium's own
    switch; `--force-webrtc-ip-handling-policy` is the full browser's, ignored headless) at
    disable_non_proxied_udp with the dead proxy: no ICE candidate is gathered, no STUN packet or
    mDNS query leaves. The page's scripts cannot even reach RTCPeerConnection (page.NO_WEBRTC)."""
    return [
        "--headless=new", *([] if sandbox else ["--no-sandbox"]), "--disable-gpu", "--no-first-run",
        "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
        "--disable-sync", "--mute-audio", "--disable-dev-shm-usage",
        "--disable-crash-reporter", "--disable-breakpad",
        "--disable-component-update", "--disable-domain-reliability", "--disable-default-apps",
        "--disable-features=DnsPrefetch,NetworkPrediction,ServiceWorker,MediaRouter,"
        "OptimizationHints,Translate,InterestFeedContentSuggestions",
        "--dns-prefetch-disable", "--no-pings", "--disable-notifications",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        f"--proxy-server={DEAD_PROXY}", "--proxy-bypass-list=<-loopback>",
        f"--js-flags=--max-old-space-size={max_memory_mb}",
        f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank",
    ]


def _child_setup(commands: int, answers: int):
    """What runs in the child before exec: the pipe's ends put at fd 3 (commands, read by the
    browser) and fd 4 (answers), and SIGKILL when the fetcher dies (Linux; jail_exec sets it again
    after the jail's change of user, which clears it)."""
    def setup() -> None:
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 5) for fd in (commands, answers)]   # off 3 and 4 first
        os.dup2(high[0], 3)
        os.dup2(high[1], 4)
        if sys.platform.startswith("linux"):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    return setup


def _hold_fds_3_and_4() -> list[int]:
    """Fds 3 and 4 open here (pass_fds keeps what is at those numbers: the child's setup puts the
    pipe there): the lowest free fds taken on /dev/null until both are; their list, to close."""
    held = []
    while not all(_is_open(fd) for fd in (3, 4)):
        fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        held.append(fd)
        if fd > 4:
            break
    return held


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


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
    async def launch(cls, chromium: str, max_memory_mb: int, jail: Jail) -> "Browser":
        profile = tempfile.mkdtemp(prefix="spiderduck-render-")
        if jail.user is not None:
            os.chown(profile, *jail.user)       # the browser's user writes its profile
        env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(profile, "config"),
                   XDG_CACHE_HOME=os.path.join(profile, "cache"), HOME=profile)
        commands_in, commands_out = os.pipe()     # we write, the browser reads (its fd 3)
        answers_in, answers_out = os.pipe()       # the browser writes (its fd 4), we read
        held = _hold_fds_3_and_4()
        try:
            with open(os.path.join(profile, "chromium.log"), "wb") as log:
                process = subprocess.Popen(
                    jail.command([chromium, *flags(profile, max_memory_mb, jail.sandbox)]), stdin=subprocess.DEVNULL,
                    stdout=log, stderr=log, env=env, start_new_session=True,
                    preexec_fn=_child_setup(commands_in, answers_out), close_fds=True,
                    pass_fds=(3, 4))
        except (OSError, subprocess.SubprocessError) as exc:     # the latter: the jail refused
            for fd in (commands_out, answers_in):
                os.close(fd)
            shutil.rmtree(profile, ignore_errors=True)
            raise BrowserFailed(f"cannot start {chromium}: {exc}") from exc
        finally:
            for fd in (commands_in, answers_out, *held):
                os.close(fd)
        try:
            cdp = await CdpConnection.over_pipe(commands_out, answers_in)
        except BaseException:
            for fd in (commands_out, answers_in):
                os.close(fd)
            await kill(process, profile)
            raise
        try:
            await _first_answer(cdp, profile)
        except BaseException:
            await kill(process, profile)
            await cdp.close()
            raise
        return cls(process, profile, cdp)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.cdp.close(), 2.0)
        await kill(self.process, self.profile)


async def _first_answer(cdp: CdpConnection, profile: str) -> None:
    """The browser answers over its pipe within LAUNCH_TIMEOUT, or BrowserFailed (with its log)."""
    try:
        await cdp.send("Browser.getVersion", timeout=LAUNCH_TIMEOUT)
    except CdpError as exc:
        raise BrowserFailed(f"chromium did not start: {exc}: {_log_tail(profile)}") from exc
    except TimeoutError as exc:
        raise BrowserFailed(f"chromium did not answer within {LAUNCH_TIMEOUT:g}s: "
                            f"{_log_tail(profile)}") from exc


def _log_tail(profile: str) -> str:
    with contextlib.suppress(OSError):
        return pathlib.Path(profile, "chromium.log").read_text(errors="replace")[-500:].strip()
    return ""


async def kill(process: subprocess.Popen, profile: str) -> None:
    """SIGKILL the browser's process group and whatever else names the profile; wait until they
    have exited (a SIGKILLed process is not gone at once: under load its exit can lag); reap the
    browser; remove the profile."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    for pid in strays(profile):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    await _exited(set(group_members(process.pid)) | set(strays(profile)), REAP_TIMEOUT)
    with contextlib.suppress(subprocess.TimeoutExpired):
        await asyncio.to_thread(process.wait, REAP_TIMEOUT)
    await asyncio.to_thread(shutil.rmtree, profile, True)


async def _exited(pids: set[int], timeout: float) -> None:
    """Returns when every one of `pids` has exited (its pidfd readable), or after `timeout`."""
    loop = asyncio.get_running_loop()
    waiting: dict[int, asyncio.Future] = {}
    try:
        for pid in pids:
            try:
                fd = os.pidfd_open(pid)
            except OSError:             # gone already (or pidfds unsupported: nothing to wait on)
                continue
            done = waiting[fd] = loop.create_future()
            loop.add_reader(fd, _settle, loop, fd, done)
        if waiting:
            await asyncio.wait(waiting.values(), timeout=timeout)
    finally:
        for fd in waiting:
            loop.remove_reader(fd)
            os.close(fd)


def _settle(loop: asyncio.AbstractEventLoop, fd: int, done: asyncio.Future) -> None:
    loop.remove_reader(fd)
    if not done.done():
        done.set_result(None)


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
