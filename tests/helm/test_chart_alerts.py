"""The chart's monitoring: the PrometheusRule (prometheusRule.enabled) and the Grafana dashboard
ConfigMap (grafanaDashboard.enabled), both off by default.

The alert rules exist once, in helm/spiderduck/templates/_alerts.tpl. These tests render the
chart with the flag on, take the PrometheusRule's groups as a Prometheus rules file, and run it
through `promtool check rules` and `promtool test rules` with input series proving that each
alert fires when it should and stays quiet when it should not (promtool comes from Debian's
prometheus package, which bin/test installs; without it those two tests skip).
"""
from __future__ import annotations

import copy
import json
import pathlib
import re
import shutil
import subprocess

import pytest
import yaml

from support.chart import CHART, helm, render


PROMTOOL = shutil.which("promtool") or ("/usr/bin/promtool" if pathlib.Path("/usr/bin/promtool").exists()
                                        else None)
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None,
    reason="promtool not found (Debian package prometheus; bin/test installs it): the alert "
           "rules cannot be checked or unit-tested without it",
)

ALERTS = ["SpiderDuckNoEventsProcessed", "SpiderDuckDeadLettersGrowing", "SpiderDuckDomainHalted",
          "SpiderDuckFetcherShardsUnowned", "SpiderDuckLatencyHigh"]

# The metrics the services export (src/spiderduck/core/metrics.py and its callers); alerts and dashboard may
# use nothing else (a typo would be a panel or an alert silently reading nothing).
METRICS = {
    "spiderduck_scheduler_processed_total", "spiderduck_scheduler_latency_seconds_bucket",
    "spiderduck_scheduler_latency_seconds_sum", "spiderduck_scheduler_latency_seconds_count",
    "spiderduck_scheduler_messages_total", "spiderduck_scheduler_in_flight",
    "spiderduck_scheduler_extraction_failures_total", "spiderduck_fetcher_requests_total",
    "spiderduck_fetcher_origin_seconds_bucket", "spiderduck_fetcher_queued_seconds_bucket",
    "spiderduck_fetcher_queued", "spiderduck_fetcher_queue_depth", "spiderduck_fetcher_domains",
    "spiderduck_fetcher_shards_held", "spiderduck_fetcher_shards",
}
MONITORING_ON = {"prometheusRule": {"enabled": True}, "grafanaDashboard": {"enabled": True},
                 "serviceMonitor": {"enabled": True}}




def kinds(docs: list[dict], kind: str) -> list[dict]:
    return [d for d in docs if d["kind"] == kind]


def dashboards(docs: list[dict]) -> list[dict]:
    return [d for d in kinds(docs, "ConfigMap") if d["metadata"]["name"].endswith("-dashboard")]


def rules_of(docs: list[dict]) -> dict[str, dict]:
    (rule,) = kinds(docs, "PrometheusRule")
    return {r["alert"]: r for g in rule["spec"]["groups"] for r in g["rules"]}


def metric_names(expr: str) -> set[str]:
    return set(re.findall(r"\bspiderduck_[a-z_]+", expr))


@pytest.fixture(scope="module")
def monitoring_docs() -> list[dict]:
    return render(MONITORING_ON)


# ---- flags ------------------------------------------------------------------------------------

def test_rule_and_dashboard_render_only_when_their_flag_is_on():
    default = render()
    assert not kinds(default, "PrometheusRule") and not dashboards(default)
    rule_only = render({"prometheusRule": {"enabled": True}})
    assert len(kinds(rule_only, "PrometheusRule")) == 1 and not dashboards(rule_only)
    dash_only = render({"grafanaDashboard": {"enabled": True}})
    assert not kinds(dash_only, "PrometheusRule") and len(dashboards(dash_only)) == 1


def test_monitoring_values_pass_strict_lint():
    report = helm.lint(str(CHART), MONITORING_ON, strict=True)
    assert report["errors"] == [], report
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


# ---- the PrometheusRule -----------------------------------------------------------------------

def test_prometheus_rule_has_every_alert_scoped_to_the_release(monitoring_docs):
    (rule,) = kinds(monitoring_docs, "PrometheusRule")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    rules = rules_of(monitoring_docs)
    assert sorted(rules) == sorted(ALERTS)
    for name, r in rules.items():
        assert r["labels"]["severity"] in ("critical", "warning"), name
        assert r["annotations"]["summary"] and r["annotations"]["description"], name
        assert metric_names(r["expr"]) and metric_names(r["expr"]) <= METRICS, (name, r["expr"])
        # Every selector in the expression names this release's targets.
        for selector in re.findall(r"spiderduck_[a-z_]+\{([^}]*)\}", r["expr"]):
            assert 'namespace="crawl"' in selector and 'job=~"sd-spiderduck-.+"' in selector, name
    assert rules["SpiderDuckFetcherShardsUnowned"]["expr"].count("spiderduck_fetcher_shards_held") == 1


def test_alert_thresholds_durations_and_switches_come_from_values():
    docs = render({"prometheusRule": {
        "enabled": True, "labels": {"release": "kps"}, "additionalLabels": {"team": "crawl"},
        "seriesSelector": 'cluster="eu1"',
        "alerts": {"latencyHigh": {"thresholdSeconds": 2.5, "quantile": 0.95, "for": "3m",
                                   "severity": "critical"},
                   "deadLettersGrowing": {"threshold": 10, "window": "1h"},
                   "domainHalted": {"enabled": False}}}})
    (rule,) = kinds(docs, "PrometheusRule")
    assert rule["metadata"]["labels"]["release"] == "kps"
    rules = rules_of(docs)
    assert "SpiderDuckDomainHalted" not in rules and len(rules) == len(ALERTS) - 1
    latency = rules["SpiderDuckLatencyHigh"]
    assert latency["expr"].startswith("histogram_quantile(0.95,") and latency["expr"].endswith("> 2.5")
    assert latency["for"] == "3m"
    assert latency["labels"] == {"severity": "critical", "team": "crawl"}
    dead = rules["SpiderDuckDeadLettersGrowing"]["expr"]
    assert '[1h]' in dead and dead.endswith("> 10")
    assert 'outcome="dead_lettered",cluster="eu1"' in dead
    everything_off = render({"prometheusRule": {"enabled": True, "alerts": {
        name: {"enabled": False} for name in ("noEventsProcessed", "deadLettersGrowing",
                                              "domainHalted", "fetcherShardsUnowned",
                                              "latencyHigh")}}})
    assert kinds(everything_off, "PrometheusRule")[0]["spec"]["groups"] == []


# ---- promtool ---------------------------------------------------------------------------------

def _rules_file(tmp_path: pathlib.Path, docs: list[dict], *, annotations: bool = True) -> pathlib.Path:
    (rule,) = kinds(docs, "PrometheusRule")
    groups = copy.deepcopy(rule["spec"]["groups"])
    if not annotations:
        for group in groups:
            for r in group["rules"]:
                r.pop("annotations", None)
    path = tmp_path / "spiderduck-rules.yaml"
    path.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    return path


def _promtool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=60)


@needs_promtool
def test_promtool_checks_the_rendered_rules(tmp_path, monitoring_docs):
    """Syntax of every expression, duration and annotation template, as Prometheus loads them."""
    path = _rules_file(tmp_path, monitoring_docs)
    result = _promtool("check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(ALERTS)} rules found" in result.stdout + result.stderr


# Label sets of the series a ServiceMonitor scrapes from release "sd" in namespace "crawl", and of
# another release in the same namespace (which the alerts must ignore).
SCHED = 'namespace="crawl",job="sd-spiderduck-scheduler-metrics",pod="sd-spiderduck-scheduler-0"'
FETCH0 = 'namespace="crawl",job="sd-spiderduck-fetcher",pod="sd-spiderduck-fetcher-0"'
FETCH1 = 'namespace="crawl",job="sd-spiderduck-fetcher",pod="sd-spiderduck-fetcher-1"'
OTHER_SCHED = 'namespace="crawl",job="other-spiderduck-scheduler-metrics",pod="other-0"'
OTHER_FETCH = 'namespace="crawl",job="other-spiderduck-fetcher",pod="other-f-0"'


def _series(name: str, labels: str, values: str) -> dict:
    return {"series": f"{name}{{{labels}}}", "values": values}


def _latency(labels: str, per_minute: dict[str, int]) -> list[dict]:
    """Histogram buckets growing by per_minute observations (cumulative counts per bucket)."""
    return [_series("spiderduck_scheduler_latency_seconds_bucket", f'{labels},le="{le}"',
                    f"0+{n}x60") for le, n in per_minute.items()]


FAST = {"0.5": 100, "1.0": 100, "2.5": 100, "5.0": 100, "7.5": 100, "10.0": 100, "+Inf": 100}
SLOW = {"0.5": 10, "1.0": 10, "2.5": 10, "5.0": 10, "7.5": 20, "10.0": 100, "+Inf": 100}


def _cases() -> list[dict]:
    """promtool unit tests: (input series, [(time, alert, expected labels or [] for quiet)])."""
    def case(series, checks):
        return {"interval": "1m", "input_series": series, "alert_rule_test": [
            {"eval_time": t, "alertname": a, "exp_alerts": [{"exp_labels": e} for e in exp]}
            for t, a, exp in checks]}

    crit, warn = {"severity": "critical"}, {"severity": "warning"}
    healthy = [
        _series("spiderduck_scheduler_processed_total", f'{SCHED},status="OK",resolution="CRAWLED"',
                "0+60x90"),
        _series("spiderduck_scheduler_messages_total", f'{SCHED},outcome="acked"', "0+60x90"),
        _series("spiderduck_scheduler_messages_total", f'{SCHED},outcome="dead_lettered"', "3x90"),
        _series("spiderduck_fetcher_domains", f'{FETCH0},state="active"', "40x90"),
        _series("spiderduck_fetcher_domains", f'{FETCH0},state="paused"', "5x90"),
        _series("spiderduck_fetcher_domains", f'{FETCH0},state="halted"', "0x90"),
        _series("spiderduck_fetcher_shards_held", FETCH0, "512x90"),
        _series("spiderduck_fetcher_shards_held", FETCH1, "512x90"),
        _series("spiderduck_fetcher_shards", FETCH0, "1024x90"),
        _series("spiderduck_fetcher_shards", FETCH1, "1024x90"),
        # Another release in the namespace is in trouble: not ours to page about.
        _series("spiderduck_fetcher_domains", f'{OTHER_FETCH},state="halted"', "3x90"),
        _series("spiderduck_fetcher_shards_held", OTHER_FETCH, "0x90"),
        _series("spiderduck_fetcher_shards", OTHER_FETCH, "1024x90"),
        _series("spiderduck_scheduler_messages_total", f'{OTHER_SCHED},outcome="dead_lettered"',
                "0+5x90"),
        *_latency(SCHED, FAST),
        *_latency(OTHER_SCHED, SLOW),
    ]
    return [
        # Everything healthy: every alert stays quiet, all along.
        case(healthy, [(t, a, []) for t in ("10m", "45m", "85m") for a in ALERTS]),
        # Processing stops at 20m: the 10m rate is zero from 30m, firing 10m later.
        case([_series("spiderduck_scheduler_processed_total",
                      f'{SCHED},status="OK",resolution="CRAWLED"', "0+60x20 1200x60")],
             [("25m", "SpiderDuckNoEventsProcessed", []),
              ("35m", "SpiderDuckNoEventsProcessed", []),           # pending
              ("45m", "SpiderDuckNoEventsProcessed", [crit])]),
        # No scheduler reports at all (down, or not scraped): that is no events either.
        case([_series("spiderduck_fetcher_shards", FETCH0, "1024x30")],
             [("5m", "SpiderDuckNoEventsProcessed", []),
              ("15m", "SpiderDuckNoEventsProcessed", [crit])]),
        # Dead letters arriving: one a minute from 10m.
        case([_series("spiderduck_scheduler_messages_total", f'{SCHED},outcome="dead_lettered"',
                      "0x10 1+1x50"),
              _series("spiderduck_scheduler_messages_total", f'{SCHED},outcome="acked"', "0+60x60")],
             [("9m", "SpiderDuckDeadLettersGrowing", []),
              ("13m", "SpiderDuckDeadLettersGrowing", []),          # pending
              ("20m", "SpiderDuckDeadLettersGrowing", [warn])]),
        # One burst of dead letters ages out of the 15m window: quiet again.
        case([_series("spiderduck_scheduler_messages_total", f'{SCHED},outcome="dead_lettered"',
                      "0x10 4x80")],
             [("20m", "SpiderDuckDeadLettersGrowing", [warn]),
              ("40m", "SpiderDuckDeadLettersGrowing", [])]),
        # A domain halted at 10m and left halted; another one halted only briefly.
        case([_series("spiderduck_fetcher_domains", f'{FETCH0},state="halted"', "0x10 1x50"),
              _series("spiderduck_fetcher_domains", f'{FETCH1},state="halted"', "0x30 1x2 0x30")],
             [("12m", "SpiderDuckDomainHalted", []),
              ("20m", "SpiderDuckDomainHalted", [warn])]),
        case([_series("spiderduck_fetcher_domains", f'{FETCH1},state="halted"', "0x30 1x2 0x30")],
             [("32m", "SpiderDuckDomainHalted", []),
              ("40m", "SpiderDuckDomainHalted", [])]),
        # fetcher-1 is gone at 10m and its shards stay unowned; a 2-minute handover does not page.
        case([_series("spiderduck_fetcher_shards_held", FETCH0, "512x60"),
              _series("spiderduck_fetcher_shards_held", FETCH1, "512x10 _x50"),
              _series("spiderduck_fetcher_shards", FETCH0, "1024x60"),
              _series("spiderduck_fetcher_shards", FETCH1, "1024x10 _x50")],
             [("9m", "SpiderDuckFetcherShardsUnowned", []),
              ("13m", "SpiderDuckFetcherShardsUnowned", []),        # pending
              ("25m", "SpiderDuckFetcherShardsUnowned", [crit])]),
        case([_series("spiderduck_fetcher_shards_held", FETCH0, "512x60"),
              _series("spiderduck_fetcher_shards_held", FETCH1, "512x10 0x2 512x50"),
              _series("spiderduck_fetcher_shards", FETCH0, "1024x60"),
              _series("spiderduck_fetcher_shards", FETCH1, "1024x60")],
             [("11m", "SpiderDuckFetcherShardsUnowned", []),
              ("20m", "SpiderDuckFetcherShardsUnowned", [])]),
        # No fetcher reports its shards at all.
        case([_series("spiderduck_scheduler_in_flight", SCHED, "3x30")],
             [("3m", "SpiderDuckFetcherShardsUnowned", []),
              ("10m", "SpiderDuckFetcherShardsUnowned", [crit])]),
        # Slow: p99 near 10 s, for the 15m the alert waits.
        case(_latency(SCHED, SLOW),
             [("10m", "SpiderDuckLatencyHigh", []),
              ("25m", "SpiderDuckLatencyHigh", [warn])]),
    ]


@needs_promtool
def test_promtool_alert_unit_tests(tmp_path, monitoring_docs):
    # Annotations are left out here (promtool would compare their rendered text); `check rules`
    # above validates their templates.
    rules = _rules_file(tmp_path, monitoring_docs, annotations=False)
    spec = tmp_path / "spiderduck-rules.test.yaml"
    spec.write_text(yaml.safe_dump({"rule_files": [rules.name], "evaluation_interval": "1m",
                                    "tests": _cases()}, sort_keys=False))
    result = _promtool("test", "rules", str(spec))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout + result.stderr


# ---- the Grafana dashboard --------------------------------------------------------------------

def test_dashboard_configmap_carries_the_sidecar_label_and_valid_json(monitoring_docs):
    (cm,) = dashboards(monitoring_docs)
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert cm["metadata"]["namespace"] == "crawl"
    dashboard = json.loads(cm["data"]["spiderduck.json"])
    assert dashboard["uid"] == "spiderduck" and dashboard["title"] == "SpiderDuck"
    assert json.loads((CHART / "files" / "dashboard.json").read_text()) == dashboard
    moved = dashboards(render({"grafanaDashboard": {"enabled": True, "namespace": "monitoring",
                                                    "label": "dashboards", "labelValue": "spiderduck"}}))
    assert moved[0]["metadata"]["namespace"] == "monitoring"
    assert moved[0]["metadata"]["labels"]["dashboards"] == "spiderduck"


def test_dashboard_panels_cover_the_service_metrics():
    dashboard = json.loads((CHART / "files" / "dashboard.json").read_text())
    panels = dashboard["panels"]
    exprs = {p["title"]: " ".join(t["expr"] for t in p["targets"]) for p in panels}
    used = set().union(*(metric_names(e) for e in exprs.values()))
    assert used <= METRICS, used - METRICS
    wanted = {   # what the panel shows -> the expression it needs
        "processed rate by status": r"sum by \(status\) \(rate\(spiderduck_scheduler_processed_total",
        "latency p50": r"histogram_quantile\(0\.5, sum by \(le\) \(rate\(spiderduck_scheduler_latency_seconds_bucket",
        "latency p99": r"histogram_quantile\(0\.99, sum by \(le\) \(rate\(spiderduck_scheduler_latency_seconds_bucket",
        "in-flight URLs": r"spiderduck_scheduler_in_flight",
        "queued requests": r"spiderduck_fetcher_queued\{",
        "top N domain queues": r"topk\(\$topn, .*spiderduck_fetcher_queue_depth",
        "domains by state": r"sum by \(state\) \(spiderduck_fetcher_domains",
        "shards held": r"sum\(spiderduck_fetcher_shards_held",
        "shards total": r"max\(spiderduck_fetcher_shards\{",
        "dead letters": r'spiderduck_scheduler_messages_total\{outcome="dead_lettered"',
        "fetcher requests by status": r"sum by \(status\) \(rate\(spiderduck_fetcher_requests_total",
    }
    everything = "\n".join(exprs.values())
    missing = [what for what, pattern in wanted.items() if not re.search(pattern, everything)]
    assert not missing, missing
    # Every panel reads the chosen data source and namespace; ids and positions are unique.
    for panel in panels:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        for target in panel["targets"]:
            assert 'namespace=~"$namespace"' in target["expr"], (panel["title"], target["expr"])
    assert len({p["id"] for p in panels}) == len(panels)
    cells = {(p["gridPos"]["x"], p["gridPos"]["y"]) for p in panels}
    assert len(cells) == len(panels)
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    assert {"datasource", "namespace", "topn"} <= variables
