"""A one-process HDFS (NameNode + one DataNode) on loopback for the tests, from Maven's jars.

    resolve()     the jars of tests/backends/hdfs/pom.xml (hadoop-minicluster and the jobclient
                  tests jar with MiniHadoopClusterManager), copied once into
                  .backends/hdfs-<version>/lib by tests/support/maven_backend.py
    HdfsServer    MiniHadoopClusterManager -nomr on free loopback ports in a temporary folder;
                  `start()` waits until WebHDFS lists `/` and a small file can be written
                  (so the DataNode is in), `stop()` ends it and removes the folder

`url` is what SPIDERDUCK_TEST_HDFS takes: `http://127.0.0.1:PORT?user=spiderduck`. WebHDFS is
on by default (dfs.webhdfs.enabled) and MiniDFSCluster binds the DataNode to 127.0.0.1, so the
CREATE/OPEN redirects lead the `hdfs` client to 127.0.0.1 too. As on a real cluster, /tmp is
world-writable with the sticky bit and the rest of the tree belongs to the superuser (the user
running java).

`HdfsServer(lib, tls=NodeTls(cert, key, ca))` serves WebHDFS over HTTPS only (dfs.http.policy
HTTPS_ONLY), on the namenode and the datanode alike, with that certificate: `url` is then
`https://...`, and `ca` is what a client verifies against.

Needs `java` (17) and, on first use, `mvn` with access to Maven Central; without them
`BackendUnavailable` says how to get them. `python tests/support/hdfs_server.py` resolves the
jars, starts a cluster, times both and stops it.
"""
from __future__ import annotations

import getpass
import pathlib
import secrets
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass

from spiderduck.cli.nats_server import free_port, kill_with_parent, port_open
from support.maven_backend import (BackendUnavailable, JvmServer, log_tail, pom_property,
                                   resolve as resolve_backend)

HOST = "127.0.0.1"
USER = "spiderduck"                                  # the user the tests write as
MAIN = "org.apache.hadoop.mapreduce.MiniHadoopClusterManager"

# Closing a file (each WebHDFS CREATE or APPEND) waits for the NameNode to see the block,
# polling from 400 ms by default: about 200 ms an append. 20 ms makes it about 45 ms.
TEST_CONF = {"dfs.client.block.write.locateFollowingBlock.initial.delay.ms": "20"}


@dataclass(frozen=True)
class NodeTls:
    """The certificate (PEM) and key both nodes serve HTTPS with, and the CA it chains to."""
    cert: str
    key: str
    ca: str

    def configure(self, folder: pathlib.Path, https_port: int) -> dict[str, str]:
        """Write ssl-server.xml and its PKCS#12 keystore into `folder` (put on the classpath,
        where Hadoop looks for hadoop.ssl.server.conf); returns the -D settings for HTTPS."""
        from cryptography import x509
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.serialization import pkcs12
        password = secrets.token_hex(12)
        key = serialization.load_pem_private_key(pathlib.Path(self.key).read_bytes(), None)
        cert = x509.load_pem_x509_certificate(pathlib.Path(self.cert).read_bytes())
        keystore = folder / "keystore.p12"
        keystore.write_bytes(pkcs12.serialize_key_and_certificates(
            b"hdfs", key, cert, None, serialization.BestAvailableEncryption(password.encode())))
        properties = {"ssl.server.keystore.location": str(keystore),
                      "ssl.server.keystore.type": "pkcs12",
                      "ssl.server.keystore.password": password,
                      "ssl.server.keystore.keypassword": password}
        (folder / "ssl-server.xml").write_text("<configuration>\n" + "".join(
            f"  <property><name>{name}</name><value>{value}</value></property>\n"
            for name, value in properties.items()) + "</configuration>\n")
        return {"dfs.http.policy": "HTTPS_ONLY",
                "dfs.namenode.https-address": f"{HOST}:{https_port}",
                "dfs.datanode.https.address": f"{HOST}:0"}


def version() -> str:
    """The Hadoop version the pom names."""
    return pom_property("hdfs", "hadoop.version")


def resolve() -> pathlib.Path:
    return resolve_backend("hdfs", version(), expect="hadoop-minicluster-*.jar")


class HdfsServer(JvmServer):
    """One mini HDFS of our own: `.url` names its WebHDFS (`http://127.0.0.1:PORT?user=U`)."""

    def __init__(self, lib: pathlib.Path, *, heap: str = "384m", user: str = USER,
                 conf: dict[str, str] | None = None, tls: NodeTls | None = None):
        self.lib = lib
        self.conf = {**TEST_CONF, **(conf or {})}
        self.tls = tls
        self.heap = heap
        self.user = user
        self.rpc_port = free_port(HOST)
        self.http_port = free_port(HOST)
        self.dir: pathlib.Path | None = None
        self.proc: subprocess.Popen | None = None

    @property
    def webhdfs(self) -> str:
        return f"{'https' if self.tls else 'http'}://{HOST}:{self.http_port}"

    @property
    def url(self) -> str:
        return f"{self.webhdfs}?user={self.user}"

    def start(self, timeout: float = 120.0) -> "HdfsServer":
        java = shutil.which("java")
        if not java:
            raise BackendUnavailable("java not found: Hadoop 3.4 needs a JDK 11 or 17 "
                                     "(apt-get install openjdk-17-jdk-headless)")
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="spiderduck-hdfs-"))
        conf, classpath = self.conf, f"{self.lib}/*"
        if self.tls:
            (self.dir / "conf").mkdir()
            conf = {**conf, **self.tls.configure(self.dir / "conf", self.http_port)}
            classpath = f"{self.dir / 'conf'}:{classpath}"
        command = [java, f"-Xmx{self.heap}", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                   # Hadoop 3.4.1's NameNode, DataNode and WebHDFS need no --add-opens on Java 17.
                   "-Djava.net.preferIPv4Stack=true",
                   f"-Dtest.build.data={self.dir / 'data'}", f"-Dhadoop.tmp.dir={self.dir / 'tmp'}",
                   "-cp", classpath, MAIN, "-nomr", "-format",
                   "-nnport", str(self.rpc_port), "-nnhttpport", str(self.http_port),
                   # Written once the cluster is up. (-writeDetails takes no path in 3.4.1.)
                   "-writeConfig", str(self.dir / "hdfs-site.xml"),
                   *(arg for key, value in conf.items() for arg in ("-D", f"{key}={value}"))]
        with open(self.dir / "hadoop.log", "wb") as out:
            self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, cwd=self.dir,
                                         preexec_fn=kill_with_parent)
        try:
            self._wait_until_writable(time.monotonic() + timeout)
        except BaseException:
            self.stop(keep=True)
            raise
        return self

    def session(self):
        """A requests session for this cluster's WebHDFS (verifying against tls.ca over https)."""
        import requests
        session = requests.Session()
        if self.tls:
            session.trust_env = False            # else REQUESTS_CA_BUNDLE overrides verify
            session.verify = self.tls.ca
        return session

    def _failure(self, what: str) -> RuntimeError:
        return RuntimeError(f"HDFS {what} (files in {self.dir})\n--- hadoop.log:\n"
                            f"{log_tail(self.dir / 'hadoop.log')}")

    def _wait_until_writable(self, deadline: float) -> None:
        """Until the config is written, WebHDFS answers GETFILESTATUS / and a write lands."""
        import hdfs
        import requests
        admin = hdfs.InsecureClient(self.webhdfs, user=getpass.getuser(), timeout=5,
                                    session=self.session())
        client = hdfs.InsecureClient(self.webhdfs, user=self.user, timeout=5,
                                     session=self.session())
        error: Exception | None = None
        while True:
            if self.proc.poll() is not None:
                raise self._failure(f"exited with {self.proc.returncode} while starting")
            if time.monotonic() > deadline:
                raise self._failure(f"was not writable through {self.webhdfs} in time: {error!r}")
            if (self.dir / "hdfs-site.xml").exists() and port_open(HOST, self.http_port):
                try:
                    admin.status("/")
                    admin.makedirs("/tmp", permission="1777")
                    client.write(f"/tmp/.ready-{self.user}", data=b"ok", overwrite=True)
                    return
                except (hdfs.HdfsError, requests.RequestException) as exc:
                    error = exc
            time.sleep(0.2)


if __name__ == "__main__":
    started = time.monotonic()
    folder = resolve()
    resolved = time.monotonic()
    print(f"hadoop {version()}: {len(list(folder.glob('*.jar')))} jars in {folder} "
          f"({resolved - started:.1f}s)")
    server = HdfsServer(folder).start()
    print(f"HDFS at {server.url} ({time.monotonic() - resolved:.1f}s)")
    server.stop()
