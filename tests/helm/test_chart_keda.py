"""The schedulers scaled by KEDA on their URL backlog (issue 27): scheduler.keda renders a
ScaledObject (keda.sh/v1alpha1) with the nats-jetstream scaler on the durable consumer the
schedulers pull from, instead of the CPU HPA, and then no fixed replica count.

The stream and consumer names are checked against the service's own constants (src/spiderduck/bus/streams.py),
so renaming either in the code without the chart fails here. Helm runs in-process through the
`helm-python-sdk` wheel, as in test_chart.py.
"""
from __future__ import annotations

import re

import pytest

from support.chart import CHART, helm, manifests, one, render

from spiderduck.bus import streams as bus


ENDPOINT = "nats-headless.nats.svc:8222"
KEDA_ON = {"scheduler": {"autoscaling": {"enabled": False},
                         "keda": {"enabled": True, "lagThreshold": 120}},
           "nats": {"monitoring": {"endpoint": ENDPOINT}}}


def with_keda(keda: dict | None = None, monitoring: dict | None = None, **scheduler) -> dict:
    """KEDA_ON with keda, nats.monitoring and scheduler values replaced key by key."""
    return {"scheduler": {"autoscaling": {"enabled": False},
                          "keda": {"enabled": True, **(keda or {})}, **scheduler},
            "nats": {"monitoring": {"endpoint": ENDPOINT, **(monitoring or {})}}}


def kinds(docs: list[dict], kind: str) -> list[dict]:
    return [d for d in docs if d["kind"] == kind]


def notes(values: dict) -> str:
    (text,) = [s for p, s in manifests(values).items() if p.endswith("NOTES.txt")]
    return text


@pytest.fixture(scope="module")
def keda_docs() -> list[dict]:
    return render(KEDA_ON)


# ---- off: as before ---------------------------------------------------------------------------

def test_keda_is_off_by_default_and_the_replicas_are_as_before():
    docs = render()
    assert not kinds(docs, "ScaledObject")
    one(docs, "HorizontalPodAutoscaler", "scheduler")
    assert "replicas" not in one(docs, "Deployment", "scheduler")["spec"], "the HPA owns it"
    fixed = render({"scheduler": {"autoscaling": {"enabled": False}, "replicas": 4}})
    assert not kinds(fixed, "ScaledObject") and not kinds(fixed, "HorizontalPodAutoscaler")
    assert one(fixed, "Deployment", "scheduler")["spec"]["replicas"] == 4


# ---- on: the ScaledObject ---------------------------------------------------------------------

def test_scaled_object_scales_the_scheduler_deployment_on_its_consumer(keda_docs):
    scaled = one(keda_docs, "ScaledObject", "scheduler")
    deployment = one(keda_docs, "Deployment", "scheduler")
    assert scaled["apiVersion"] == "keda.sh/v1alpha1"
    assert scaled["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                               "name": deployment["metadata"]["name"]}
    assert scaled["metadata"]["name"] == deployment["metadata"]["name"]
    spec = scaled["spec"]
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (2, 10)
    assert (spec["pollingInterval"], spec["cooldownPeriod"]) == (30, 300)
    (trigger,) = spec["triggers"]
    assert trigger["type"] == "nats-jetstream"
    assert "authenticationRef" not in trigger
    # KEDA reads every metadata value as a string.
    assert trigger["metadata"] == {
        "natsServerMonitoringEndpoint": ENDPOINT,
        "account": "$G",
        "stream": bus.URLS_STREAM,             # what the schedulers pull from ...
        "consumer": bus.SCHEDULER_DURABLE,     # ... through this durable consumer
        "lagThreshold": "120",
        "activationLagThreshold": "0",
        "useHttps": "false",
    }


def test_with_keda_the_deployment_has_no_replicas_and_there_is_no_hpa(keda_docs):
    assert "replicas" not in one(keda_docs, "Deployment", "scheduler")["spec"]
    assert not kinds(keda_docs, "HorizontalPodAutoscaler")
    # The other roles keep their fixed counts.
    assert one(keda_docs, "StatefulSet", "fetcher")["spec"]["replicas"] == 3
    assert one(keda_docs, "Deployment", "metadata-api")["spec"]["replicas"] == 2


def test_every_keda_value_reaches_the_scaled_object():
    big = 3_000_000    # Helm holds numbers as floats: still rendered as integers, not 3e+06
    docs = render(with_keda({"minReplicas": 0, "maxReplicas": 40, "pollingInterval": 15,
                             "cooldownPeriod": 1_200_000, "lagThreshold": big,
                             "activationLagThreshold": 5, "authenticationRef": "nats-monitoring"},
                            {"useHttps": True, "account": "SPIDERDUCK"}))
    spec = one(docs, "ScaledObject", "scheduler")["spec"]
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (0, 40)
    assert (spec["pollingInterval"], spec["cooldownPeriod"]) == (15, 1_200_000)
    (trigger,) = spec["triggers"]
    meta = trigger["metadata"]
    assert (meta["lagThreshold"], meta["activationLagThreshold"]) == (str(big), "5")
    assert (meta["useHttps"], meta["account"]) == ("true", "SPIDERDUCK")
    assert trigger["authenticationRef"] == {"name": "nats-monitoring"}


def test_a_trigger_authentication_may_supply_the_endpoint():
    docs = render(with_keda({"authenticationRef": "nats-monitoring"}, {"endpoint": ""}))
    (trigger,) = one(docs, "ScaledObject", "scheduler")["spec"]["triggers"]
    assert "natsServerMonitoringEndpoint" not in trigger["metadata"]   # KEDA takes it from there
    assert trigger["authenticationRef"] == {"name": "nats-monitoring"}


def test_keda_values_pass_strict_lint():
    report = helm.lint(str(CHART), KEDA_ON, strict=True)
    assert report["errors"] == [], report["errors"]
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


# ---- refused ----------------------------------------------------------------------------------

REFUSED = {
    "with the hpa": ({"scheduler": {"keda": {"enabled": True}},
                      "nats": {"monitoring": {"endpoint": ENDPOINT}}},
                     "scheduler.keda.enabled and scheduler.autoscaling.enabled are both true"),
    "no endpoint": (with_keda(monitoring={"endpoint": ""}),
                    "scheduler.keda.enabled needs nats.monitoring.endpoint"),
    "min above max": (with_keda({"minReplicas": 5, "maxReplicas": 3}),
                      "scheduler.keda.minReplicas (5) is above scheduler.keda.maxReplicas (3)"),
}


@pytest.mark.parametrize("values,message", list(REFUSED.values()), ids=list(REFUSED))
def test_contradictory_keda_values_are_refused(values, message):
    with pytest.raises(helm.HelmError, match=re.escape(message)):
        render(values)


BAD = {
    "enabled not a bool": ({"scheduler": {"keda": {"enabled": "yes"}}}, "/scheduler/keda/enabled"),
    "lag threshold a string": ({"scheduler": {"keda": {"lagThreshold": "100"}}},
                               "/scheduler/keda/lagThreshold"),
    "lag threshold zero": ({"scheduler": {"keda": {"lagThreshold": 0}}},
                           "/scheduler/keda/lagThreshold"),
    "activation negative": ({"scheduler": {"keda": {"activationLagThreshold": -1}}},
                            "/scheduler/keda/activationLagThreshold"),
    "min replicas negative": ({"scheduler": {"keda": {"minReplicas": -1}}},
                              "/scheduler/keda/minReplicas"),
    "max replicas zero": ({"scheduler": {"keda": {"maxReplicas": 0}}}, "/scheduler/keda/maxReplicas"),
    "polling a duration": ({"scheduler": {"keda": {"pollingInterval": "30s"}}},
                           "/scheduler/keda/pollingInterval"),
    "cooldown fractional": ({"scheduler": {"keda": {"cooldownPeriod": 1.5}}},
                            "/scheduler/keda/cooldownPeriod"),
    "unknown keda key": ({"scheduler": {"keda": {"stream": "OTHER"}}}, "stream"),
    "bad authentication ref": ({"scheduler": {"keda": {"authenticationRef": "Nats_Auth"}}},
                               "/scheduler/keda/authenticationRef"),
    "endpoint with a scheme": ({"nats": {"monitoring": {"endpoint": "http://nats.nats.svc:8222"}}},
                               "/nats/monitoring/endpoint"),
    "endpoint without a port": ({"nats": {"monitoring": {"endpoint": "nats.nats.svc"}}},
                                "/nats/monitoring/endpoint"),
    "useHttps a string": ({"nats": {"monitoring": {"useHttps": "true"}}}, "/nats/monitoring/useHttps"),
    "account empty": ({"nats": {"monitoring": {"account": ""}}}, "/nats/monitoring/account"),
    "account with a query": ({"nats": {"monitoring": {"account": "A&consumers=false"}}},
                             "/nats/monitoring/account"),
}


@pytest.mark.parametrize("values,key", list(BAD.values()), ids=list(BAD))
def test_bad_keda_values_are_refused_by_the_schema_naming_the_key(values, key):
    with helm.Chart.load(str(CHART)) as chart:
        with pytest.raises(helm.HelmError, match=re.escape(key)):
            chart.validate_schema(values)
    with pytest.raises(helm.HelmError, match=re.escape(key)):
        render(values)


def test_the_schema_takes_good_keda_values():
    good = with_keda({"minReplicas": 0, "maxReplicas": 50, "pollingInterval": 10,
                      "cooldownPeriod": 0, "lagThreshold": 1, "activationLagThreshold": 10,
                      "authenticationRef": "nats-monitoring"},
                     {"useHttps": True, "account": "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGHIJKLMNOPQRSTUV"})
    for endpoint in ("nats.nats.svc:8222", "10.0.0.7:8222", "[fd00::7]:8222", ""):
        good["nats"]["monitoring"]["endpoint"] = endpoint
        with helm.Chart.load(str(CHART)) as chart:
            chart.validate_schema(good)


# ---- NOTES.txt --------------------------------------------------------------------------------

def test_notes_name_the_autoscaler_and_warn_about_jwt_accounts():
    assert "KEDA ScaledObject 2-10 pods, one per 120 URLs of backlog" in notes(KEDA_ON)
    assert "HPA 2-10 pods" in notes({})
    creds = {"type": "creds", "existingSecret": "sd-nats"}
    left_at_g = with_keda()
    left_at_g["nats"]["auth"] = creds
    assert 'nats.monitoring.account "$G"' in notes(left_at_g).split("WARNINGS:", 1)[1]
    keyed = with_keda(monitoring={"account": "ACCOUNTPUBLICKEY"})
    keyed["nats"]["auth"] = creds
    assert "nats.monitoring.account" not in notes(keyed)
    assert "nats.monitoring.account" not in notes({"nats": {"auth": creds}})   # KEDA off
