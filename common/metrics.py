"""Metrics: one recorder per scope, stable hierarchical names, Prometheus exposition.

    rec = metrics.recorder("scheduler")
    rec.count("processed", status="OK", resolution="CRAWLED")   # spiderduck_scheduler_processed_total
    rec.observe("latency_seconds", 0.12)                        # spiderduck_scheduler_latency_seconds

`serve(listen)` exposes /metrics over HTTP (config `metrics_listen`; empty = off).
"""
from __future__ import annotations

import threading

from prometheus_client import Counter, Histogram, start_http_server

from common.errors import ConfigError

_LOCK = threading.Lock()
_METRICS: dict[str, Counter | Histogram] = {}
_SERVING: set[str] = set()


class Recorder:
    def __init__(self, scope: str):
        self.scope = scope

    def _metric(self, kind, name: str, labels: tuple[str, ...]):
        full = f"spiderduck_{self.scope}_{name}"
        with _LOCK:
            metric = _METRICS.get(full)
            if metric is None:
                metric = _METRICS[full] = kind(full, f"{self.scope} {name.replace('_', ' ')}",
                                               labels)
        return metric

    def count(self, name: str, amount: float = 1, **labels: str) -> None:
        metric = self._metric(Counter, name, tuple(sorted(labels)))
        (metric.labels(**labels) if labels else metric).inc(amount)

    def observe(self, name: str, value: float, **labels: str) -> None:
        metric = self._metric(Histogram, name, tuple(sorted(labels)))
        (metric.labels(**labels) if labels else metric).observe(value)


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
