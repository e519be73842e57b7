"""Shared fixtures: ../shared lookup, a private nats-server per test, a local web."""
from __future__ import annotations

import os
import pathlib

import pytest

from spiderduck.cli.nats_server import FREE_PORTS_ENV, EmbeddedNats

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
PORTS_BELOW = 32768       # Linux's default lowest ephemeral port (read from /proc where it can be)
PORTS_FROM = 12000


def _ports_of_this_worker() -> None:
    """Under pytest-xdist (bin/test runs a worker per core), each worker and what it starts take
    free ports from a range of their own below the ephemeral range (SPIDERDUCK_FREE_PORTS), so
    a port one worker chose is never taken by another before it is bound."""
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if not worker.startswith("gw") or not count.isdigit() or FREE_PORTS_ENV in os.environ:
        return
    try:
        below = int(pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        below = PORTS_BELOW
    size = (below - PORTS_FROM) // int(count)
    if size < 500:
        return                                # no room: the kernel's choice, as without workers
    low = PORTS_FROM + int(worker[2:]) % int(count) * size    # a restarted worker gets a new number
    os.environ[FREE_PORTS_ENV] = f"{low}-{low + size - 1}"


_ports_of_this_worker()


def shared_path(*parts: str) -> pathlib.Path:
    """A path under ../shared, or skip the test with the reason when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not found: third-party test data is read from ../shared beside the repo")
    return path


@pytest.fixture
def nats_server(tmp_path):
    """A nats-server of our own on a free port with a temporary JetStream store."""
    with EmbeddedNats(str(tmp_path / "nats")) as server:
        yield server


@pytest.fixture
async def bus_js(nats_server):
    """(connection, JetStream context) on `nats_server`, SpiderDuck's streams created."""
    import nats

    from spiderduck.bus import streams as bus
    nc = await nats.connect(nats_server.url)
    js = nc.jetstream()
    await bus.ensure_streams(js)
    yield nc, js
    await nc.close()


@pytest.fixture
async def localweb():
    from support.localweb import LocalWeb
    web = await LocalWeb().start()
    yield web
    await web.stop()


@pytest.fixture
def spans():
    """Traces on for the test, into an in-memory exporter (its finished spans: `.get_finished_spans()`);
    off again after it."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from spiderduck.core import telemetry
    from spiderduck.core.settings import TelemetrySettings
    exporter = InMemorySpanExporter()
    shutdown = telemetry.setup(TelemetrySettings(service_name="spiderduck-test"), "test", exporter=exporter)
    try:
        yield exporter
    finally:
        shutdown()
    assert not telemetry.enabled()


@pytest.fixture(name="shared_path")
def _shared_path_fixture():
    """`shared_path` as a fixture, for tests that look a file up at run time."""
    return shared_path


def pytest_collection_finish(session):
    """Note each backend's last user, and fetch the backends' jars in the background while
    the first tests run.

    On a fresh machine Maven takes about 50 s for Cassandra's jars and 60 s for Hadoop's; the
    store tests come after a few hundred others, so the download is mostly done by then.
    Only the backends the selected tests use (by fixture, or by a cassandra/hdfs case) are
    fetched, and none that SPIDERDUCK_TEST_* points elsewhere. resolve() holds a file lock, so
    a fixture asking meanwhile waits for this download instead of starting another; a failure
    here is left for that fixture to report (it skips, saying what is missing).
    """
    import os
    import threading
    wanted = {}
    for item in session.items:
        names, nodeid = getattr(item, "fixturenames", ()), item.nodeid.lower()
        if "cassandra_target" in names or "cassandra" in nodeid:
            wanted.setdefault(CASSANDRA_ENV, "support.cassandra_server")
            _LAST_USER[CASSANDRA_ENV] = item.nodeid
        if "hdfs_cluster" in names or "hdfs" in nodeid:
            wanted.setdefault(HDFS_ENV, "support.hdfs_server")
            _LAST_USER[HDFS_ENV] = item.nodeid
    for env, module in wanted.items():
        if os.environ.get(env, "").strip():
            continue

        def fetch(module=module):
            import importlib
            try:
                importlib.import_module(module).resolve()
            except Exception:   # noqa: BLE001 -- the fixture reports it when it asks
                pass
        threading.Thread(target=fetch, name=f"prefetch-{module}", daemon=True).start()


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "vectors(*parts, ids=None): parametrize the test's `case` argument with the "
        "objects of the JSON list at ../shared/<parts> (string entries are comments)",
    )


def pytest_generate_tests(metafunc):
    """Conformance vectors: one test per case of a JSON file under ../shared.

    `@pytest.mark.vectors("testdata", "x.json", ids=lambda case: ...)` on a test
    taking `case`. Where ../shared is absent the test is collected once, skipped,
    with shared_path's reason.
    """
    marker = metafunc.definition.get_closest_marker("vectors")
    if marker is None or "case" not in metafunc.fixturenames:
        return
    import json

    try:
        path = shared_path(*marker.args)
    except pytest.skip.Exception as absent:
        skip = pytest.mark.skip(reason=str(absent.msg))
        metafunc.parametrize("case", [pytest.param(None, marks=skip, id="missing")])
        return
    cases = [c for c in json.loads(path.read_text("utf-8")) if not isinstance(c, str)]
    metafunc.parametrize("case", cases, ids=marker.kwargs.get("ids"))


# --- memcached (the shared robots.txt cache) ------------------------------------------------------

def _install_memcached() -> str | None:
    """`apt-get install -y memcached` (apt-get update first only if that fails); None on success."""
    import os
    import shutil
    import subprocess

    if not shutil.which("apt-get"):
        return "memcached is not installed and apt-get is not available"
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        return "memcached is not installed and installing it needs root (apt-get install memcached)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}

    def apt(*args: str) -> bool:
        try:
            return subprocess.run(["apt-get", *args], env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  timeout=600).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False
    if apt("install", "-y", "memcached") or (apt("update") and apt("install", "-y", "memcached")):
        return None
    return "apt-get install -y memcached failed"


def _memcached_binary() -> str | None:
    import shutil
    found = shutil.which("memcached")
    if found:
        return found
    return "/usr/bin/memcached" if pathlib.Path("/usr/bin/memcached").exists() else None


@pytest.fixture(scope="session")
def memcached_binary() -> str:
    """Path of the memcached binary, installed from Debian's package when missing (CI runs as root)."""
    binary = _memcached_binary()
    reason = None
    if binary is None:
        reason = _install_memcached()
        binary = _memcached_binary()
    if binary is None:
        pytest.skip(f"memcached unavailable: {reason or 'not found after installing'}")
    return binary


class MemcachedProcess:
    """A memcached of our own on a free loopback port (UDP off)."""

    def __init__(self, binary: str):
        from spiderduck.cli.nats_server import free_port
        self.binary = binary
        self.host = "127.0.0.1"
        self.port = free_port()
        self.proc = None

    @property
    def url(self) -> str:
        return f"memcached://{self.host}:{self.port}"

    def start(self, timeout: float = 10.0) -> "MemcachedProcess":
        import subprocess
        import time
        from spiderduck.cli.nats_server import port_open
        self.proc = subprocess.Popen(
            [self.binary, "-u", "root", "-l", self.host, "-p", str(self.port), "-U", "0", "-m", "64"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while not port_open(self.host, self.port):
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace").strip()
                self.proc = None
                pytest.skip(f"memcached did not start: {err or 'exited'}")
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"memcached did not listen on {self.host}:{self.port} within {timeout:g}s")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()            # SIGTERM would take up to a second (memcached's clock tick)
            self.proc.wait(5)
        self.proc.stderr.close()
        self.proc = None


@pytest.fixture
def memcached_server(memcached_binary):
    """A fresh memcached per test: `.url` ("memcached://127.0.0.1:PORT"), `.stop()`; stopped at teardown."""
    server = MemcachedProcess(memcached_binary).start()
    yield server
    server.stop()


# --- Cassandra (the metadata store's conformance suite) -------------------------------------------

CASSANDRA_ENV = "SPIDERDUCK_TEST_CASSANDRA"


# One server per backend for the whole run, started by its first user and stopped right after
# its last (pytest_runtest_teardown below): one JVM start each instead of one per module, and
# no JVM under the tests that come after. A user the collection did not foresee starts it again.
_RUNNING: dict[str, object] = {}          # env name -> the server of ours
_LAST_USER: dict[str, str] = {}           # env name -> node id of the last test that uses it


def _backend(env: str, start, address, name: str, how: str) -> str:
    """The address in `env` when set; else the address of our own server (start() -> server,
    address(server) -> what the tests use); skip where it cannot run."""
    import os
    named = os.environ.get(env, "").strip()
    if named:
        return named
    if env not in _RUNNING:
        from support.maven_backend import BackendUnavailable
        try:
            _RUNNING[env] = start()
        except BackendUnavailable as missing:
            pytest.skip(f"{name} unavailable: {missing} (or set {env}={how})")
    return address(_RUNNING[env])


def _stop_backend(env: str) -> None:
    server = _RUNNING.pop(env, None)
    if server is not None:
        server.stop()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    for env, last in _LAST_USER.items():
        if item.nodeid == last:
            _stop_backend(env)


def pytest_sessionfinish(session, exitstatus):
    for env in list(_RUNNING):
        _stop_backend(env)


@pytest.fixture
def cassandra_target():
    """`host1,host2[:port][?options]` of the cluster the Cassandra tests use.

    SPIDERDUCK_TEST_CASSANDRA when set; otherwise a node of our own on loopback
    (tests/support/cassandra_server.py: jars from Maven Central, fetched once into .backends/),
    shared by the run's Cassandra tests and stopped after the last of them. Skips where java
    or mvn is missing.
    """
    from support.cassandra_server import CassandraServer, resolve
    return _backend(CASSANDRA_ENV, lambda: CassandraServer(resolve()).start(),
                    lambda server: server.target, "Cassandra", "host1,host2:9042")


# --- HDFS (the content store's conformance suite) -------------------------------------------------

HDFS_ENV = "SPIDERDUCK_TEST_HDFS"


@pytest.fixture
def hdfs_cluster():
    """`http://namenode:PORT?user=U`: the WebHDFS the HDFS content-store tests write to.

    SPIDERDUCK_TEST_HDFS when set; otherwise a mini HDFS of our own on loopback
    (tests/support/hdfs_server.py: jars from Maven Central, fetched once into .backends/),
    shared by the run's HDFS tests and stopped after the last of them. Skips where java or
    mvn is missing.
    """
    from support.hdfs_server import HdfsServer, resolve
    return _backend(HDFS_ENV, lambda: HdfsServer(resolve()).start(), lambda server: server.url,
                    "HDFS", "http://namenode:9870?user=U")
