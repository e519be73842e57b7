"""The CPU and memory of a service's whole process tree, read from /proc: what bench/pipeline
reports for `up` (or its roles), its nats-server and its extraction workers."""
from __future__ import annotations

import asyncio
import os


def process_tree(root: int) -> dict[int, tuple[str, float, int]]:
    """pid -> (name, CPU seconds used, RSS bytes) for `root` and every process below it."""
    children: dict[int, list[int]] = {}
    info: dict[int, tuple[str, float, int]] = {}
    page, tick = os.sysconf("SC_PAGE_SIZE"), os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        name = raw[raw.index(b"(") + 1:raw.rindex(b")")].decode(errors="replace")
        stat = raw.rsplit(b")", 1)[1].split()
        pid, ppid = int(entry), int(stat[1])
        children.setdefault(ppid, []).append(pid)
        info[pid] = (name, (int(stat[11]) + int(stat[12])) / tick, int(stat[21]) * page)
    out, stack = {}, [root]
    while stack:
        pid = stack.pop()
        if pid in info:
            out[pid] = info[pid]
        stack.extend(children.get(pid, ()))
    return out


def tree_rss(root: int) -> int:
    """Bytes of RSS of `root` and every process below it (read from /proc)."""
    return sum(rss for _, _, rss in process_tree(root).values())


def _role_of(pid: int) -> str | None:
    """The role a `python -m spiderduck.cli.main ROLE` process runs (bench/roles.py), else None."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().decode(errors="replace").split("\0")
    except OSError:
        return None
    return argv[argv.index("spiderduck.cli.main") + 1] if "spiderduck.cli.main" in argv[:-1] else None


def cpu_by_role(root: int, before: dict, after: dict, root_name: str = "up") -> str:
    """CPU seconds each kind of process used between two process_tree() snapshots."""
    used: dict[str, float] = {}
    for pid, (name, cpu, _) in after.items():
        role = (root_name if pid == root else "nats-server" if "nats" in name
                else (_role_of(pid) or "workers") if name.startswith("python") else name)
        used[role] = used.get(role, 0.0) + cpu - before.get(pid, (name, 0.0, 0))[1]
    return ", ".join(f"{role} {seconds:.1f}" for role, seconds in sorted(used.items()))


class RssSampler:
    def __init__(self, pid: int, every: float = 0.1):
        self.pid, self.every, self.peak = pid, every, 0
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            self.peak = max(self.peak, tree_rss(self.pid))
            await asyncio.sleep(self.every)

    async def stop(self) -> int:
        self._task.cancel()
        return self.peak


def tree_cpu(before: dict, after: dict) -> float:
    """CPU seconds the processes of two process_tree() snapshots used between them."""
    return sum(cpu - before.get(pid, (name, 0.0, 0))[1] for pid, (name, cpu, _) in after.items())
