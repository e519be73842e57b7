"""The chart's values: values.schema.json refuses wrong types and unknown keys (helm lint and
helm template/install alike), every value is in the schema and in the chart's README table, and
the values added for issue 16 reach the manifests (topologySpreadConstraints, the web UI and its
admin token, NOTES.txt).

Helm runs in-process through the `helm-python-sdk` wheel, as in test_chart.py.
"""
from __future__ import annotations

import json
import re

import pytest
import yaml

from support.chart import CHART, helm, manifests, one, render, role_config

from spiderduck.core import config as sd_config


VALUES = yaml.safe_load((CHART / "values.yaml").read_text())
SCHEMA = json.loads((CHART / "values.schema.json").read_text())
ROLES = {"fetcher": ("StatefulSet", "fetcher"), "scheduler": ("Deployment", "scheduler"),
         "metadataApi": ("Deployment", "metadata-api")}






def notes(values: dict | None = None, **kw) -> str:
    (text,) = [s for p, s in manifests(values, **kw).items() if p.endswith("NOTES.txt")]
    return text




def config_yaml(docs: list[dict]) -> dict:
    """The metadata API's config.yaml (the role serving the web UI)."""
    return role_config(docs, "metadata-api")


# ---- the schema, the values and the README stay in sync --------------------------------------

def _resolve(node: dict) -> dict:
    while "$ref" in node:
        node = SCHEMA["definitions"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _documented_as_one(node: dict) -> bool:
    """A schema node whose whole subtree is one README row: a Kubernetes type (a $ref to the
    schema's definitions) or a free-form map. Objects the chart owns are documented key by key."""
    return "$ref" in node or _resolve(node).get("additionalProperties") is not False


def _leaves(values: dict, schema: dict, prefix: str = "") -> list[tuple[str, object]]:
    """(dotted key, default) of every documented value, walking values.yaml and the schema."""
    out = []
    for key, value in values.items():
        path = f"{prefix}{key}"
        node = schema.get("properties", {}).get(key)
        assert node is not None, f"{path} (values.yaml) is not in values.schema.json"
        if isinstance(value, dict) and not _documented_as_one(node):
            out.extend(_leaves(value, _resolve(node), f"{path}."))
        else:
            out.append((path, value))
    return out


def _readme_rows() -> dict[str, tuple[str, str, str]]:
    rows = {}
    for line in (CHART / "README.md").read_text().splitlines():
        m = re.fullmatch(r"\| `([^`]+)` \| ([^|]+) \| `([^`]*)` \| (.*) \|", line)
        if m:
            assert m.group(1) not in rows, f"{m.group(1)} twice in the README table"
            rows[m.group(1)] = (m.group(2).strip(), m.group(3), m.group(4).strip())
    return rows


def test_schema_is_draft07_and_closed():
    assert SCHEMA["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert SCHEMA["additionalProperties"] is False
    with helm.Chart.load(str(CHART)) as chart:
        assert chart.schema == SCHEMA          # Helm loads it with the chart
        chart.validate_schema(VALUES)          # and the defaults pass it

    def closed(node: dict, path: str):
        node = _resolve(node)
        if node.get("properties"):
            assert node.get("additionalProperties") is False, f"{path or '<root>'} accepts unknown keys"
            for key, child in node["properties"].items():
                closed(child, f"{path}.{key}" if path else key)
    closed(SCHEMA, "")


def test_every_value_is_in_the_schema_and_the_readme_table():
    leaves = _leaves(VALUES, SCHEMA)
    rows = _readme_rows()
    assert len(leaves) > 100
    missing = [path for path, _ in leaves if path not in rows]
    assert not missing, f"values missing from helm/spiderduck/README.md's table: {missing}"
    stale = sorted(set(rows) - {path for path, _ in leaves})
    assert not stale, f"README rows for values that do not exist: {stale}"
    for path, default in leaves:
        kind, shown, description = rows[path]
        assert kind and description, f"{path}: type and description must not be empty"
        assert json.loads(shown) == default, f"{path}: README default {shown}, values.yaml {default!r}"


def test_schema_has_no_key_that_values_yaml_lacks():
    def walk(values: dict, node: dict, path: str):
        if "$ref" in node:          # a Kubernetes type: its fields are optional
            return
        props = node.get("properties", {})
        extra = set(props) - set(values) - ({"global"} if not path else set())
        if props and node.get("additionalProperties") is False:
            assert not extra, f"{path or '<root>'}: schema keys without a value: {sorted(extra)}"
        for key, value in values.items():
            if isinstance(value, dict) and key in props:
                walk(value, props[key], f"{path}.{key}" if path else key)
    walk(VALUES, SCHEMA, "")


# ---- bad values fail lint and render, naming the key -----------------------------------------

BAD = {
    "wrong type": ("fetcher:\n  replicas: three\n", "/fetcher/replicas"),
    "unknown key": ("fetcher:\n  replicaz: 3\n", "replicaz"),
    "unknown nested key": ("networkPolicy:\n  nats:\n    cidr: [10.0.0.0/8]\n", "cidr"),
    "not in enum": ("image:\n  pullPolicy: Sometimes\n", "/image/pullPolicy"),
    "below minimum": ("nats:\n  replicas: 0\n", "/nats/replicas"),
    "bad duration": ("prometheusRule:\n  enabled: true\n  alerts:\n    latencyHigh:\n"
                     "      for: 15 minutes\n", "/prometheusRule/alerts/latencyHigh/for"),
    "typo in a spread constraint": ("scheduler:\n  topologySpreadConstraints:\n"
                                    "    - maxSkew: 1\n      topologykey: kubernetes.io/hostname\n"
                                    "      whenUnsatisfiable: ScheduleAnyway\n",
                                    "/scheduler/topologySpreadConstraints/0"),
    "token in values": ("web:\n  adminToken: s3cret\n", "/web/adminToken"),
    "bad cidr": ("networkPolicy:\n  fetcher:\n    clusterCIDRs: [10.0.0.0]\n",
                 "/networkPolicy/fetcher/clusterCIDRs/0"),
    "web service type": ("web:\n  service:\n    type: Ingress\n", "/web/service/type"),
    "web ingress not a list": ("networkPolicy:\n  webIngressFrom: {namespaceSelector: {}}\n",
                               "/networkPolicy/webIngressFrom"),
    "web port moved": ("metadataApi:\n  service:\n    webPort: 8080\n", "webPort"),
}


@pytest.mark.parametrize("text,key", list(BAD.values()), ids=list(BAD))
def test_bad_values_file_fails_lint_and_render_naming_the_key(tmp_path, text, key):
    path = tmp_path / "bad-values.yaml"
    path.write_text(text)
    values = helm.values_from_yaml(path.read_text())     # as `-f bad-values.yaml` reads it
    report = helm.lint(str(CHART), values, strict=True)
    assert report["errors"], f"lint accepted {text!r}"
    assert any(key in e for e in report["errors"]), report["errors"]
    with pytest.raises(helm.HelmError, match=re.escape(key)):
        manifests(values)


GOOD = """
image: {repository: registry.example.com/spiderduck, tag: "0.1.0", pullPolicy: Always}
nats: {url: "nats://nats-1.internal:4222,nats://nats-2.internal:4222", replicas: 3}
cassandra: {contactPoints: [cass-a.internal, cass-b.internal], port: 9042, keyspace: sd_prod,
            consistency: LOCAL_QUORUM, dc: eu-west, replication: 3}
memcached: {host: robots-cache.internal, port: 11211}
hdfs: {namenode: "namenode.internal:9870", path: /spiderduck/content, user: spiderduck,
       rollBytes: 1073741824, rollSeconds: 600}
networkPolicy:
  nats: {cidrs: [10.20.0.0/24], namespaceSelector: null, podSelector: null}
  memcached: {cidrs: [10.20.1.5/32], namespaceSelector: null, podSelector: null}
  cassandra: {cidrs: [10.20.2.0/24]}
  metadataApiIngressFrom: [{namespaceSelector: {matchLabels: {team: crawl}}}]
  webIngressFrom: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ingress-nginx}}}]
config: {log_level: INFO, fetcher: {default_rate: 1}}
extraEnvFrom: [{secretRef: {name: spiderduck-stores}}]
web: {adminToken: {existingSecret: spiderduck-web, key: token},
      service: {type: LoadBalancer, port: 443, annotations: {lb.example/internal: "true"}}}
fetcher:
  pdb: {minAvailable: "50%", maxUnavailable: ""}
  topologySpreadConstraints:
    - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
  tolerations: [{key: dmz, operator: Exists, effect: NoSchedule}]
  nodeSelector: {node-role/dmz: "true"}
scheduler: {autoscaling: {maxReplicas: 20}, resources: {requests: {cpu: 1, memory: 1Gi}}}
serviceMonitor: {enabled: true, labels: {release: kps}}
prometheusRule: {enabled: true, labels: {release: kps}, alerts: {latencyHigh: {thresholdSeconds: 8}}}
grafanaDashboard: {enabled: true, annotations: {grafana_folder: SpiderDuck}}
"""


def test_good_values_file_passes_lint_and_renders(tmp_path):
    path = tmp_path / "values-prod.yaml"
    path.write_text(GOOD)
    values = helm.values_from_yaml(path.read_text())
    report = helm.lint(str(CHART), values, strict=True)
    assert report["errors"] == [], report["errors"]
    assert [m for m in report["messages"] if m["severity"] >= 2] == []
    docs = render(values)
    assert {d["kind"] for d in docs} >= {"StatefulSet", "Deployment", "PrometheusRule",
                                         "ServiceMonitor", "ConfigMap"}


# ---- topologySpreadConstraints ---------------------------------------------------------------

@pytest.fixture(scope="module")
def default_docs() -> list[dict]:
    return render()


@pytest.mark.parametrize("role", list(ROLES))
def test_default_spread_across_zones_and_nodes_selects_the_role(default_docs, role):
    kind, component = ROLES[role]
    spec = one(default_docs, kind, component)["spec"]["template"]
    constraints = spec["spec"]["topologySpreadConstraints"]
    assert [c["topologyKey"] for c in constraints] == ["topology.kubernetes.io/zone",
                                                       "kubernetes.io/hostname"]
    for c in constraints:
        assert c["whenUnsatisfiable"] == "ScheduleAnyway" and c["maxSkew"] == 1
        # The role's own pods, and only them.
        assert c["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == component
        assert c["labelSelector"]["matchLabels"].items() <= spec["metadata"]["labels"].items()


def test_spread_constraints_are_rendered_as_given_or_left_out():
    mine = {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"tier": "x"}}}
    docs = render({"fetcher": {"topologySpreadConstraints": [mine]},
                   "scheduler": {"topologySpreadConstraints": []}})
    fetcher = one(docs, "StatefulSet", "fetcher")["spec"]["template"]["spec"]
    assert fetcher["topologySpreadConstraints"] == [mine]
    scheduler = one(docs, "Deployment", "scheduler")["spec"]["template"]["spec"]
    assert "topologySpreadConstraints" not in scheduler
    api = one(docs, "Deployment", "metadata-api")["spec"]["template"]["spec"]
    assert len(api["topologySpreadConstraints"]) == 2


# ---- the web UI -------------------------------------------------------------------------------

def test_web_ui_port_service_policy_and_config(default_docs, tmp_path):
    api = one(default_docs, "Deployment", "metadata-api")
    (container,) = api["spec"]["template"]["spec"]["containers"]
    assert {"name": "web", "containerPort": 8080, "protocol": "TCP"} in container["ports"]
    assert "SPIDERDUCK_WEB__ADMIN_TOKEN" not in {e["name"] for e in container["env"]}
    # The UI has a Service of its own; the gRPC one does not carry it.
    service = one(default_docs, "Service", "web")
    assert service["spec"]["ports"] == [{"name": "web", "port": 8080, "targetPort": "web", "protocol": "TCP",
                                         "appProtocol": "http"}]
    assert "web" not in {p["name"] for p in one(default_docs, "Service", "metadata-api")["spec"]["ports"]}
    # By default no source may reach the UI's port (networkPolicy.webIngressFrom is empty).
    policy = one(default_docs, "NetworkPolicy", "metadata-api")["spec"]
    assert all({"protocol": "TCP", "port": 8080} not in rule["ports"] for rule in policy["ingress"])
    # Only the metadata API serves it.
    for kind, component in (("StatefulSet", "fetcher"), ("Deployment", "scheduler")):
        (other,) = one(default_docs, kind, component)["spec"]["template"]["spec"]["containers"]
        assert "web" not in {p["name"] for p in other["ports"]}, component
    cfg = config_yaml(default_docs)
    assert cfg["web"] == {"listen": "0.0.0.0:8080"}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert sd_config.load(str(path), env={}).web.listen == "0.0.0.0:8080"


def test_admin_token_comes_from_a_secret_and_never_a_configmap():
    docs = render({"web": {"adminToken": {"existingSecret": "spiderduck-web", "key": "token"}}})
    (container,) = one(docs, "Deployment", "metadata-api")["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert env["SPIDERDUCK_WEB__ADMIN_TOKEN"] == {
        "name": "SPIDERDUCK_WEB__ADMIN_TOKEN",
        "valueFrom": {"secretKeyRef": {"name": "spiderduck-web", "key": "token"}}}
    for kind, component in (("StatefulSet", "fetcher"), ("Deployment", "scheduler")):
        (other,) = one(docs, kind, component)["spec"]["template"]["spec"]["containers"]
        assert "SPIDERDUCK_WEB__ADMIN_TOKEN" not in {e["name"] for e in other["env"]}, component
    for cm in (d for d in docs if d["kind"] == "ConfigMap"):
        for text in cm["data"].values():
            assert "admin_token" not in text and "spiderduck-web" not in text


def test_a_token_in_config_is_refused():
    with pytest.raises(helm.HelmError, match="web.adminToken.existingSecret"):
        render({"config": {"web": {"admin_token": "s3cret"}}})
    # Other web keys pass through config.
    assert config_yaml(render({"config": {"web": {"recent": 20}}}))["web"] == \
        {"listen": "0.0.0.0:8080", "recent": 20}


def test_web_ui_off(tmp_path):
    docs = render({"web": {"enabled": False}})
    (container,) = one(docs, "Deployment", "metadata-api")["spec"]["template"]["spec"]["containers"]
    assert "web" not in {p["name"] for p in container["ports"]}
    assert "web" not in {p["name"] for p in one(docs, "Service", "metadata-api")["spec"]["ports"]}
    assert not [d for d in docs if d["metadata"]["labels"].get("app.kubernetes.io/component") == "web"]
    policy = one(docs, "NetworkPolicy", "metadata-api")["spec"]
    assert policy["ingress"][0]["ports"] == [{"protocol": "TCP", "port": 50051}]
    cfg = config_yaml(docs)
    assert cfg["web"] == {"listen": ""}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert sd_config.load(str(path), env={}).web.listen == ""


# ---- NOTES.txt --------------------------------------------------------------------------------

def test_notes_tell_how_to_reach_the_service_and_warn():
    text = notes()
    assert 'release "sd" in namespace "crawl"' in text
    assert "kubectl -n crawl port-forward svc/sd-spiderduck-metadata-api 50051:50051" in text
    assert "spiderduck get https://example.com/ --set metadata_api.listen=127.0.0.1:50051" in text
    assert "kubectl -n crawl port-forward svc/sd-spiderduck-web 8080:8080" in text
    assert "Metrics are off" in text
    warnings = text.split("WARNINGS:", 1)[1]
    assert "web.adminToken.existingSecret is not set" in warnings
    assert "nats.replicas is 1" in warnings
    assert "Not for production" not in warnings


def test_notes_follow_the_values():
    text = notes({"web": {"adminToken": {"existingSecret": "spiderduck-web"}},
                  "metadataApi": {"tokens": {"existingSecret": "spiderduck-api-tokens"}},
                  "nats": {"replicas": 3}, "tls": {"existingSecret": "spiderduck-grpc-tls"},
                  "serviceMonitor": {"enabled": True}, "prometheusRule": {"enabled": True},
                  "grafanaDashboard": {"enabled": True}})
    assert "WARNINGS:" not in text
    assert "Secret\n  spiderduck-web, key admin-token" in text
    assert "port 9090/metrics" in text and "PrometheusRule sd-spiderduck" in text
    assert "ConfigMap sd-spiderduck-dashboard" in text
    embedded = notes({"config": {"metadata_store": "sqlite:///var/lib/spiderduck/m.db"},
                      "prometheusRule": {"enabled": True}, "web": {"enabled": False}})
    warnings = embedded.split("WARNINGS:", 1)[1]
    assert "embedded stores (metadata_store=sqlite:///var/lib/spiderduck/m.db)" in warnings
    assert "Not for production" in warnings
    assert "prometheusRule.enabled without serviceMonitor.enabled" in warnings
    assert "web UI" not in embedded.split("WARNINGS:", 1)[0].split("The metadata API", 1)[1]
