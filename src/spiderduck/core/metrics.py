"""Metrics: one recorder per scope, stable hierarchical names, Prometheus exposition.

    rec = metrics.recorder("scheduler")
    rec.count("processed", status="OK", resolution="CRAWLED")   # spiderduck_scheduler_processed_total
    rec.observe("latency_seconds", 0.12)                        # spiderduck_scheduler_latency_seconds
    sent = rec.counter("processed", status="OK", resolution="CRAWLED")   # the same series, looked up
    sent.inc()                                                  # once: for a hot path

    rec.gauge("in_flight", lambda: consumer.active)             # spiderduck_scheduler_in_flight, read at scrape

`serve(listen)` exposes /metrics over HTTP (config `metrics_listen`; empty = off).
"""
from __future__ import annotations

import threading
import weakref
from typing import Callable, Iterable, Union

from prometheus_client import REGISTRY, Counter, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily

from spiderduck.core.errors import ConfigError

_LOCK = threading.Lock()
_METRICS: dict[str, "Counter | Histogram | _Gauge"] = {}
_SERVING: set[str] = set()

# What a gauge reads at each scrape: one value, or (label values, value) pairs.
Reading = Union[float, Iterable[tuple[tuple[str, ...], float]]]


class _Gauge:
    """A gauge computed when scraped, from whichever object registered it last (a process runs
    one scheduler, one fetcher; tests run several in turn). A bound method is held weakly, so a
    stopped role is not kept alive by its gauge: it then reads as absent."""

    def __init__(self, name: str, documentation: str, labels: tuple[str, ...]):
        self.name, self.documentation, self.labels = name, documentation, labels
        self._read: Callable[[], Callable[[], Reading] | None] = lambda: None

    def set_reader(self, read: Callable[[], Reading]) -> None:
        if hasattr(read, "__self__"):
            ref = weakref.WeakMethod(read)
            self._read = ref
        else:
            self._read = lambda: read

    def describe(self):
        return [GaugeMetricFamily(self.name, self.documentation, labels=list(self.labels))]

    def collect(self):
        family = GaugeMetricFamily(self.name, self.documentation, labels=list(self.labels))
        read = self._read()
        if read is not None:
            value = read()
            if self.labels:
                for label_values, amount in value:
                    family.add_metric(list(label_values), amount)
            else:
                family.add_metric([], value)
        yield family


UNSCOPED = ""   # recorder(UNSCOPED): names without a scope, as a contract names them
                # (spiderduck_renders_total, issue 31)


class Recorder:
    def __init__(self, scope: str):
        self.scope = scope

    def _full(self, name: str) -> str:
        return f"spiderduck_{self.scope}_{name}" if self.scope else f"spiderduck_{name}"

    def _metric(self, kind, name: str, labels: tuple[str, ...]):
        full = self._full(name)
        with _LOCK:
            metric = _METRICS.get(full)
            if metric is None:
                metric = _METRICS[full] = kind(full, f"{self.scope or 'spiderduck'} {name.replace('_', ' ')}",
                                               labels)
        return metric

    def count(self, name: str, amount: float = 1, **labels: str) -> None:
        metric = self._metric(Counter, name, tuple(sorted(labels)))
        (metric.labels(**labels) if labels else metric).inc(amount)

    def counter(self, name: str, **labels: str):
        """The series spiderduck_<scope>_<name>_total{labels} itself, to `.inc()` where count()'s
        lookup on every call would cost too much (once per store request, say)."""
        metric = self._metric(Counter, name, tuple(sorted(labels)))
        return metric.labels(**labels) if labels else metric

    def observe(self, name: str, value: float, **labels: str) -> None:
        metric = self._metric(Histogram, name, tuple(sorted(labels)))
        (metric.labels(**labels) if labels else metric).observe(value)


    def gauge(self, name: str, read: Callable[[], Reading], labels: tuple[str, ...] = ()) -> None:
        """spiderduck_<scope>_<name>, the value `read()` returns when scraped. With `labels`,
        read() yields (label values, value) pairs, one series each."""
        full = self._full(name)
        with _LOCK:
            metric = _METRICS.get(full)
            if metric is None:
                metric = _METRICS[full] = _Gauge(full, f"{self.scope or 'spiderduck'} {name.replace('_', ' ')}", labels)
                REGISTRY.register(metric)
        metric.set_reader(read)


def recorder(scope: str) -> Recorder:
    return Recorder(scope)


def serve(listen: str) -> None:
    """Serve /metrics on host:port once per process (a daemon thread)."""
    if not listen or listen in _SERVING:
        return
    host, _, port = listen.rpartition(":")
    try:
        start_http_server(int(port), addr=host or "0.0.0.0")
    except (ValueError, OSError) as exc:
        raise ConfigError(f"metrics_listen {listen!r}: {exc}") from exc
    _SERVING.add(listen)
