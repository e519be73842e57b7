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
