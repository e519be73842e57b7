"""Jars of a test backend (a JVM server the tests start), fetched once from Maven Central.

Each backend has a pom under tests/backends/NAME/ naming its jars. `resolve(NAME, VERSION)`
runs `mvn dependency:copy-dependencies` once into .backends/NAME-VERSION/lib (outside git,
see .gitignore) and returns that folder; later calls, and other processes waiting on the
lock meanwhile, find it there. `BackendUnavailable` says what is missing and how to get it.
"""
from __future__ import annotations

import fcntl
import pathlib
import re
import shutil
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
BACKENDS = ROOT / "tests" / "backends"
CACHE = ROOT / ".backends"


class BackendUnavailable(Exception):
    """The backend cannot run here; the message says what is missing and how to get it."""


def pom_property(backend: str, name: str) -> str:
    """A `<properties>` value of tests/backends/BACKEND/pom.xml, e.g. its version."""
    pom = BACKENDS / backend / "pom.xml"
    match = re.search(rf"<{re.escape(name)}>([^<]+)</{re.escape(name)}>", pom.read_text("utf-8"))
    assert match, f"{pom} names no {name}"
    return match.group(1).strip()


def resolve(backend: str, version: str, *, expect: str, timeout: float = 1800.0) -> pathlib.Path:
    """The folder of BACKEND's jars; Maven downloads them on the first call only.

    `expect` is a glob that must match a jar of the result (the main artifact), so a run of
    Maven that exits 0 without copying it is still a failure.
    """
    lib = CACHE / f"{backend}-{version}" / "lib"
    if lib.is_dir():
        return lib
    if not shutil.which("mvn"):
        raise BackendUnavailable(
            f"mvn not found: {backend}'s jars are fetched from Maven Central with Maven "
            "(apt-get install maven)")
    lib.parent.mkdir(parents=True, exist_ok=True)
    with open(lib.parent / "resolve.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)              # one download at a time; others reuse it
        if lib.is_dir():
            return lib
        partial = lib.with_name("lib.partial")
        shutil.rmtree(partial, ignore_errors=True)
        command = ["mvn", "-q", "-B", "-f", str(BACKENDS / backend / "pom.xml"),
                   "dependency:copy-dependencies", "-DincludeScope=runtime",
                   f"-DoutputDirectory={partial}"]
        try:
            done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise BackendUnavailable(f"{' '.join(command)} took over {timeout:g}s") from None
        if done.returncode != 0 or not any(partial.glob(expect)):
            tail = (done.stdout + done.stderr).strip()[-2000:]
            raise BackendUnavailable(f"resolving {backend} {version} with Maven failed "
                                     f"(exit {done.returncode}; needs Maven Central): {tail}")
        partial.rename(lib)
    return lib


def start_or_skip(name: str, start):
    """`start()`'s server, or the calling test skipped (saying why) where `name` cannot run
    here: for a module's own server, with settings the shared one has not (TLS, passwords)."""
    try:
        return start()
    except BackendUnavailable as missing:
        import pytest
        pytest.skip(f"{name} unavailable: {missing}")


def log_tail(path: pathlib.Path, chars: int = 3000) -> str:
    """The end of a server's log file, for a failure message ("" when there is none)."""
    try:
        return path.read_text("utf-8", errors="replace")[-chars:]
    except OSError:
        return ""


class JvmServer:
    """A JVM server of the tests in its own temporary folder: `proc` and `dir` are set by the
    subclass's start()."""

    proc: subprocess.Popen | None = None
    dir: pathlib.Path | None = None

    def stop(self, *, keep: bool = False, graceful: float = 0.0) -> None:
        """End it and remove its folder unless `keep`. By default it is killed (its data is
        throwaway); with `graceful` seconds it is sent SIGTERM first (the JVM runs its shutdown
        hooks) and killed only if still running after that long."""
        if self.proc is not None:
            if self.proc.poll() is None and graceful > 0:
                self.proc.terminate()
                try:
                    self.proc.wait(graceful)
                except subprocess.TimeoutExpired:
                    pass
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(30)
            self.proc = None
        if self.dir is not None and not keep:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
