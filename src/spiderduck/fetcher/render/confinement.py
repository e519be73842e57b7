"""Where the browser runs (issue 38): in a network namespace of its own with nothing in it, as a
user that is not root, with Chromium's sandbox on: each where the platform allows it.

    jail = await confinement.plan(settings.isolation, settings.run_as)   # probed once per process
    Popen(jail.command([chromium, ...]))        # the jail entered by jail_exec, then exec
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

The probe runs the three steps in a fresh process (jail_exec.py: not a fork of the fetcher, whose
gRPC threads a fork carries, which unshare(CLONE_NEWUSER) refuses) and reads back what each one
gave; the browser is then started through jail_exec, which takes the steps the probe found allowed
and execs Chromium."""
from __future__ import annotations

import asyncio
import json
import logging
import os
import pwd
import subprocess
import sys
from dataclasses import dataclass

from spiderduck.core.errors import ConfigError

log = logging.getLogger("spiderduck.fetcher.render")

JAIL_EXEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jail_exec.py")
PROBE_TIMEOUT = 30.0       # seconds for the probe's process to answer
PARTS = {"network": "a network namespace of its own",
         "user": "a user other than root",
         "sandbox": "Chromium's sandbox"}
_plans: dict[tuple[str, str], "Jail"] = {}


@dataclass(frozen=True)
class Jail:
    network: bool = False               # the browser gets a network namespace of its own
    user: tuple[int, int] | None = None  # (uid, gid) the browser drops to (the fetcher is root)
    sandbox: bool = False               # Chromium's sandbox on (no --no-sandbox)
    refused: tuple[tuple[str, str], ...] = ()   # (part, why) the platform refused

    def command(self, argv: list[str]) -> list[str]:
        """`argv` run inside this jail: through jail_exec (a fresh process) when it has a part to
        enter, else as it is."""
        if not (self.network or self.user):
            return argv
        user = "-" if self.user is None else f"{self.user[0]}:{self.user[1]}"
        return [sys.executable, "-I", "-S", JAIL_EXEC, "enter", "1" if self.network else "0", user, "--", *argv]


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
    """Each part tried by jail_exec in a fresh process (see there why not in a fork of this one):
    part -> "ok" or why the platform refused it."""
    if not sys.platform.startswith("linux"):
        return dict.fromkeys(PARTS, f"not on {sys.platform}")
    try:
        done = subprocess.run([sys.executable, "-I", "-S", JAIL_EXEC, "probe",
                               "-" if user is None else f"{user[0]}:{user[1]}"],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT, check=False)
        found = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return dict.fromkeys(PARTS, f"the probe did not run: {exc}")
    if not isinstance(found, dict) or set(found) != set(PARTS):
        return dict.fromkeys(PARTS, "the probe said nothing")
    return {part: str(found[part]) for part in PARTS}
