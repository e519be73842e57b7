"""Worker pools are sized by the CPUs a container may use, not the node's."""
from __future__ import annotations

import os

import pytest

from spiderduck.core import config
from spiderduck.core.cpus import cgroup_quota, usable_cpus

AFFINITY = len(os.sched_getaffinity(0))


def write(root, name, text):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize("text, quota", [("max 100000\n", None), ("150000 100000\n", 1.5),
                                         ("50000 100000", 0.5), ("garbage", None)])
def test_cgroup_v2_quota(tmp_path, text, quota):
    write(tmp_path, "cpu.max", text)
    assert cgroup_quota(str(tmp_path)) == quota


def test_cgroup_v1_quota(tmp_path):
    write(tmp_path, "cpu/cpu.cfs_quota_us", "200000\n")
    write(tmp_path, "cpu/cpu.cfs_period_us", "100000\n")
    assert cgroup_quota(str(tmp_path)) == 2.0
    write(tmp_path, "cpu/cpu.cfs_quota_us", "-1\n")
    assert cgroup_quota(str(tmp_path)) is None


def test_a_quota_below_the_cpus_caps_them_and_never_below_one(tmp_path):
    write(tmp_path, "cpu.max", "1 100000")                 # a hundredth of a CPU
    assert usable_cpus(str(tmp_path)) == 1
    write(tmp_path, "cpu.max", f"{AFFINITY * 100000 * 8} 100000")   # more than we have
    assert usable_cpus(str(tmp_path)) == AFFINITY
    assert usable_cpus(str(tmp_path / "none")) == AFFINITY   # no cgroup files: the affinity


def test_workers_default_to_usable_cpus_and_a_setting_wins(monkeypatch):
    monkeypatch.setattr("spiderduck.core.cpus.usable_cpus", lambda: 3)
    assert config.load(env={}).extraction_workers == 3
    assert config.load(env={}, overrides={"process.workers": 5}).extraction_workers == 5
    with pytest.raises(config.ConfigError, match="process.workers"):
        config.load(env={}, overrides={"process.workers": -1})
