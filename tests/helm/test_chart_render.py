"""The chart's render values (issue 31: headless Chromium renders JavaScript shells in the
fetchers): off, nothing of it is rendered; on, the fetchers' and schedulers' config.yaml carry a
`render` section the service's loader accepts, the fetcher pods (only they) run the -render
image with a memory-backed /dev/shm and a larger /tmp, and values.schema.json refuses what
RenderSettings refuses.

Helm runs in-process through the `helm-python-sdk` wheel, as in test_chart.py.
"""
from __future__ import annotations

import re

import pytest
import yaml

from support.chart import (CHART, RUNNING, WORKLOADS, helm, manifests, notes, one, pod_spec, render,
                           role_config)

from spiderduck.core import config as sd_config


RENDER = {"render": {"enabled": True}}
DIGEST = "sha256:" + "a" * 64
RENDER_DIGEST = "sha256:" + "b" * 64


def _volumes(docs: list[dict], role: str) -> dict[str, dict]:
    return {v["name"]: v for v in pod_spec(docs, role)["volumes"]}


def _mounts(docs: list[dict], role: str) -> dict[str, str]:
    (container,) = pod_spec(docs, role)["containers"]
    return {m["mountPath"]: m["name"] for m in container["volumeMounts"]}


def _image(docs: list[dict], role: str) -> str:
    (container,) = pod_spec(docs, role)["containers"]
    return container["image"]


def _load(tmp_path, docs: list[dict], role: str):
    path = tmp_path / f"{role}.yaml"
    path.write_text(yaml.safe_dump(role_config(docs, role)))
    return sd_config.load(str(path), env={"SPIDERDUCK_DATA_DIR": "/var/lib/spiderduck"})


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[dict]]:
    """The chart with the defaults (render off) and with render.enabled alone."""
    return {"off": render(), "on": render(RENDER)}


@pytest.fixture
def off_docs(rendered) -> list[dict]:
    return rendered["off"]


@pytest.fixture
def on_docs(rendered) -> list[dict]:
    return rendered["on"]


def test_off_renders_no_render_config_no_shm_and_the_plain_image(off_docs, tmp_path):
    for role in WORKLOADS:
        assert "render" not in role_config(off_docs, role), role
        assert _image(off_docs, role) == "ghcr.io/spiderduck/spiderduck:0.1.0", role
    for role in RUNNING:
        assert "dshm" not in _volumes(off_docs, role) and "/dev/shm" not in _mounts(off_docs, role)
        assert _volumes(off_docs, role)["tmp"]["emptyDir"] == {"sizeLimit": "256Mi"}
    assert _load(tmp_path, off_docs, "fetcher").render.enabled is False


def test_on_renders_the_render_sections_the_loader_accepts(on_docs, tmp_path):
    assert role_config(on_docs, "fetcher")["render"] == {
        "enabled": True, "max_concurrent": 2, "timeout": "10s", "max_pages_per_browser": 100,
        "max_memory_mb": 512, "subresource_rate": 2, "isolation": "auto"}
    # The schedulers ask for renders and wait for them: the browser's own settings are not theirs.
    assert role_config(on_docs, "scheduler")["render"] == {"enabled": True, "timeout": "10s"}
    for role in ("metadata-api", "schema"):
        assert "render" not in role_config(on_docs, role), role
    fetcher = _load(tmp_path, on_docs, "fetcher").render
    assert (fetcher.enabled, fetcher.max_concurrent, fetcher.timeout, fetcher.max_pages_per_browser,
            fetcher.max_memory_mb, fetcher.chromium, fetcher.subresource_rate, fetcher.isolation) == \
                (True, 2, 10.0, 100, 512, "", 2.0, "auto")
    scheduler = _load(tmp_path, on_docs, "scheduler").render
    assert (scheduler.enabled, scheduler.timeout) == (True, 10.0)


def test_on_values_reach_the_config(tmp_path):
    docs = render({"render": {"enabled": True, "maxConcurrent": 4, "timeout": "1500ms",
                              "maxPagesPerBrowser": 20, "maxMemoryMb": 1024, "subresourceRate": 0.5,
                              "isolation": "required"}})
    settings = _load(tmp_path, docs, "fetcher").render
    assert (settings.max_concurrent, settings.timeout, settings.max_pages_per_browser,
            settings.max_memory_mb, settings.subresource_rate, settings.isolation) == (4, 1.5, 20, 1024, 0.5, "required")
    assert _load(tmp_path, docs, "scheduler").render.timeout == 1.5
    # A number of seconds is a duration too.
    docs = render({"render": {"enabled": True, "timeout": 30}})
    assert _load(tmp_path, docs, "scheduler").render.timeout == 30.0


def test_values_config_still_merges_over_the_render_section(tmp_path):
    docs = render({**RENDER, "config": {"render": {"chromium": "/opt/chromium/chrome"}}})
    settings = _load(tmp_path, docs, "fetcher").render
    assert settings.enabled and settings.chromium == "/opt/chromium/chrome"


def test_on_fetchers_run_the_render_image_with_shm_and_a_larger_tmp(on_docs):
    assert _image(on_docs, "fetcher") == "ghcr.io/spiderduck/spiderduck:0.1.0-render"
    for role in ("scheduler", "metadata-api", "schema"):
        assert _image(on_docs, role) == "ghcr.io/spiderduck/spiderduck:0.1.0", role
    volumes = _volumes(on_docs, "fetcher")
    assert volumes["dshm"] == {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "256Mi"}}
    assert volumes["tmp"]["emptyDir"] == {"sizeLimit": "1Gi"}
    assert _mounts(on_docs, "fetcher")["/dev/shm"] == "dshm"
    assert _mounts(on_docs, "fetcher")["/tmp"] == "tmp"
    for role in ("scheduler", "metadata-api"):
        assert "dshm" not in _volumes(on_docs, role), role
        assert _volumes(on_docs, role)["tmp"]["emptyDir"] == {"sizeLimit": "256Mi"}, role
    # The pods' security stays as it is (under RuntimeDefault seccomp, render.isolation: auto
    # renders without the browser's namespaces and sandbox: docs/security.md).
    (container,) = pod_spec(on_docs, "fetcher")["containers"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}


def test_image_tag_suffix_and_digest():
    docs = render({"image": {"tag": "1.2.3"}, "render": {"enabled": True, "imageTagSuffix": "-chromium"}})
    assert _image(docs, "fetcher") == "ghcr.io/spiderduck/spiderduck:1.2.3-chromium"
    assert _image(docs, "scheduler") == "ghcr.io/spiderduck/spiderduck:1.2.3"
    docs = render({"image": {"digest": DIGEST}, "render": {"enabled": True, "imageDigest": RENDER_DIGEST}})
    assert _image(docs, "fetcher") == f"ghcr.io/spiderduck/spiderduck@{RENDER_DIGEST}"
    assert _image(docs, "metadata-api") == f"ghcr.io/spiderduck/spiderduck@{DIGEST}"
    # A digest has no tag to suffix: the -render image's digest is required.
    with pytest.raises(helm.HelmError, match="render.imageDigest"):
        manifests({"image": {"digest": DIGEST}, "render": {"enabled": True}})
    # Off, render.imageDigest is not needed and the fetchers run image.digest.
    assert _image(render({"image": {"digest": DIGEST}}), "fetcher") == f"ghcr.io/spiderduck/spiderduck@{DIGEST}"


def test_only_the_fetchers_restart_for_their_image():
    """The config checksums: render on changes the fetchers' and schedulers' config only."""
    def checksums(docs):
        return {role: one(docs, WORKLOADS[role], role)["spec"]["template"]["metadata"]["annotations"]
                ["checksum/config"] for role in RUNNING}
    off, on = checksums(render()), checksums(render(RENDER))
    assert off["metadata-api"] == on["metadata-api"]
    assert off["fetcher"] != on["fetcher"] and off["scheduler"] != on["scheduler"]


def test_lint_strict_passes_with_render_on():
    report = helm.lint(str(CHART), {**RENDER, "fetcher": {"resources": {
        "requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"cpu": "2", "memory": "3Gi"}}}}, strict=True)
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


BAD = {
    "max_concurrent 0": ({"maxConcurrent": 0}, "/render/maxConcurrent"),
    "max_concurrent 65": ({"maxConcurrent": 65}, "/render/maxConcurrent"),
    "max_memory_mb 63": ({"maxMemoryMb": 63}, "/render/maxMemoryMb"),
    "max_memory_mb 16385": ({"maxMemoryMb": 16385}, "/render/maxMemoryMb"),
    "max_pages_per_browser 0": ({"maxPagesPerBrowser": 0}, "/render/maxPagesPerBrowser"),
    "subresource_rate 0": ({"subresourceRate": 0}, "/render/subresourceRate"),
    "subresource_rate as a string": ({"subresourceRate": "fast"}, "/render/subresourceRate"),
    "timeout ten seconds": ({"timeout": "ten seconds"}, "/render/timeout"),
    "timeout compound": ({"timeout": "1m30s"}, "/render/timeout"),      # the config reads one unit
    "timeout zero": ({"timeout": "0s"}, "/render/timeout"),
    "timeout 0.0": ({"timeout": "0.0"}, "/render/timeout"),
    "timeout negative": ({"timeout": -1}, "/render/timeout"),
    "timeout years": ({"timeout": "1y"}, "/render/timeout"),
    "enabled as a string": ({"enabled": "yes"}, "/render/enabled"),
    "unknown key": ({"maxconcurrent": 2}, "/render"),
    "isolation unknown": ({"isolation": "strict"}, "/render/isolation"),
    "bad digest": ({"imageDigest": "sha256:abc"}, "/render/imageDigest"),
    "tag suffix with a colon": ({"imageTagSuffix": ":render"}, "/render/imageTagSuffix"),
}


@pytest.mark.parametrize("render_values,key", list(BAD.values()), ids=list(BAD))
def test_schema_refuses_what_the_config_refuses(render_values, key):
    with pytest.raises(helm.HelmError, match=re.escape(key)):
        manifests({"render": {"enabled": True, **render_values}})


@pytest.mark.parametrize("timeout,seconds", [("10s", 10.0), ("250ms", 0.25), ("2.5s", 2.5),
                                             ("1m", 60.0), ("0.5", 0.5), ("05s", 5.0)])
def test_schema_accepts_the_durations_the_config_reads(tmp_path, timeout, seconds):
    docs = render({"render": {"enabled": True, "timeout": timeout}})
    assert _load(tmp_path, docs, "fetcher").render.timeout == seconds
    assert sd_config.parse_duration(timeout) == seconds


def test_notes_warn_when_render_is_on_with_the_default_fetcher_memory():
    warning = "render.enabled with the fetchers' default memory"
    assert warning not in notes()
    text = notes(RENDER)
    assert warning in text and "with 2 x 512" in text
    raised = {**RENDER, "fetcher": {"resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "3Gi"}}}}
    assert warning not in notes(raised)
