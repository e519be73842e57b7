"""A single-node Cassandra on loopback for the tests, run from Maven Central's jars.

    resolve()          the jars of tests/backends/cassandra/pom.xml (cassandra-all and its runtime
                       dependencies), copied once by `mvn dependency:copy-dependencies` into
                       .backends/cassandra-<version>/lib (outside git); later calls find them there
    CassandraServer    CassandraDaemon in the foreground on free loopback ports, configured by
                       tests/backends/cassandra/cassandra.yaml filled in under a temporary folder;
                       `start()` waits until CQL answers, `stop()` ends it and removes the folder.
                       A node restarts on the same ports and data: `restart()`, or
                       `stop(keep=True, graceful=S)` then `start()` again (a kept folder is reused)
    NodeTls            client_encryption_options from PEM files (PEMBasedSslContextFactory), for
                       `CassandraServer(lib, tls=NodeTls(...), password=True)`: a node that speaks
                       TLS only, asks clients for certificates, and checks passwords

Needs `java` (17) and, on first use, `mvn` with access to Maven Central; without them
`BackendUnavailable` says how to get them. `python tests/support/cassandra_server.py` resolves
the jars ahead of a test run and prints how long that took.
"""
from __future__ import annotations

import pathlib
import shutil
import string
import subprocess
import tempfile
import time
from dataclasses import dataclass

from spiderduck.cli.nats_server import free_port, kill_with_parent, port_open
from support.maven_backend import (BackendUnavailable, JvmServer, log_tail, pom_property,
                                   resolve as resolve_backend)

ROOT = pathlib.Path(__file__).resolve().parents[2]
BACKEND = ROOT / "tests" / "backends" / "cassandra"
HOST = "127.0.0.1"

# What Cassandra 5.0's conf/jvm17-server.options opens up for it on Java 17, its GC choice, and
# the exit on OutOfMemoryError its start-up check asks for.
JVM17_OPTIONS = [
    "-XX:+UseG1GC", "-XX:+ParallelRefProcEnabled", "-XX:MaxTenuringThreshold=1",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djdk.attach.allowAttachSelf=true",
    *(f"--add-exports={m}=ALL-UNNAMED" for m in (
        "java.base/jdk.internal.misc", "java.management.rmi/com.sun.jmx.remote.internal.rmi",
        "java.rmi/sun.rmi.registry", "java.rmi/sun.rmi.server", "java.sql/java.sql",
        "java.base/java.lang.ref", "jdk.unsupported/sun.misc",
        "jdk.compiler/com.sun.tools.javac.file", "jdk.attach/sun.tools.attach")),
    *(f"--add-opens={m}=ALL-UNNAMED" for m in (
        "java.base/java.lang.module", "java.base/jdk.internal.loader", "java.base/jdk.internal.ref",
        "java.base/jdk.internal.reflect", "java.base/jdk.internal.math",
        "java.base/jdk.internal.module", "java.base/jdk.internal.util.jar",
        "jdk.management/com.sun.management.internal", "java.base/sun.nio.ch", "java.base/java.io",
        "java.base/java.lang.reflect", "jdk.compiler/com.sun.tools.javac", "java.base/java.lang",
        "java.base/java.util")),
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dio.netty.allocator.useCacheForAllThreads=true", "-Dio.netty.allocator.maxOrder=11",
]
# A throwaway node: skip the waits a cluster needs and the fsyncs of the system tables.
TEST_PROPERTIES = [
    "-Dcassandra-foreground=yes", "-Dcassandra.skip_wait_for_gossip_to_settle=0",
    "-Dcassandra.ring_delay_ms=100", "-Dcassandra.unsafesystem=true",
    "-Dcassandra.superuser_setup_delay_ms=0", "-Djava.net.preferIPv4Stack=true",
]


SUPERUSER = ("cassandra", "cassandra")        # the role PasswordAuthenticator's node starts with


@dataclass(frozen=True)
class NodeTls:
    """The node's side of TLS: its certificate and key (PEM), the CA clients' certificates must
    chain to, and whether it asks clients for one (require_client_auth)."""
    cert: str
    key: str
    ca: str
    require_client_auth: bool = True

    def yaml(self, folder: pathlib.Path) -> str:
        """client_encryption_options for a node whose files are in `folder`. Cassandra 5's
        PEMBasedSslContextFactory takes the key and its certificate in one PEM file, and the
        CA's PEM as the truststore: no JKS, no keytool."""
        keystore = folder / "node-keystore.pem"
        keystore.write_text("".join(pathlib.Path(p).read_text() for p in (self.key, self.cert)))
        keystore.chmod(0o600)
        return "\n".join([
            "client_encryption_options:",
            "  enabled: true",
            "  optional: false",                       # TLS only: plaintext clients are refused
            "  ssl_context_factory:",
            "    class_name: org.apache.cassandra.security.PEMBasedSslContextFactory",
            f"  keystore: {keystore}",
            f"  truststore: {self.ca}",
            f"  require_client_auth: {str(self.require_client_auth).lower()}"])


def version() -> str:
    """The cassandra-all version the pom names."""
    return pom_property("cassandra", "cassandra.version")


def resolve() -> pathlib.Path:
    """The folder of Cassandra's jars, downloaded by Maven on the first call only."""
    return resolve_backend("cassandra", version(), expect="cassandra-all-*.jar")


class CassandraServer(JvmServer):
    """One Cassandra node of our own: `.target` is "127.0.0.1:PORT" (native protocol)."""

    def __init__(self, lib: pathlib.Path, *, heap: str = "512m", tls: NodeTls | None = None,
                 password: bool = False):
        self.lib = lib
        self.heap = heap
        self.tls = tls
        self.password = password           # PasswordAuthenticator, the SUPERUSER role to log in
        self.port = free_port(HOST)
        self.dir: pathlib.Path | None = None
        self.proc: subprocess.Popen | None = None
        self.release_version = ""

    @property
    def target(self) -> str:
        return f"{HOST}:{self.port}"

    def _configure(self) -> pathlib.Path:
        """The node's cassandra.yaml: written once in a new temporary folder, then reused, so a
        node started again (after `stop(keep=True)`) has the same ports, data and commit log."""
        if self.dir is not None and (self.dir / "cassandra.yaml").exists():
            return self.dir / "cassandra.yaml"
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="spiderduck-cassandra-"))
        template = string.Template((BACKEND / "cassandra.yaml").read_text("utf-8"))
        config = self.dir / "cassandra.yaml"
        config.write_text(template.substitute(
            dir=self.dir, native_transport_port=self.port, storage_port=free_port(HOST),
            ssl_storage_port=free_port(HOST),
            authenticator="PasswordAuthenticator" if self.password else "AllowAllAuthenticator",
            extra=self.tls.yaml(self.dir) if self.tls else ""), "utf-8")
        return config

    def _client_options(self) -> dict:
        """What a driver Cluster needs to get in (TLS with the node's own certificate as the
        client's, the superuser's password), for the readiness check."""
        options: dict = {}
        if self.tls:
            import ssl
            context = ssl.create_default_context(cafile=self.tls.ca)
            context.load_cert_chain(self.tls.cert, self.tls.key)
            options["ssl_context"] = context
        if self.password:
            from cassandra.auth import PlainTextAuthProvider
            options["auth_provider"] = PlainTextAuthProvider(*SUPERUSER)
        return options

    def start(self, timeout: float = 180.0) -> "CassandraServer":
        java = shutil.which("java")
        if not java:
            raise BackendUnavailable("java not found: Cassandra 5.0 needs a JDK 11 or 17 "
                                     "(apt-get install openjdk-17-jdk-headless)")
        config = self._configure()
        command = [java, f"-Xms{self.heap}", f"-Xmx{self.heap}", *JVM17_OPTIONS, *TEST_PROPERTIES,
                   f"-Dcassandra.config={config.as_uri()}", f"-Dcassandra.storagedir={self.dir}",
                   f"-Dcassandra.logdir={self.dir}",
                   f"-Dlogback.configurationFile={BACKEND / 'logback.xml'}",
                   "-cp", f"{self.lib}/*", "org.apache.cassandra.service.CassandraDaemon"]
        with open(self.dir / "stdout.log", "ab") as out:      # appended to across restarts
            self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, cwd=self.dir,
                                         preexec_fn=kill_with_parent)
        deadline = time.monotonic() + timeout
        try:
            self._wait_for_cql(deadline)
        except BaseException:
            self.stop(keep=True)
            raise
        return self

    def stop(self, *, keep: bool = False, graceful: float = 0.0) -> None:
        """As JvmServer.stop. `graceful` (seconds) sends SIGTERM first: Cassandra's shutdown hook
        drains the node (flushes the memtables, syncs and closes the commit log) before the JVM
        exits, so a node started again on the kept folder has every acknowledged write."""
        super().stop(keep=keep, graceful=graceful)

    def restart(self, *, graceful: float = 60.0, timeout: float = 180.0) -> "CassandraServer":
        """Stop the node (SIGTERM, see stop) and start it again on the same ports and data."""
        self.stop(keep=True, graceful=graceful)
        return self.start(timeout)

    def _failure(self, what: str) -> RuntimeError:
        logs = "\n".join(f"--- {name}:\n{log_tail(self.dir / name)}" for name in
                         ("stdout.log", "system.log"))
        return RuntimeError(f"Cassandra {what} (files in {self.dir})\n{logs}")

    def _wait_for_cql(self, deadline: float) -> None:
        """Until the native port is open and `SELECT release_version FROM system.local` answers."""
        from cassandra.cluster import Cluster, NoHostAvailable
        while True:
            if self.proc.poll() is not None:
                raise self._failure(f"exited with {self.proc.returncode} while starting")
            if time.monotonic() > deadline:
                raise self._failure(f"did not answer CQL on {self.target} in time")
            if port_open(HOST, self.port):
                cluster = Cluster([HOST], port=self.port, connect_timeout=5,
                                  **self._client_options())
                try:
                    row = cluster.connect().execute("SELECT release_version FROM system.local").one()
                    self.release_version = row[0]
                    return
                except (NoHostAvailable, OSError):
                    pass
                finally:
                    cluster.shutdown()
            time.sleep(0.25)


if __name__ == "__main__":
    started = time.monotonic()
    folder = resolve()
    print(f"cassandra-all {version()}: {len(list(folder.glob('*.jar')))} jars in {folder} "
          f"({time.monotonic() - started:.1f}s)")
