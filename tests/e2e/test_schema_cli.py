"""`spiderduck schema apply` through the real command (no Cassandra here: see the store suite)."""
from __future__ import annotations

import subprocess
import sys

import yaml

CLI = [sys.executable, "-m", "spiderduck.cli.main"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60)


def test_schema_apply_on_sqlite_needs_nothing(tmp_path):
    config = tmp_path / "spiderduck.yaml"
    config.write_text(yaml.safe_dump({"data_dir": str(tmp_path / "var"),
                                      "metadata_store": f"sqlite:///{tmp_path}/m.db"}))
    done = run("schema", "apply", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert "nothing to apply" in done.stdout


def test_schema_apply_on_an_unreachable_cluster_fails_in_one_line(tmp_path):
    done = run("schema", "apply", "--set", "metadata_store=cassandra://127.0.0.1:9/ks")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "cassandra connect to 127.0.0.1:9" in done.stderr
