"""The chart's part of issue 38 for the web UI: a Service of its own (web.service), its port
closed by NetworkPolicy to all but networkPolicy.webIngressFrom, and install notes that warn
when the web UI or the metadata API listens beyond loopback with no tokens.

Helm runs in-process through the `helm-python-sdk` wheel, as in test_chart.py."""
from __future__ import annotations

import pytest

from spiderduck.cli import logs
from support.chart import notes, one, render

INGRESS = [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}}]
GRPC_PEERS = [{"namespaceSelector": {"matchLabels": {"team": "crawl"}}}]
WARNING = "beyond loopback with no tokens"


def _rules_for(policy: dict, port: int) -> list[dict]:
    return [r for r in policy["spec"]["ingress"] if {"protocol": "TCP", "port": port} in r.get("ports", [])]


def test_the_web_ui_has_a_service_of_its_own():
    docs = render({"web": {"port": 8181, "tls": {"existingSecret": "sd-web-tls"},
                           "service": {"type": "LoadBalancer", "port": 443,
                                       "annotations": {"lb.example/internal": "true"}}},
                   "metadataApi": {"service": {"type": "NodePort"}}, "serviceMonitor": {"enabled": True}})
    web = one(docs, "Service", "web")
    assert web["metadata"]["name"] == "sd-spiderduck-web"
    assert web["metadata"]["annotations"] == {"lb.example/internal": "true"}
    assert web["spec"]["type"] == "LoadBalancer"
    assert web["spec"]["ports"] == [{"name": "web", "port": 443, "targetPort": "web", "protocol": "TCP",
                                     "appProtocol": "https"}]
    # It selects the pods that serve the UI, whose port "web" is the container port given.
    api = one(docs, "Deployment", "metadata-api")
    assert web["spec"]["selector"] == api["spec"]["selector"]["matchLabels"]
    (container,) = api["spec"]["template"]["spec"]["containers"]
    assert {"name": "web", "containerPort": 8181, "protocol": "TCP"} in container["ports"]
    # The gRPC Service keeps its own type and no web port; the ServiceMonitor does not select it.
    grpc = one(docs, "Service", "metadata-api")
    assert grpc["spec"]["type"] == "NodePort" and "web" not in {p["name"] for p in grpc["spec"]["ports"]}
    assert "spiderduck.io/metrics" not in web["metadata"]["labels"]
    assert "annotations" not in one(render(), "Service", "web")["metadata"]


def test_no_source_reaches_the_web_port_unless_named():
    """[] is the safe default: no peer at all, not "the release's namespace", where the fetchers
    download pages strangers choose. metadataApiIngressFrom opens the gRPC port only."""
    default = one(render(), "NetworkPolicy", "metadata-api")
    assert _rules_for(default, 8080) == []
    (grpc,) = _rules_for(default, 50051)
    assert "from" not in grpc                             # gRPC: any source, as before
    docs = render({"networkPolicy": {"metadataApiIngressFrom": GRPC_PEERS}})
    policy = one(docs, "NetworkPolicy", "metadata-api")
    assert _rules_for(policy, 8080) == []
    assert _rules_for(policy, 50051) == [{"ports": [{"protocol": "TCP", "port": 50051}], "from": GRPC_PEERS}]
    opened = one(render({"networkPolicy": {"webIngressFrom": INGRESS}, "web": {"port": 8181}}),
                 "NetworkPolicy", "metadata-api")
    assert _rules_for(opened, 8181) == [{"ports": [{"protocol": "TCP", "port": 8181}], "from": INGRESS}]
    assert "from" not in _rules_for(opened, 50051)[0]
    # The UI off: no rule for it, whatever the peers.
    off = one(render({"networkPolicy": {"webIngressFrom": INGRESS}, "web": {"enabled": False}}),
              "NetworkPolicy", "metadata-api")
    assert _rules_for(off, 8080) == []


def test_notes_say_who_reaches_the_web_ui():
    text = notes()
    assert "its web UI behind Service sd-spiderduck-web (8080)" in text
    assert "kubectl -n crawl port-forward svc/sd-spiderduck-web 8080:8080" in text
    assert "from no peer (networkPolicy.webIngressFrom is empty)" in text
    opened = notes({"networkPolicy": {"webIngressFrom": INGRESS}, "web": {"service": {"port": 80}}})
    assert "sd-spiderduck-web.crawl.svc:80, from the peers in networkPolicy.webIngressFrom" in opened


def _warning(values: dict) -> str | None:
    text = notes(values)
    found = [ln for ln in text.split("WARNINGS:", 1)[-1].splitlines() if WARNING in ln]
    assert len(found) <= 1, found
    return found[0] if found else None


def test_notes_warn_of_listens_beyond_loopback_without_tokens():
    both = _warning({})
    assert "the metadata API (metadata_api.listen 0.0.0.0:50051) and the web UI (web.listen 0.0.0.0:8080)" in both
    assert "metadataApi.tokens.existingSecret" in both
    assert _warning({"metadataApi": {"tokens": {"existingSecret": "sd-api-tokens"}}}) is None
    # A tokens_file given through config counts too.
    assert _warning({"config": {"metadata_api": {"tokens_file": "/etc/extra/tokens"}}}) is None
    only_api = _warning({"web": {"enabled": False}})
    assert "metadata_api.listen 0.0.0.0:50051" in only_api and "web.listen" not in only_api
    only_web = _warning({"config": {"metadata_api": {"listen": "127.0.0.1:50051"}}})
    assert "web.listen 0.0.0.0:8080" in only_web and "metadata_api.listen" not in only_web
    assert _warning({"config": {"metadata_api": {"listen": "[::1]:50051"},
                                "web": {"listen": "localhost:8080"}}}) is None


@pytest.mark.parametrize("listen", ["0.0.0.0:50051", "[::]:50051", "10.1.2.3:50051", "api.internal:50051",
                                    "127.0.0.1:50051", "127.8.0.1:50051", "[::1]:50051", "localhost:50051",
                                    "LocalHost:50051"])
def test_the_notes_and_up_agree_on_what_is_loopback(listen):
    warned = _warning({"web": {"enabled": False}, "config": {"metadata_api": {"listen": listen}}})
    assert (warned is not None) == logs.beyond_loopback(listen), warned
