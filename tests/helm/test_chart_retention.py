"""The chart's `retention` values: rendered into the schedulers' config (they sweep), read there by
the service's own loader, and refused by the schema when they are no duration."""
from __future__ import annotations

import pytest
import yaml

from support.chart import RUNNING, helm, render, role_config

from spiderduck.core import config as sd_config


def loaded(docs: list[dict], role: str, tmp_path):
    path = tmp_path / f"{role}.yaml"
    path.write_text(yaml.safe_dump(role_config(docs, role)))
    return sd_config.load(str(path), env={})


def test_by_default_the_schedulers_keep_everything_and_sweep_hourly(tmp_path):
    docs = render()
    assert role_config(docs, "scheduler")["retention"] == {
        "metadata": "0", "content": "0", "sweep_interval": "1h"}
    r = loaded(docs, "scheduler", tmp_path).retention
    assert (r.metadata, r.content, r.sweep_interval) == (0, 0, 3600)


def test_set_retention_reaches_the_schedulers_and_only_them(tmp_path):
    docs = render({"retention": {"metadata": "30d", "content": "90d", "sweepInterval": "10m"}})
    r = loaded(docs, "scheduler", tmp_path).retention
    assert (r.metadata, r.content, r.sweep_interval) == (30 * 86400, 90 * 86400, 600)
    for role in set(RUNNING) - {"scheduler"}:
        assert "retention" not in role_config(docs, role), role


@pytest.mark.parametrize("values", [
    {"metadata": "-1d"}, {"content": "forever"}, {"sweepInterval": "0"}, {"sweepInterval": 0},
    {"ttl": "1d"}])
def test_the_schema_refuses_what_is_no_retention(values):
    with pytest.raises(helm.HelmError, match="retention"):
        render({"retention": values})
