"""A JetStream cluster of nats-servers on loopback, for tests.

Every node has free ports (clients, routes, HTTP monitoring), its own store under `root`, a
`--server_name` (n0, n1, ...) and explicit routes to all the others. `url` lists the client
URLs comma-separated, as config `nats_url` takes them. `ready()` waits until the cluster has a
JetStream meta leader that counts every node as a current peer, so streams with as many
replicas as there are nodes can be placed at once.

    with NatsCluster(tmp_path / "nats") as cluster:
        await cluster.ready()
        ... cluster.kill("n1") ...
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass

from spiderduck.cli.nats_server import kill_with_parent, free_port, port_open, server_binary


@dataclass
class ClusterNode:
    name: str
    store_dir: str
    port: int
    route_port: int
    http_port: int
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @property
    def route_url(self) -> str:
        return f"nats://127.0.0.1:{self.route_port}"

    @property
    def log_path(self) -> str:
        return os.path.join(self.store_dir, "nats-server.log")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def monitor(self, endpoint: str) -> dict:
        """A monitoring endpoint's JSON, e.g. "jsz", "connz"."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/{endpoint}", timeout=2) as r:
            return json.load(r)


class NatsCluster:
    def __init__(self, root, size: int = 3, *, cluster_name: str = "spiderduck-test"):
        self.cluster_name = cluster_name
        self.nodes = [ClusterNode(f"n{i}", os.path.join(str(root), f"n{i}"), free_port(),
                                  free_port(), free_port()) for i in range(size)]

    @property
    def url(self) -> str:
        return ",".join(node.url for node in self.nodes)

    def node(self, name: str) -> ClusterNode:
        return next(node for node in self.nodes if node.name == name)

    def live(self) -> list[ClusterNode]:
        return [node for node in self.nodes if node.alive]

    def start(self, timeout: float = 15.0) -> "NatsCluster":
        for node in self.nodes:
            os.makedirs(node.store_dir, exist_ok=True)
            routes = ",".join(other.route_url for other in self.nodes if other is not node)
            node.proc = subprocess.Popen(
                [server_binary(), "-a", "127.0.0.1", "-p", str(node.port), "-m", str(node.http_port),
                 "-js", "-sd", node.store_dir, "--server_name", node.name,
                 "--cluster_name", self.cluster_name, "--cluster", node.route_url, "--routes", routes,
                 "-l", node.log_path],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                preexec_fn=kill_with_parent)      # no node outlives a killed test run
        deadline = time.monotonic() + timeout
        for node in self.nodes:
            while not port_open("127.0.0.1", node.port):
                if node.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"nats-server {node.name} did not start; see {node.log_path}")
                time.sleep(0.02)
        return self

    def meta(self) -> dict | None:
        """The meta group as its leader sees it ({"leader", "cluster_size", "replicas": the
        other peers, each with "current"}), None while no live node is the leader."""
        for node in self.live():
            with contextlib.suppress(OSError, ValueError):
                meta = node.monitor("jsz").get("meta_cluster") or {}
                if meta.get("leader") == node.name:
                    return meta
        return None

    async def ready(self, timeout: float = 20.0) -> dict:
        """Wait until a meta leader counts every other live node as a current peer; its view."""
        deadline = time.monotonic() + timeout
        while True:
            meta = await asyncio.to_thread(self.meta)
            if meta:
                current = {p["name"] for p in meta.get("replicas") or [] if p.get("current")}
                if {n.name for n in self.live()} <= current | {meta["leader"]}:
                    return meta
            if time.monotonic() > deadline:
                raise TimeoutError(f"no JetStream meta leader with all peers within {timeout:g}s: {meta}")
            await asyncio.sleep(0.05)

    def node_at(self, port: int) -> ClusterNode:
        """The node serving clients on `port`."""
        return next(node for node in self.nodes if node.port == port)

    def connections(self, name: str) -> list[str]:
        """The live nodes holding a client connection whose name starts with `name`."""
        found = []
        for node in self.live():
            with contextlib.suppress(OSError, ValueError):
                conns = node.monitor("connz?limit=1024")["connections"]
                if any(c.get("name", "").startswith(name) for c in conns):
                    found.append(node.name)
        return found

    def kill(self, name: str) -> None:
        """SIGKILL one node: no goodbye to its peers or clients."""
        node = self.node(name)
        if node.alive:
            node.proc.send_signal(signal.SIGKILL)
            node.proc.wait(10)

    def stop(self) -> None:
        for node in self.nodes:
            if node.alive:
                node.proc.terminate()
        for node in self.nodes:
            if node.proc is not None:
                try:
                    node.proc.wait(10)
                except subprocess.TimeoutExpired:
                    node.proc.kill()
                    node.proc.wait()
            node.proc = None

    def __enter__(self) -> "NatsCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
