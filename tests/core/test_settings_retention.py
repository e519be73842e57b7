"""The `retention` section: kept forever by default, durations read as any other, bad values refused."""
from __future__ import annotations

import pytest

from spiderduck.core import config
from spiderduck.core.errors import ConfigError


def test_everything_is_kept_forever_by_default_and_swept_hourly():
    r = config.load(env={}).retention
    assert (r.metadata, r.content, r.sweep_interval) == (0, 0, 3600)
    assert r.roll_content_after == 0          # the writer keeps its own roll age


def test_durations_from_the_file_environment_and_flags(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("retention:\n  metadata: 30d\n  sweep_interval: 10m\n")
    r = config.load(str(path), env={"SPIDERDUCK_RETENTION__CONTENT": "90d"}).retention
    assert (r.metadata, r.content, r.sweep_interval) == (30 * 86400, 90 * 86400, 600)
    assert r.roll_content_after == 45 * 86400      # nothing outlives 90d by more than half of it


@pytest.mark.parametrize("key, value, words", [
    ("retention.metadata", "-1", "retention.metadata"),
    ("retention.content", "-5s", "retention.content"),
    ("retention.sweep_interval", "0", "retention.sweep_interval: 0s must be positive"),
    ("retention.metadata", "forever", "retention.metadata: not a duration"),
])
def test_bad_values_are_refused_by_name(key, value, words):
    with pytest.raises(ConfigError, match=words):
        config.load(env={}, overrides={key: value})
