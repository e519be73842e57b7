"""How many CPUs this process may really use: its affinity, capped by a cgroup CPU quota.

In a container the affinity is often the whole node's CPUs while the quota (a Kubernetes CPU
limit) allows two; sizing worker pools by the node would start dozens of processes and run out
of memory. Reads cgroup v2 (`cpu.max`) and v1 (`cpu.cfs_quota_us` / `cpu.cfs_period_us`).
"""
from __future__ import annotations

import math
import os

CGROUP_ROOT = "/sys/fs/cgroup"


def usable_cpus(cgroup_root: str = CGROUP_ROOT) -> int:
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    quota = cgroup_quota(cgroup_root)
    return max(1, min(count, math.ceil(quota))) if quota else max(1, count)


def cgroup_quota(cgroup_root: str = CGROUP_ROOT) -> float | None:
    """CPUs' worth of time the cgroup may use (1.5 = one and a half CPUs); None when unlimited."""
    try:
        with open(os.path.join(cgroup_root, "cpu.max"), encoding="ascii") as fh:
            quota, period = fh.read().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(cgroup_root, "cpu", "cpu.cfs_quota_us"), encoding="ascii") as fh:
            quota_us = int(fh.read())
        with open(os.path.join(cgroup_root, "cpu", "cpu.cfs_period_us"), encoding="ascii") as fh:
            period_us = int(fh.read())
        return None if quota_us <= 0 or period_us <= 0 else quota_us / period_us
    except (OSError, ValueError):
        return None
