"""The Helm chart helm/spiderduck, linted and rendered by Helm itself.

Helm runs in-process through the `helm-python-sdk` wheel (Helm's Go SDK behind a C ABI), so no
`helm` binary and no cluster are needed. The rendered manifests are parsed and checked for what
the deployment promises: the workloads, non-root read-only pods with gRPC probes and resources,
the fetchers' DMZ network policy, and a config.yaml that the service's own loader accepts.
"""
from __future__ import annotations

import ipaddress

import pytest
import yaml

from support.chart import CHART, ROOT, helm, one, render, role_config

from spiderduck.core import config as sd_config


PRIVATE_CIDRS = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16"]

# A production-like install: everything external, NATS and memcached outside the cluster.
EXTERNAL = {
    "nats": {"url": "nats://nats-1.example.net:4222,nats://nats-2.example.net:4222", "replicas": 3},
    "cassandra": {"contactPoints": ["cass-a.example.net", "cass-b.example.net"], "port": 9042,
                  "keyspace": "sd_prod", "consistency": "LOCAL_QUORUM"},
    "memcached": {"host": "robots-cache.example.net", "port": 11211},
    "hdfs": {"namenode": "hdfs-nn.example.net:9870", "path": "/crawl/warc", "user": "crawler"},
    "networkPolicy": {
        "nats": {"cidrs": ["203.0.113.10/32", "203.0.113.11/32"],
                 "namespaceSelector": None, "podSelector": None},
        "memcached": {"cidrs": ["198.51.100.7/32"], "namespaceSelector": None, "podSelector": None},
    },
}






def pod_specs(docs: list[dict]) -> dict[str, dict]:
    return {f"{d['kind']}/{d['metadata']['name']}": d["spec"]["template"]["spec"]
            for d in docs if d["kind"] in ("StatefulSet", "Deployment", "Job")}


@pytest.fixture(scope="module")
def default_docs() -> list[dict]:
    return render()


@pytest.fixture(scope="module")
def external_docs() -> list[dict]:
    return render(EXTERNAL)


# ---- lint -------------------------------------------------------------------------------------

@pytest.mark.parametrize("values", [None, EXTERNAL, {"serviceMonitor": {"enabled": True}}],
                         ids=["defaults", "external", "servicemonitor"])
def test_lint_strict_passes(values):
    report = helm.lint(str(CHART), values, strict=True)
    assert report["total_charts_linted"] == 1
    assert report["errors"] == []
    problems = [m for m in report["messages"] if m["severity"] >= 2]
    assert problems == [], problems


def test_chart_metadata():
    with helm.Chart.load(str(CHART)) as chart:
        assert chart.metadata["apiVersion"] == "v2"
        assert chart.name == "spiderduck"


# ---- what is rendered -------------------------------------------------------------------------

def test_kinds_present(default_docs):
    one(default_docs, "StatefulSet", "fetcher")
    headless = one(default_docs, "Service", "fetcher")
    assert headless["spec"]["clusterIP"] == "None"
    one(default_docs, "Deployment", "scheduler")
    hpa = one(default_docs, "HorizontalPodAutoscaler", "scheduler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    one(default_docs, "Deployment", "metadata-api")
    one(default_docs, "Service", "metadata-api")
    one(default_docs, "Service", "web")
    pdbs = [d for d in default_docs if d["kind"] == "PodDisruptionBudget"]
    assert sorted(p["metadata"]["labels"]["app.kubernetes.io/component"] for p in pdbs) == \
        ["fetcher", "metadata-api", "scheduler"]
    assert one(default_docs, "NetworkPolicy", "fetcher")
    assert [d for d in default_docs if d["kind"] == "ConfigMap"
            and "helm.sh/hook" not in d["metadata"].get("annotations", {})]
    assert not [d for d in default_docs if d["kind"] == "ServiceMonitor"]


def test_servicemonitor_only_when_enabled():
    docs = render({"serviceMonitor": {"enabled": True, "labels": {"release": "prom"}}})
    (monitor,) = [d for d in docs if d["kind"] == "ServiceMonitor"]
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "prom"
    assert monitor["spec"]["endpoints"][0]["port"] == "metrics"
    # Every role exposes the port through a Service the monitor selects.
    selected = [d for d in docs if d["kind"] == "Service"
                and d["metadata"]["labels"].get("spiderduck.io/metrics") == "true"]
    assert sorted(s["metadata"]["labels"]["app.kubernetes.io/component"] for s in selected) == \
        ["fetcher", "metadata-api", "scheduler"]
    assert all(any(p["name"] == "metrics" for p in s["spec"]["ports"]) for s in selected)
    # ...and every role's process serves /metrics on that port (config metrics_listen).
    for workload in (d for d in docs if d["kind"] in ("StatefulSet", "Deployment")):
        env = {e["name"]: e.get("value") for c in workload["spec"]["template"]["spec"]["containers"]
               for e in c.get("env", [])}
        assert env.get("SPIDERDUCK_METRICS_LISTEN") == "0.0.0.0:9090", workload["metadata"]["name"]


def test_pdbs_select_their_workloads(default_docs):
    for component in ("fetcher", "scheduler", "metadata-api"):
        pdb = one(default_docs, "PodDisruptionBudget", component)
        kind = "StatefulSet" if component == "fetcher" else "Deployment"
        workload = one(default_docs, kind, component)
        labels = workload["spec"]["template"]["metadata"]["labels"]
        assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert ("minAvailable" in pdb["spec"]) != ("maxUnavailable" in pdb["spec"])


def test_pdb_refuses_both_bounds():
    with pytest.raises(helm.HelmError, match="not both"):
        render({"fetcher": {"pdb": {"minAvailable": 1, "maxUnavailable": 1}}})


def test_hpa_scales_the_scheduler(default_docs):
    hpa = one(default_docs, "HorizontalPodAutoscaler", "scheduler")
    deployment = one(default_docs, "Deployment", "scheduler")
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                            "name": deployment["metadata"]["name"]}
    assert hpa["spec"]["minReplicas"] == 2 and hpa["spec"]["maxReplicas"] == 10
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu"
    assert metric["resource"]["target"]["averageUtilization"] == 70
    assert "replicas" not in deployment["spec"], "the HPA owns the scheduler's replica count"
    fixed = render({"scheduler": {"autoscaling": {"enabled": False}, "replicas": 4}})
    assert one(fixed, "Deployment", "scheduler")["spec"]["replicas"] == 4
    assert not [d for d in fixed if d["kind"] == "HorizontalPodAutoscaler"]


# ---- pods -------------------------------------------------------------------------------------

def test_every_pod_is_locked_down(default_docs):
    specs = pod_specs(default_docs)
    assert len(specs) == 4, sorted(specs)   # fetcher, scheduler, metadata-api, schema job
    for where, spec in specs.items():
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True and pod["runAsUser"] == 10001, where
        assert pod["seccompProfile"]["type"] == "RuntimeDefault", where
        assert spec["automountServiceAccountToken"] is False, where
        volumes = {v["name"]: v for v in spec["volumes"]}
        for container in spec["containers"]:
            sc = container["securityContext"]
            assert sc["runAsNonRoot"] is True and sc["runAsUser"] == 10001, where
            assert sc["readOnlyRootFilesystem"] is True, where
            assert sc["allowPrivilegeEscalation"] is False, where
            assert sc["capabilities"]["drop"] == ["ALL"], where
            assert sc["seccompProfile"]["type"] == "RuntimeDefault", where
            for bound in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(container["resources"][bound]), (where, bound)
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            assert "emptyDir" in volumes[mounts["/tmp"]], where
            assert "emptyDir" in volumes[mounts["/var/lib/spiderduck"]], where
            assert "configMap" in volumes[mounts["/etc/spiderduck"]], where
            assert container["args"][-2:] == ["--config", "/etc/spiderduck/config.yaml"], where


def test_a_credentials_secret_reaches_every_pod_and_the_config_holds_none():
    """The README's way to give Cassandra a password: a Secret setting SPIDERDUCK_METADATA_STORE,
    through extraEnvFrom, on every role and on the schema Job; the ConfigMap never has it."""
    docs = render({**EXTERNAL, "extraEnvFrom": [{"secretRef": {"name": "spiderduck-stores"}}]})
    specs = pod_specs(docs)
    assert len(specs) == 4, sorted(specs)
    for where, spec in specs.items():
        for container in spec["containers"]:
            assert {"secretRef": {"name": "spiderduck-stores"}} in container.get("envFrom", []), where
    for cm in (d for d in docs if d["kind"] == "ConfigMap" and "config.yaml" in d["data"]):
        assert "@" not in yaml.safe_load(cm["data"]["config.yaml"]).get("metadata_store", "")


@pytest.mark.parametrize("kind,component,port", [
    ("StatefulSet", "fetcher", 50052),
    ("Deployment", "scheduler", 50053),
    ("Deployment", "metadata-api", 50051),
])
def test_roles_run_with_grpc_probes(default_docs, kind, component, port):
    (container,) = one(default_docs, kind, component)["spec"]["template"]["spec"]["containers"]
    assert container["args"][0] == component
    assert {"name": "grpc", "containerPort": port, "protocol": "TCP"} in container["ports"]
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["grpc"]["port"] == port, probe
    assert container["image"] == "ghcr.io/spiderduck/spiderduck:0.1.0"


def test_fetcher_advertises_its_stable_pod_name(default_docs):
    sts = one(default_docs, "StatefulSet", "fetcher")
    headless = one(default_docs, "Service", "fetcher")
    assert sts["spec"]["serviceName"] == headless["metadata"]["name"]
    (container,) = sts["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert env["POD_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
    assert env["SPIDERDUCK_FETCHER__ID"]["value"] == "$(POD_NAME)"
    assert env["SPIDERDUCK_FETCHER__ADVERTISE"]["value"] == \
        f"$(POD_NAME).{headless['metadata']['name']}.$(POD_NAMESPACE).svc:50052"
    # Variables referenced with $(...) must be defined earlier in the list.
    names = [e["name"] for e in container["env"]]
    assert names.index("POD_NAME") < names.index("SPIDERDUCK_FETCHER__ADVERTISE")


def test_schema_hook_job(default_docs):
    job = one(default_docs, "Job", "schema")
    hooks = job["metadata"]["annotations"]["helm.sh/hook"].split(",")
    assert hooks == ["pre-install", "pre-upgrade"]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["args"][:2] == ["schema", "apply"]
    # Hooks run before the release's ConfigMap exists: the job's config must be a hook too.
    config_name = {v["name"]: v for v in job["spec"]["template"]["spec"]["volumes"]}["config"]
    hook_cm = [d for d in default_docs if d["kind"] == "ConfigMap"
               and d["metadata"]["name"] == config_name["configMap"]["name"]]
    assert hook_cm and "pre-install" in hook_cm[0]["metadata"]["annotations"]["helm.sh/hook"]
    assert int(hook_cm[0]["metadata"]["annotations"]["helm.sh/hook-weight"]) < \
        int(job["metadata"]["annotations"]["helm.sh/hook-weight"])
    off = render({"schema": {"applyOnInstall": False}})
    assert not [d for d in off if d["kind"] == "Job"]


# ---- config.yaml ------------------------------------------------------------------------------

def test_each_role_config_names_the_external_services_it_uses(external_docs, tmp_path):
    """One ConfigMap per role, holding only what that role reaches: the fetchers know NATS and
    memcached, not the stores; the schedulers the two stores; the metadata API its store and the
    schedulers' content store (ExplainUrl re-reads stored pages)."""
    fetcher, scheduler, api, schema = (role_config(external_docs, role) for role in
                                       ("fetcher", "scheduler", "metadata-api", "schema"))
    store = "cassandra://cass-a.example.net,cass-b.example.net:9042/sd_prod?consistency=LOCAL_QUORUM&replication=3"
    content = "hdfs://hdfs-nn.example.net:9870/crawl/warc?user=crawler"
    for cfg in (fetcher, scheduler, api):
        assert cfg["nats_url"] == EXTERNAL["nats"]["url"] and cfg["nats_replicas"] == 3
    assert fetcher["robots_cache"] == "memcached://robots-cache.example.net:11211"
    assert fetcher["fetcher"] == {"listen": "0.0.0.0:50052"}
    assert not {"metadata_store", "content_store", "metadata_api", "web"} & set(fetcher)
    assert (scheduler["metadata_store"], scheduler["content_store"]) == (store, content)
    assert not {"robots_cache", "metadata_api", "web", "fetcher"} & set(scheduler)
    assert api["metadata_store"] == store and api["content_store"] == content
    assert api["metadata_api"] == {"listen": "0.0.0.0:50051", "explain_workers": 1}
    assert not {"robots_cache", "fetcher"} & set(api)
    assert schema == {"data_dir": "/var/lib/spiderduck", "metadata_store": store}
    # Each pod mounts its own role's ConfigMap, and its checksum rolls it.
    for kind, role in (("StatefulSet", "fetcher"), ("Deployment", "scheduler"),
                       ("Deployment", "metadata-api"), ("Job", "schema")):
        volumes = {v["name"]: v for v in one(external_docs, kind, role)["spec"]["template"]["spec"]["volumes"]}
        assert volumes["config"]["configMap"]["name"] == f"sd-spiderduck-{role}-config"
    # The service's own loader accepts each file, with the pod's environment on top.
    for role, cfg in (("fetcher", fetcher), ("scheduler", scheduler), ("metadata-api", api), ("schema", schema)):
        path = tmp_path / f"{role}.yaml"
        path.write_text(yaml.safe_dump(cfg))
        sd_config.load(str(path), env={"SPIDERDUCK_DATA_DIR": "/var/lib/spiderduck"})
    path = tmp_path / "fetcher.yaml"
    settings = sd_config.load(str(path), env={
        "SPIDERDUCK_FETCHER__ADVERTISE": "sd-spiderduck-fetcher-0.sd-spiderduck-fetcher.crawl.svc:50052",
        "SPIDERDUCK_FETCHER__ID": "sd-spiderduck-fetcher-0",
        "SPIDERDUCK_DATA_DIR": "/var/lib/spiderduck",
    })
    assert settings.nats_url == EXTERNAL["nats"]["url"] and settings.nats_replicas == 3
    assert settings.fetcher.advertise.endswith(".svc:50052")
    assert settings.fetcher.id == "sd-spiderduck-fetcher-0"
    assert sd_config.load(str(tmp_path / "scheduler.yaml"), env={}).metadata_store_url.startswith("cassandra://")


def test_replication_datacenter_and_roll_limits_reach_the_store_urls():
    """What the schema Job and the stores read: the chart renders them into the URLs, and the
    stores' own parsers take them."""
    from spiderduck.stores.cassandra_cluster import CassandraOptions
    from spiderduck.stores.hdfs_content import HdfsLocation
    values = {**EXTERNAL,
              "cassandra": {**EXTERNAL["cassandra"], "dc": "eu-west", "replication": 5},
              "hdfs": {**EXTERNAL["hdfs"], "rollBytes": 1073741824, "rollSeconds": 600}}
    cfg = role_config(render(values), "scheduler")
    options = CassandraOptions.from_url(cfg["metadata_store"])
    assert (options.dc, options.replication, options.consistency) == ("eu-west", 5, "LOCAL_QUORUM")
    location = HdfsLocation.parse(cfg["content_store"])
    assert (location.roll.roll_bytes, location.roll.roll_seconds) == (1 << 30, 600.0)
    assert location.user == "crawler" and location.root == "/crawl/warc"


def test_config_values_merge_over_the_rendered_keys(tmp_path):
    docs = render({"config": {"log_level": "DEBUG", "fetcher": {"default_rate": 2}}})
    cfg = role_config(docs, "fetcher")
    assert cfg["log_level"] == "DEBUG"
    assert cfg["fetcher"] == {"listen": "0.0.0.0:50052", "default_rate": 2}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert sd_config.load(str(path), env={}).fetcher.default_rate == 2.0
    # config reaches every role, the schema Job too.
    for role in ("scheduler", "metadata-api", "schema"):
        assert role_config(docs, role)["fetcher"]["default_rate"] == 2, role


def test_config_change_rolls_the_pods_that_read_it():
    def checksum(docs, kind="StatefulSet", role="fetcher"):
        return one(docs, kind, role)["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
    assert checksum(render()) != checksum(render({"config": {"log_level": "DEBUG"}}))
    # A change to the schedulers' config alone leaves the fetchers running.
    hdfs = render({"hdfs": {"user": "other"}})
    assert checksum(render()) == checksum(hdfs)
    assert checksum(render(), "Deployment", "scheduler") != checksum(hdfs, "Deployment", "scheduler")


# ---- network policies -------------------------------------------------------------------------

def _networks(rule: dict, key: str) -> list:
    return [ipaddress.ip_network(p["ipBlock"]["cidr"]) for p in rule.get(key, []) if "ipBlock" in p]


def test_fetcher_dmz_policy(external_docs):
    policy = one(external_docs, "NetworkPolicy", "fetcher")["spec"]
    assert sorted(policy["policyTypes"]) == ["Egress", "Ingress"]
    # In: only schedulers and the metadata API (its web UI's admin client), only on the gRPC port.
    (ingress,) = policy["ingress"]
    assert [peer["podSelector"]["matchLabels"]["app.kubernetes.io/component"]
            for peer in ingress["from"]] == ["scheduler", "metadata-api"]
    for peer in ingress["from"]:
        assert "namespaceSelector" not in peer and "ipBlock" not in peer
    assert ingress["ports"] == [{"protocol": "TCP", "port": 50052}]
    # Out: every rule names its destinations (no rule is open to all addresses).
    assert all(rule.get("to") for rule in policy["egress"])
    by_port = {}
    for rule in policy["egress"]:
        for port in rule.get("ports") or [{"port": "any"}]:
            by_port.setdefault(port["port"], []).append(rule)
    assert set(by_port) == {53, 4222, 11211, "any"}
    assert _networks(by_port[4222][0], "to") == [ipaddress.ip_network("203.0.113.10/32"),
                                                ipaddress.ip_network("203.0.113.11/32")]
    assert _networks(by_port[11211][0], "to") == [ipaddress.ip_network("198.51.100.7/32")]
    # Outside the cluster, the in-cluster selectors are gone (null in values drops them).
    assert len(by_port[4222][0]["to"]) == 2 and len(by_port[11211][0]["to"]) == 1
    (internet,) = by_port["any"]
    v4 = [p["ipBlock"] for p in internet["to"] if p["ipBlock"]["cidr"] == "0.0.0.0/0"]
    assert v4, "fetchers must reach any public IPv4 address"
    assert set(PRIVATE_CIDRS) <= set(v4[0]["except"])
    # No private, cluster or link-local address is reachable through the internet rule.
    for probe in ("10.96.0.1", "172.20.3.4", "192.168.1.1", "100.64.0.10", "169.254.169.254",
                  "fd00::1", "fe80::1"):
        addr = ipaddress.ip_address(probe)
        allowed = [b for b in (p["ipBlock"] for p in internet["to"])
                   if addr in ipaddress.ip_network(b["cidr"])
                   and not any(addr in ipaddress.ip_network(e) for e in b.get("except", []))]
        assert not allowed, f"{probe} reachable through {allowed}"
    assert ipaddress.ip_address("93.184.216.34") in ipaddress.ip_network(v4[0]["cidr"])


def test_fetcher_policy_needs_a_nats_destination():
    with pytest.raises(helm.HelmError, match="networkPolicy.nats"):
        render({"networkPolicy": {"nats": {"cidrs": [], "namespaceSelector": None,
                                           "podSelector": None}}})


def test_scheduler_and_api_policies(default_docs):
    sched = one(default_docs, "NetworkPolicy", "scheduler")["spec"]
    assert sched["ingress"] == []
    ports = {p["port"] for rule in sched["egress"] for p in rule["ports"]}
    assert {53, 4222, 50052, 9042, 9870, 9864} <= ports
    to_fetchers = [r for r in sched["egress"] if r["ports"] == [{"protocol": "TCP", "port": 50052}]]
    assert to_fetchers[0]["to"][0]["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == \
        "fetcher"
    api = one(default_docs, "NetworkPolicy", "metadata-api")["spec"]
    # HDFS too: ExplainUrl re-reads stored pages from the schedulers' content store.
    assert {p["port"] for rule in api["egress"] for p in rule["ports"]} == {53, 4222, 9042, 50052, 9870, 9864}
    # The metadata API's gRPC to any client; its web UI's port to none by default
    # (networkPolicy.webIngressFrom, tests/helm/test_chart_web.py).
    assert api["ingress"] == [{"ports": [{"protocol": "TCP", "port": 50051}]}]
    assert not [d for d in render({"networkPolicy": {"enabled": False}})
                if d["kind"] == "NetworkPolicy"]


# ---- the image --------------------------------------------------------------------------------

def test_dockerfile_is_multistage_and_non_root():
    text = (ROOT / "Dockerfile").read_text()
    stages = [line for line in text.splitlines() if line.startswith("FROM ")]
    assert len(stages) == 2 and stages[0].endswith(" AS builder")
    runtime = text.split(stages[1], 1)[1]
    assert "pip wheel . " in text and "--no-index" in runtime
    assert "build-essential" not in runtime and "gcc" not in runtime
    assert "USER 10001" in runtime
    assert 'ENTRYPOINT ["spiderduck"]' in runtime
    assert "PYTHONDONTWRITEBYTECODE=1" in runtime
    assert "ARG PYTHON_IMAGE=python:3.11-slim" in text
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and ".git" in ignored and "README.md" not in ignored
