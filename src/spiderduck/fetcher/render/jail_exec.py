"""The browser's jail, entered in a fresh process (spiderduck.fetcher.render.confinement runs it):

    python -I -S jail_exec.py probe UID:GID|-                 -> prints {part: "ok" or why}
    python -I -S jail_exec.py enter NETWORK UID:GID|- -- ARGV  -> the jail entered, then exec ARGV

Run by its path with only the standard library (-I -S: no site, no environment), never as a fork
of the fetcher that goes on in Python: a fork of a process that runs gRPC holds threads of its
own (gRPC's fork handlers start them in the child), and the kernel refuses unshare(CLONE_NEWUSER)
to a process with more than one thread (EINVAL). Here there is one.

The parts: `network` (root: unshare(CLONE_NEWNET); another user: CLONE_NEWUSER|CLONE_NEWNET with
the user mapped to itself), `user` (setgroups([]), setgid, setuid to UID:GID), and, for the probe,
`sandbox`: what Chromium's sandbox does as the browser's user, unshare(CLONE_NEWUSER|CLONE_NEWPID|
CLONE_NEWNET). `enter` sets PR_SET_PDEATHSIG=SIGKILL again after the change of user (which clears
it), so the browser still dies with the fetcher.
"""
from __future__ import annotations

import ctypes
import json
import os
import signal
import sys

CLONE_NEWNET, CLONE_NEWPID, CLONE_NEWUSER = 0x40000000, 0x20000000, 0x10000000
PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def _unshare(flags: int, what: str) -> None:
    if _libc.unshare(flags) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"unshare({what}): {os.strerror(errno)}")


def own_network() -> None:
    """This process into a new, empty network namespace (a user namespace too when not root)."""
    if os.geteuid() == 0:
        _unshare(CLONE_NEWNET, "CLONE_NEWNET")
        return
    uid, gid = os.geteuid(), os.getegid()
    _unshare(CLONE_NEWUSER | CLONE_NEWNET, "CLONE_NEWUSER|CLONE_NEWNET")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)


def become(uid: int, gid: int) -> None:
    try:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    except OSError as exc:
        raise OSError(exc.errno, f"setuid({uid}): {exc.strerror}") from None


def sandbox_namespaces() -> None:
    _unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET, "CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET")


def probe(user: tuple[int, int] | None) -> dict[str, str]:
    """Each part tried in order (the sandbox as the browser's user): part -> "ok" or why not."""
    found = {}
    for part, step in (("network", own_network),
                       ("user", lambda: become(*user) if user else None),
                       ("sandbox", sandbox_namespaces)):
        if part == "sandbox" and os.geteuid() == 0:
            found[part] = "the browser would run as root"
            continue
        try:
            step()
            found[part] = "ok"
        except OSError as exc:
            found[part] = exc.strerror or str(exc)
    return found


def _user(text: str) -> tuple[int, int] | None:
    if text == "-":
        return None
    uid, _, gid = text.partition(":")
    return int(uid), int(gid)


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "probe":
        print(json.dumps(probe(_user(argv[2]))))
        return 0
    if len(argv) > 5 and argv[1] == "enter" and argv[4] == "--":
        user = _user(argv[3])
        try:
            if argv[2] == "1":
                own_network()
            if user is not None:
                become(*user)
        except OSError as exc:
            print(f"spiderduck: the browser's jail was refused: {exc}", file=sys.stderr)
            return 126
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        os.execv(argv[5], argv[5:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
