"""The fetcher's gauges, read when /metrics is scraped (spiderduck.core.metrics.Recorder.gauge):

    spiderduck_fetcher_queued                 requests waiting, all domains together
    spiderduck_fetcher_queue_depth{domain}    the deepest queues, at most metrics_domain_series
                                              (one series per domain; empty queues are left out)
    spiderduck_fetcher_domains{state}         domains known, by state: active, paused, halted
    spiderduck_fetcher_shards_held            shards this fetcher serves
    spiderduck_fetcher_shards                 shards there are (fetcher.shards): held on all
                                              fetchers together less than this = some unowned

The chart's alerts and dashboard read them (helm/spiderduck)."""
from __future__ import annotations

import heapq
import time

from spiderduck.core import metrics
from spiderduck.fetcher.ownership import AllShards, Ownership
from spiderduck.fetcher.politeness import Politeness

STATES = ("active", "paused", "halted")


class FetcherGauges:
    """Held by the running fetcher role: the gauges read through it while it lives."""

    def __init__(self, politeness: Politeness, ownership: Ownership, *, shards: int,
                 domain_series: int, clock=time.monotonic):
        self._politeness = politeness
        self._ownership = ownership
        self._shards = shards
        self._domain_series = domain_series
        self._clock = clock
        rec = metrics.recorder("fetcher")
        rec.gauge("queued", self.queued)
        rec.gauge("queue_depth", self.queue_depths, labels=("domain",))
        rec.gauge("domains", self.domains, labels=("state",))
        rec.gauge("shards_held", self.shards_held)
        rec.gauge("shards", self.shards)

    def queued(self) -> float:
        return float(sum(slot.waiting for slot in self._politeness.slots().values()))

    def queue_depths(self) -> list[tuple[tuple[str], float]]:
        waiting = [(slot.waiting, domain) for domain, slot in self._politeness.slots().items()
                   if slot.waiting > 0]
        return [((domain,), float(depth))
                for depth, domain in heapq.nlargest(self._domain_series, waiting)]

    def domains(self) -> list[tuple[tuple[str], float]]:
        now = self._clock()
        counts = dict.fromkeys(STATES, 0)
        for slot in self._politeness.slots().values():
            state = slot.health.state(now)
            counts[state] = counts.get(state, 0) + 1
        return [((state,), float(n)) for state, n in counts.items()]

    def shards_held(self) -> float:
        if isinstance(self._ownership, AllShards):
            return float(self._shards)
        return float(len(self._ownership.held()))

    def shards(self) -> float:
        return float(self._shards)
