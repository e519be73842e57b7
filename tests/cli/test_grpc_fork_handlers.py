"""grpc's fork handlers are off in our processes (spiderduck/cli/__init__.py): with them on, a
child started while gRPC is busy could abort before its exec (grpc/grpc#43055), as the tests'
HDFS once did. With them on, grpc logs about them at such forks ("Other threads are currently
calling into gRPC, skipping fork() handlers"): the sign looked for here, in a process that serves
gRPC and starts children the way we start ours (a preexec_fn makes Python fork, not vfork)."""
from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = """
import asyncio, subprocess, sys
import spiderduck.cli                      # what every spiderduck process imports first
import grpc

async def main():
    server = grpc.aio.server()
    server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel("127.0.0.1:1") as channel:    # a channel trying to connect
        for _ in range(20):
            await asyncio.to_thread(subprocess.run, ["true"], preexec_fn=lambda: None)
    await server.stop(None)

asyncio.run(main())
print("done")
"""


def run(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120,
                          env=env)


def test_children_are_started_without_grpcs_fork_handlers():
    env = {k: v for k, v in os.environ.items() if k != "GRPC_ENABLE_FORK_SUPPORT"}
    ours = run(env)
    assert ours.returncode == 0 and ours.stdout.strip() == "done", ours.stderr[-2000:]
    assert "fork" not in ours.stderr, ours.stderr[-2000:]


def test_the_environment_may_still_turn_them_on():
    """The sign is real: where the environment asks for them, grpc runs its fork handlers."""
    turned_on = run({**os.environ, "GRPC_ENABLE_FORK_SUPPORT": "true"})
    assert "fork" in turned_on.stderr, turned_on.stderr[-2000:]
