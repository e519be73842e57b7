"""Where the browser runs (issue 38): in a network namespace of its own with nothing in it, as a
user that is not root, with Chromium's sandbox on: each where the platform allows it.

    jail = await confinement.plan(settings.isolation, settings.run_as)   # probed once per process
    Popen(..., preexec_fn=...jail.enter...)     # in the browser's child, before exec
    flags(..., sandbox=jail.sandbox)            # --no-sandbox only where the sandbox was refused

`render.isolation`:
    auto      each part where the platform allows it; each part it refuses is logged once per
              process at WARNING and the browser runs without it
    required  the network namespace and the sandbox, or the renderer does not start
              (a ConfigError naming what was refused and why)
    off       none: the browser in the fetcher's network, as the fetcher's user, --no-sandbox

The parts, on Linux:
    network   root: unshare(CLONE_NEWNET); another user: unshare(CLONE_NEWUSER|CLONE_NEWNET),
              the user mapped to itself. The namespace has `lo` only, and down: no address, no
              route, nothing to reach. Every request the browser makes comes over CDP (the
              fetcher makes it); CDP itself is a pipe, which needs no network.
    user      a fetcher running as root starts the browser as `render.run_as` (setgroups([]),
              setgid, setuid): Chromium will not run its sandbox as root, and a browser escape
              then holds that user's rights, not root's. Its profile is given to that user.
    sandbox   Chromium's own: each renderer in a user, PID and network namespace of its own,
              under seccomp-bpf. It needs unprivileged user namespaces (Debian's chromium has no
              setuid helper); the probe does what Chromium will do, as the browser's user:
              unshare(CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET).

The probe runs the three steps in a throwaway child (`true`) and reads back, over a pipe, what
each one gave; the browser's own child then takes the steps the probe found allowed."""
from __future__ import annotations

import asyncio
import ctypes
import json
import logging
import os
import pwd
import shutil
import subprocess
import sys
from dataclasses import dataclass

from spiderduck.core.errors import ConfigError

log = logging.getLogger("spiderduck.fetcher.render")

CLONE_NEWNET, CLONE_NEWPID, CLONE_NEWUSER = 0x40000000, 0x20000000, 0x10000000
PARTS = {"network": "a network namespace of its own",
         "user": "a user other than root",
         "sandbox": "Chromium's sandbox"}
_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
_plans: dict[tuple[str, str], "Jail"] = {}


@dataclass(frozen=True)
class Jail:
    network: bool = False               # the browser gets a network namespace of its own
    user: tuple[int, int] | None = None  # (uid, gid) the browser drops to (the fetcher is root)
    sandbox: bool = False               # Chromium's sandbox on (no --no-sandbox)
    refused: tuple[tuple[str, str], ...] = ()   # (part, why) the platform refused

    def enter(self) -> None:
        """In the browser's child, before exec: its own network, then its own user."""
        if self.network:
            _own_network()
        if self.user is not None:
            _become(*self.user)


async def plan(isolation: str, run_as: str) -> Jail:
    """The jail the browser gets under `isolation` (render.isolation, checked by the settings),
    probed once per process (and what is refused logged once)."""
    key = (isolation, run_as)
    if key not in _plans:
        _plans[key] = await asyncio.to_thread(_decide, isolation, run_as)
    jail = _plans[key]
    if isolation == "required" and jail.refused:
        raise ConfigError(
            "render.isolation is required, but the platform refused "
            + "; ".join(f"{PARTS[part]} ({why})" for part, why in jail.refused)
            + ": the renderer does not start. Allow user namespaces to the fetcher (see "
              "docs/security.md), or set render.isolation: auto to render without them.")
    return jail


def _decide(isolation: str, run_as: str) -> Jail:
    if isolation == "off":
        return Jail()
    user = None
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam(run_as)
            user = (entry.pw_uid, entry.pw_gid)
        except KeyError:
            user = None
    found = _probe(user)
    if user is None and os.geteuid() == 0:
        found["user"] = f"render.run_as {run_as!r} is no user here"
    jail = Jail(network=found["network"] == "ok", user=user if found["user"] == "ok" else None,
                sandbox=found["sandbox"] == "ok",
                refused=tuple((part, why) for part, why in found.items() if why != "ok"))
    if jail.refused and isolation == "auto":
        log.warning("the rendering browser runs without %s; see docs/security.md (render.isolation: "
                    "required refuses to render so)",
                    "; without ".join(f"{PARTS[part]} ({why})" for part, why in jail.refused))
    return jail


def _probe(user: tuple[int, int] | None) -> dict[str, str]:
    """Each part tried in a throwaway child, in order (the sandbox as the browser's user):
    part -> "ok" or why the platform refused it."""
    if _libc is None:
        return dict.fromkeys(PARTS, f"not on {sys.platform}")
    report_r, report_w = os.pipe()

    def steps() -> None:
        found = {}
        for part, step in (("network", _own_network),
                           ("user", lambda: _become(*user) if user else None),
                           ("sandbox", _sandbox_namespaces)):
            if part == "sandbox" and os.geteuid() == 0:
                found[part] = "the browser would run as root"
                continue
            try:
                step()
                found[part] = "ok"
            except OSError as exc:
                found[part] = exc.strerror or str(exc)
        os.write(report_w, json.dumps(found).encode())

    try:
        subprocess.run([shutil.which("true") or "/bin/true"], preexec_fn=steps, check=False,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        os.close(report_w)
        os.close(report_r)
        return dict.fromkeys(PARTS, f"the probe did not run: {exc}")
    os.close(report_w)
    with os.fdopen(report_r, "rb") as report:
        text = report.read().decode()
    return json.loads(text) if text else dict.fromkeys(PARTS, "the probe said nothing")


def _unshare(flags: int, what: str) -> None:
    if _libc.unshare(flags) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"unshare({what}): {os.strerror(errno)}")


def _own_network() -> None:
    """This process into a new, empty network namespace (a user namespace too when not root)."""
    if os.geteuid() == 0:
        _unshare(CLONE_NEWNET, "CLONE_NEWNET")
        return
    uid, gid = os.geteuid(), os.getegid()
    _unshare(CLONE_NEWUSER | CLONE_NEWNET, "CLONE_NEWUSER|CLONE_NEWNET")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)


def _become(uid: int, gid: int) -> None:
    try:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    except OSError as exc:
        raise OSError(exc.errno, f"setuid({uid}): {exc.strerror}") from None


def _sandbox_namespaces() -> None:
    _unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET, "CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET")
