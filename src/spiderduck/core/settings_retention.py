"""The `retention` section of the settings (src/spiderduck/core/settings.py re-exports it): how
long stored records and the content log are kept, and how often the sweeps that delete what is
older run (src/spiderduck/stores/retention.py; the scheduler runs them)."""
from __future__ import annotations

from dataclasses import dataclass

from spiderduck.core.errors import ConfigError
from spiderduck.core.settings_duration import Duration

# How long a forget on HDFS waits for the content-log files still being written that hold records
# it erases to be sealed (their writers roll on request when the denylist changes, or at their
# roll age) before it gives up with a StoreError naming them, to be repeated (seconds).
FORGET_SEAL_WAIT = 30.0
FORGET_SEAL_POLL = 0.25            # how often it looks meanwhile (seconds)


@dataclass(frozen=True)
class RetentionSettings:
    metadata: Duration = 0.0          # a record (with its aliases, resolution rows and share count)
                                      # not crawled or refreshed within this is deleted, at the
                                      # latest one sweep_interval after (SQLite: the sweep;
                                      # Cassandra: a TTL on the rows, renewed by each put);
                                      # 0 = kept forever
    content: Duration = 0.0           # content-log files (file:// WARC and HDFS) whose newest
                                      # record is older than this are deleted; the writer then
                                      # starts a new file at least every half of it; 0 = kept
                                      # forever
    sweep_interval: Duration = 3600.0  # how often the scheduler sweeps for what has expired

    @property
    def roll_content_after(self) -> float:
        """Seconds after which the content-log writer starts a new file (0 = its own default), so
        nothing outlives retention.content by more than half of it."""
        return self.content / 2

    def __post_init__(self) -> None:
        for name in ("metadata", "content"):
            if getattr(self, name) < 0:
                raise ConfigError(f"retention.{name}: {getattr(self, name):g}s is negative "
                                  "(0 = kept forever)")
        if not self.sweep_interval > 0:
            raise ConfigError(f"retention.sweep_interval: {self.sweep_interval:g}s must be positive")
