"""What tests/e2e/test_secret_canaries.py runs on: the secrets (each a canary), the watch on
what `ps` shows, running the real `spiderduck` command, and the checks that no canary was
printed, written or shown."""
from __future__ import annotations

import asyncio
import contextlib
import os
import pathlib
import signal
import ssl
import subprocess
import threading
import time
from dataclasses import dataclass, field

import nkeys
import pytest
import yaml

from spiderduck.cli.nats_server import free_port
from support.certs import TestCA

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPIDERDUCK = str(ROOT / ".venv" / "bin" / "spiderduck")
DEAD = "127.0.0.1:{}"          # a port nothing listens on (free_port)
FAIL_FAST = 1                  # nats_connect_timeout where no NATS is there
CONNECT_WITHIN = 15            # ... elsewhere: a refusal ends a connect at once, whatever this is


def canary(tag: str) -> str:
    return f"c4n{tag}{os.urandom(6).hex()}"


def pem_body(path: str) -> list[str]:
    """A PEM key's canaries: each base64 line of its body."""
    lines = pathlib.Path(path).read_text().splitlines()
    return [line for line in lines if line and not line.startswith("-----")]


# --- the secrets ----------------------------------------------------------------------------------

class World:
    """Every secret of the module, its files, and the configs that name them."""

    def __init__(self, root: pathlib.Path):
        self.root = root
        self.needles: dict[str, list[str]] = {}     # what it is -> its canary strings
        ca = TestCA(root / "pki")
        self.ca = ca.ca
        self.service, self.web, self.nats_client, self.nats_server = (
            ca.issue(name) for name in ("service", "web", "nats-client", "nats"))
        self.other = TestCA(root / "other", name="Other CA").issue("service")   # not service's key
        for name, issued in (("tls.key", self.service), ("web.tls_key", self.web),
                             ("nats_tls_key", self.nats_client), ("tls.key (another)", self.other)):
            self.needles[name] = pem_body(issued.key)
        self.admin_token = self.secret("web.admin_token")
        self.alice, self.bob = self.secret("tokens_file alice"), self.secret("tokens_file bob")
        self.tokens_file = self.file("tokens", f"# callers\nalice:{self.alice}\nbob:{self.bob}\n")
        self.alice_token_file = self.file("alice.token", self.alice + "\n")
        self.wrong_token_file = self.file("wrong.token", self.secret("--token-file (wrong)") + "\n")
        self.wrong_env_token = self.secret("SPIDERDUCK_TOKEN (wrong)")
        self.nats_password = self.secret("nats_password_file")
        self.password_file = self.file("nats.password", self.nats_password + "\n")
        self.wrong_password_file = self.file("wrong.password", self.secret("nats_password_file (wrong)"))
        self.url_password = self.secret("nats_url password")
        self.url_token = self.secret("nats_url token")
        self.wrong_url_password = self.secret("nats_url password (wrong)")
        self.token_file = self.file("nats.token", self.secret("nats_token_file") + "\n")
        seed = self.seed("nats_nkey_seed")
        self.nkey_public = nkeys.from_seed(bytearray(seed.encode())).public_key.decode()
        self.seed_file = self.file("user.nk", seed + "\n")
        self.stranger_seed_file = self.file("stranger.nk", self.seed("nats_nkey_seed (a stranger)") + "\n")
        jwt, creds_seed = self.secret("nats_creds JWT"), self.seed("nats_creds seed")
        self.creds_file = self.file("user.creds", (
            f"-----BEGIN NATS USER JWT-----\n{jwt}\n------END NATS USER JWT------\n\n"
            f"-----BEGIN USER NKEY SEED-----\n{creds_seed}\n------END USER NKEY SEED------\n"))
        self.cassandra_password = self.secret("metadata_store password")
        self.cassandra_password_file = self.file("cassandra.password",
                                                 self.secret("metadata_store password_file") + "\n")
        self.hdfs_password = self.secret("content_store password")
        self.robots_password = self.secret("robots_cache password")
        self.not_a_key = self.file("not-a.key", self.secret("tls.key (not a key)") + "\n")
        self.bad_tokens_file = self.file("bad.tokens",       # line 2: a token without its name
                                         f"alice:{self.alice}\n{self.secret('tokens_file bad line')}\n")
        self.configs = root / "configs"
        self.configs.mkdir()

    def secret(self, name: str) -> str:
        self.needles[name] = [canary(str(len(self.needles)))]
        return self.needles[name][0]

    def seed(self, name: str) -> str:
        seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER).decode()
        self.needles[name] = [seed]
        return seed

    def file(self, name: str, text: str) -> str:
        path = self.root / "secrets" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        path.chmod(0o600)
        return str(path)

    def found(self, text: str | bytes) -> list[str]:
        """The secrets `text` shows."""
        if isinstance(text, bytes):
            return [name for name, needles in self.needles.items() if any(n.encode() in text for n in needles)]
        return [name for name, needles in self.needles.items() if any(n in text for n in needles)]

    def config(self, name: str, **tree) -> str:
        """A config file (the secrets in it, not on a command line): DEBUG, and `tree`."""
        path = self.configs / f"{name}.yaml"
        path.write_text(yaml.safe_dump({"log_level": "DEBUG", "nats_connect_timeout": CONNECT_WITHIN, **tree}))
        return str(path)

    def data_dir(self, name: str) -> str:
        return str(self.root / "data" / name)

    # Config parts ---------------------------------------------------------------------------------

    @property
    def grpc_tls(self) -> dict:
        return {"cert": self.service.cert, "key": self.service.key, "ca": self.ca}

    @property
    def nats_tls(self) -> dict:
        return {"nats_tls_ca": self.ca, "nats_tls_cert": self.nats_client.cert,
                "nats_tls_key": self.nats_client.key}

    def cassandra(self, port: int, *, password_file: bool = False) -> str:
        if password_file:
            return (f"cassandra://carol@127.0.0.1:{port}/ks?connect_timeout=1"
                    f"&password_file={self.cassandra_password_file}")
        return f"cassandra://carol:{self.cassandra_password}@127.0.0.1:{port}/ks?connect_timeout=1"

    def credential_kinds(self) -> dict[str, dict]:
        """One config part per kind of NATS credentials (a URL's are in nats_url itself)."""
        return {"nats_password_file": {"nats_user": "alice", "nats_password_file": self.password_file},
                "nats_token_file": {"nats_token_file": self.token_file},
                "nats_nkey_seed": {"nats_nkey_seed": self.seed_file},
                "nats_creds": {"nats_creds": self.creds_file},
                "nats_tls_key": self.nats_tls}


# --- what `ps` shows --------------------------------------------------------------------------------

class PsWatch:
    """Every command line (/proc/*/cmdline) of every process, sampled every 20 ms while the
    module runs: the short runs that fail and the children (nats-server, workers) included."""

    def __init__(self):
        self.seen: set[bytes] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ps-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(0.02)

    def sample(self) -> None:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError), open(f"/proc/{entry}/cmdline", "rb") as fh:
                    self.seen.add(fh.read())

    def showing(self, *words: str) -> list[bytes]:
        """The command lines seen that hold all these words."""
        return [line for line in list(self.seen) if all(w.encode() in line for w in words)]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def assert_ps_clean(world: World, ps: PsWatch) -> None:
    """No command line seen so far shows a canary."""
    ps.sample()
    shown = [(line.replace(b"\0", b" ").decode(errors="replace"), world.found(line)) for line in list(ps.seen)]
    assert not [(line, found) for line, found in shown if found]


# --- running the command ----------------------------------------------------------------------------

@dataclass
class Run:
    """One `spiderduck` command, and what it must say (so the path it names was taken)."""
    what: str
    args: list[str]
    says: str = ""                        # in its stdout + stderr
    code: int | None = 2                  # its exit status (None: any)
    env: dict[str, str] = field(default_factory=dict)
    out: str = ""
    err: str = ""
    exit: int | None = None

    @property
    def text(self) -> str:
        return self.out + self.err


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without SPIDERDUCK_* settings (only the test's count), plus `extra`."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("SPIDERDUCK_")}, **extra}


async def run_all(runs: list[Run], parallel: int = 6, timeout: float = 60) -> list[Run]:
    places = asyncio.Semaphore(parallel)

    async def one(run: Run) -> None:
        async with places:
            proc = await asyncio.create_subprocess_exec(
                SPIDERDUCK, *run.args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env=clean_env(**run.env))
            try:
                out, err = await asyncio.wait_for(proc.communicate(), timeout)
            except TimeoutError:
                proc.kill()
                out, err = await proc.communicate()
            run.out, run.err, run.exit = out.decode(errors="replace"), err.decode(errors="replace"), proc.returncode
    await asyncio.gather(*(one(run) for run in runs))
    return runs


def assert_told_nothing(world: World, runs: list[Run]) -> None:
    """No canary in any run's output, and each run took its path (its exit status, its words)."""
    problems = []
    for run in runs:
        leaked = world.found(run.text)
        if leaked:
            problems.append(f"{run.what}: shows {', '.join(leaked)}:\n{run.text[-3000:]}")
        elif (run.code is not None and run.exit != run.code) or run.says not in run.text:
            problems.append(f"{run.what}: exit {run.exit} (wanted {run.code}), wanted {run.says!r} in:\n"
                            f"{run.text[-3000:]}")
    assert not problems, "\n\n".join(problems)


def assert_files_clean(world: World, *roots: str) -> list[str]:
    """No canary in any file under these folders; returns the files read."""
    read, leaked = [], []
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in names:
                path = os.path.join(folder, name)
                with contextlib.suppress(FileNotFoundError):     # a file the service just removed
                    data = pathlib.Path(path).read_bytes()
                    read.append(os.path.relpath(path, root))
                    found = world.found(data)
                    if found:
                        leaked.append(f"{path}: {', '.join(found)}")
    assert not leaked
    return read


class Service:
    """A long-running `spiderduck` role; stdout and stderr to files (a full pipe would block it)."""

    def __init__(self, world: World, name: str, *args: str):
        self.out_path, self.err_path = (world.root / f"{name}.{fd}" for fd in ("out", "err"))
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen([SPIDERDUCK, *args], stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=err, env=clean_env())

    @property
    def text(self) -> str:
        return self.out_path.read_text(errors="replace") + self.err_path.read_text(errors="replace")

    def wait_for(self, words: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while words not in self.text:
            assert self.proc.poll() is None, f"exited {self.proc.returncode}:\n{self.text[-3000:]}"
            assert time.monotonic() < deadline, f"no {words!r} in:\n{self.text[-3000:]}"
            time.sleep(0.05)

    async def wait_for_async(self, words: str, timeout: float = 30) -> None:
        await asyncio.to_thread(self.wait_for, words, timeout)

    def stop(self, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"still running {timeout:g}s after SIGTERM:\n{self.text[-3000:]}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# --- `up` with its secrets: start, serve, stop ------------------------------------------------------

@dataclass
class Up:
    service: Service
    cli: str                 # the same, without the NATS credentials: the CLI beside it uses up's token
    data_dir: str
    web: str                 # https://127.0.0.1:PORT
    settings: dict


def tls_client(world: World) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=world.ca)
