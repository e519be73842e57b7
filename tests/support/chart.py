"""The Helm chart helm/spiderduck, rendered by Helm itself for the tests in tests/helm.

Helm runs in-process through the `helm-python-sdk` wheel (Helm's Go SDK behind a C ABI), so no
`helm` binary and no cluster are needed; without the wheel, the tests importing this skip."""
from __future__ import annotations

import pathlib

import pytest
import yaml

helm = pytest.importorskip(
    "helm_python",
    reason="helm-python-sdk is not installed (pip install -e '.[test]'): it carries Helm as a "
           "library; without it the chart can be neither linted nor rendered here",
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "spiderduck"
WORKLOADS = {"fetcher": "StatefulSet", "scheduler": "Deployment", "metadata-api": "Deployment",
             "schema": "Job"}
RUNNING = ("fetcher", "scheduler", "metadata-api")   # the roles with pods that run on
# Every store on, with credentials and TLS from Secrets and ConfigMaps of these names.
STORES = {
    "cassandra": {"contactPoints": ["cass-a.internal", "cass-b.internal"], "keyspace": "sd",
                  "auth": {"username": "spiderduck", "existingSecret": "sd-cassandra", "key": "pw"},
                  "tls": {"enabled": True, "ca": {"configMap": "cassandra-ca"},
                          "clientSecret": "sd-cassandra-client"}},
    "hdfs": {"namenode": "nn.internal:9871", "path": "/warc", "user": "crawler",
             "tls": {"enabled": True, "ca": {"secret": "hdfs-ca", "key": "root.pem"}}},
    "memcached": {"host": "robots.internal", "tls": {"enabled": True, "ca": {"secret": "mc-ca"}}},
}


def manifests(values: dict | None = None, *, name: str = "sd", namespace: str = "crawl") -> dict[str, str]:
    """Each template's output by path (NOTES.txt included)."""
    with helm.Chart.load(str(CHART)) as chart:
        return chart.render(values, name=name, namespace=namespace, is_install=True)


def render(values: dict | None = None, **kw) -> list[dict]:
    """The manifests as documents (NOTES.txt, text for the operator, left out)."""
    return [d for path, source in manifests(values, **kw).items() if not path.endswith("NOTES.txt")
            for d in yaml.safe_load_all(source) if d]


def one(docs: list[dict], kind: str, component: str) -> dict:
    found = [d for d in docs if d["kind"] == kind
             and d["metadata"]["labels"].get("app.kubernetes.io/component") == component]
    assert len(found) == 1, f"expected one {kind} for {component}, found {len(found)}"
    return found[0]


def role_config(docs: list[dict], role: str) -> dict:
    """The config.yaml one role's pods read (ConfigMap "<fullname>-<role>-config"), parsed."""
    cm = one([d for d in docs if d["metadata"]["name"].endswith("-config")], "ConfigMap", role)
    return yaml.safe_load(cm["data"]["config.yaml"])


def notes(values: dict | None = None) -> str:
    (text,) = [s for p, s in manifests(values).items() if p.endswith("NOTES.txt")]
    return text


def pod_spec(docs: list[dict], role: str) -> dict:
    return one(docs, WORKLOADS[role], role)["spec"]["template"]["spec"]


def mounted_files(docs: list[dict], role: str) -> dict[str, tuple[str, str, str]]:
    """Every file a role's container has from a Secret or ConfigMap item: path -> ("secret" or
    "configMap", the object's name, its key). Checks each such mount is read-only, mode 0440
    and no subPath (a subPath mount never sees a renewed Secret)."""
    spec = pod_spec(docs, role)
    volumes = {v["name"]: v for v in spec["volumes"]}
    files = {}
    for container in spec["containers"]:
        for mount in container["volumeMounts"]:
            volume = volumes[mount["name"]]
            for kind in ("secret", "configMap"):
                source = volume.get(kind)
                if not source or "items" not in source:
                    continue
                assert mount["readOnly"] is True and "subPath" not in mount, (role, mount)
                assert source["defaultMode"] == 0o440, (role, mount)
                for item in source["items"]:
                    files[f"{mount['mountPath']}/{item['path']}"] = (
                        kind, source.get("secretName") or source.get("name"), item["key"])
    return files


def env_names(docs: list[dict], role: str) -> set[str]:
    return {e["name"] for c in pod_spec(docs, role)["containers"] for e in c.get("env", [])}


def secrets_used(docs: list[dict], role: str) -> set[str]:
    """Every Secret a role's pods reference: volumes, env and envFrom."""
    spec = pod_spec(docs, role)
    names = {v["secret"]["secretName"] for v in spec["volumes"] if "secret" in v}
    for c in spec["containers"]:
        names |= {e["valueFrom"]["secretKeyRef"]["name"] for e in c.get("env", [])
                  if "secretKeyRef" in e.get("valueFrom", {})}
        names |= {e["secretRef"]["name"] for e in c.get("envFrom", []) if "secretRef" in e}
    return names
