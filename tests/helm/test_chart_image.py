"""The image the chart runs: the Dockerfile installs exactly requirements.lock, and the lock pins,
with hashes, every runtime dependency of pyproject.toml (so the two cannot silently drift apart)
but spiderduck-client, whose wheel the image builds from this repo (clients/python) beside the
service's; and the image declares every port the roles listen on.

Regenerate the lock after changing [project].dependencies (Python 3.11, as in the image), with the
client's wheel where pip-compile finds it, then delete the lock's spiderduck-client entry:
    pip wheel --no-deps -w /tmp/sd-client clients/python
    pip-compile --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url \
                --no-emit-find-links --find-links /tmp/sd-client \
                --output-file requirements.lock pyproject.toml
"""
from __future__ import annotations

import importlib.metadata
import pathlib
import re
import tomllib

import pytest

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = pathlib.Path(__file__).resolve().parents[2]
REGENERATE = ("regenerate it: pip-compile --generate-hashes --allow-unsafe --strip-extras "
              "--no-emit-index-url --no-emit-find-links --output-file requirements.lock pyproject.toml")
# Python of the image (python:3.11-slim, Linux): the markers the lock was resolved for.
IMAGE_ENV = {**default_environment(), "python_version": "3.11", "python_full_version": "3.11.0",
             "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
             "implementation_name": "cpython", "platform_python_implementation": "CPython"}


def _lock() -> dict[str, tuple[Version, list[str]]]:
    """name -> (pinned version, sha256 hashes) of requirements.lock."""
    text = (ROOT / "requirements.lock").read_text()
    pins = {}
    for entry in re.split(r"\n(?=\S)", text):
        line = entry.split("#", 1)[0] if not entry.startswith("#") else ""
        if not line.strip() or line.startswith("-"):
            continue
        m = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", line)
        assert m, f"requirements.lock: not an exact pin: {line.strip()!r}"
        name = canonicalize_name(m.group(1))
        assert name not in pins, f"{name} pinned twice"
        pins[name] = (Version(m.group(2)), re.findall(r"--hash=sha256:([0-9a-f]{64})", entry))
    return pins


# Built from this repo by the image (clients/python), never taken from an index: not in the lock.
OURS = {"spiderduck-client"}


def _dependencies() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(d) for d in project["dependencies"] if canonicalize_name(Requirement(d).name) not in OURS]


def test_lock_pins_every_dependency_of_pyproject_with_hashes():
    pins = _lock()
    assert pins, "requirements.lock pins nothing"
    for name, (_, hashes) in pins.items():
        assert hashes, f"{name} has no --hash in requirements.lock"
    deps = _dependencies()
    assert {"jinja2", "tqdm"} <= {canonicalize_name(r.name) for r in deps}
    for req in deps:
        if req.marker and not req.marker.evaluate(IMAGE_ENV):
            continue
        name = canonicalize_name(req.name)
        assert name in pins, f"{req} (pyproject.toml) is not in requirements.lock; {REGENERATE}"
        version = pins[name][0]
        assert req.specifier.contains(version, prereleases=True), \
            f"requirements.lock pins {name}=={version}, outside {req}; {REGENERATE}"


# Code generators, test runners, profilers and type checkers: the dev venv has them (the test
# extra, which bin/_venv.sh installs), the runtime install and the image do not.
DEV_TOOLS = {"grpcio-tools", "pytest", "pytest-asyncio", "pytest-timeout", "py-spy", "mypy",
             "selenium", "helm-python-sdk", "warcio", "pip-tools"}


def _extra(name: str) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {canonicalize_name(Requirement(d).name) for d in project["optional-dependencies"][name]}


def test_dev_tools_stay_out_of_the_runtime_dependencies_and_the_lock():
    tools = DEV_TOOLS | _extra("test")      # whatever the test extra names is not for the service
    runtime = {canonicalize_name(r.name) for r in _dependencies()}
    assert not tools & runtime, \
        f"{sorted(tools & runtime)} in [project].dependencies: move them to the test extra"
    locked = set(_lock())
    assert not tools & locked, \
        f"{sorted(tools & locked)} in requirements.lock (the image's install); {REGENERATE}"
    # scripts/gen_protos.py (and tests/protos) still find the code generator in the dev venv.
    assert "grpcio-tools" in _extra("test")


def test_lock_is_closed_under_dependencies():
    """Every requirement of a locked package is locked too, checked with the metadata of the
    installed distributions that have the locked version (their requirements are the lock's)."""
    pins = _lock()
    checked = 0
    for name, (version, _) in pins.items():
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        if Version(dist.version) != version:
            continue
        checked += 1
        for spec in dist.requires or []:
            req = Requirement(spec)
            if req.marker and not req.marker.evaluate({**IMAGE_ENV, "extra": ""}):
                continue
            assert canonicalize_name(req.name) in pins, \
                f"{name}=={version} needs {req}, which requirements.lock lacks; {REGENERATE}"
    if checked < 10:     # the venv resolved newer releases than the lock: regenerate it
        pytest.skip(f"only {checked} locked versions are installed here; {REGENERATE}")


def _stages() -> tuple[str, str]:
    text = (ROOT / "Dockerfile").read_text()
    builder, runtime = re.split(r"^FROM \S+ AS runtime$", text, flags=re.M)
    return builder, runtime


def test_dockerfile_builds_from_the_lock():
    builder, runtime = _stages()
    instructions = [l for l in builder.splitlines() if not l.lstrip().startswith("#")]
    body = "\n".join(instructions)
    assert re.search(r"^COPY requirements\.lock ", body, re.M)
    assert "pip wheel --require-hashes -r requirements.lock" in body
    assert "pip wheel . --no-deps" in body, "the project's own dependencies come from the lock only"
    assert "pip wheel ./clients/python --no-deps" in body, "the service depends on spiderduck-client, built here"
    assert not OURS & set(_lock()), "spiderduck-client is built from clients/python, not pinned"
    assert "tomllib" not in body, "the unpinned dependency list of pyproject.toml is not installed"
    runtime_body = "\n".join(l for l in runtime.splitlines() if not l.lstrip().startswith("#"))
    assert "--no-index" in runtime_body and "--no-deps" in runtime_body
    assert "pip check" in runtime_body
    assert "build-essential" not in runtime_body
    # apt-get runs in the runtime stage only for the -render variant (test_render_arg_...).
    outside_render = runtime_body.replace(_render_step(runtime_body), "")
    assert "apt-get" not in outside_render and "chromium" not in outside_render


def test_dockerfile_exposes_every_port():
    _, runtime = _stages()
    exposed = {int(p) for line in runtime.splitlines() if line.startswith("EXPOSE ")
               for p in line.split()[1:]}
    # metadata gRPC, fetcher gRPC, scheduler health gRPC, web UI, metrics.
    assert exposed == {50051, 50052, 50053, 8080, 9090}


def _render_step(runtime_body: str) -> str:
    """The runtime stage's RUN instruction that installs chromium (continuation lines joined)."""
    runs = [r for r in re.findall(r"^RUN (?:[^\n]*\\\n)*[^\n]*$", runtime_body, re.M) if "chromium" in r]
    assert len(runs) == 1, f"expected one RUN installing chromium in the runtime stage, found {len(runs)}"
    return runs[0]


def test_render_arg_installs_chromium_only_when_set(tmp_path):
    """`--build-arg RENDER=1` (the -render image, for fetchers that render JavaScript shells)
    installs Debian's chromium; the default, RENDER=0, installs nothing with apt. The RUN's shell
    script is run here with apt-get and chromium replaced by recorders, for each value."""
    import subprocess

    _, runtime = _stages()
    body = "\n".join(l for l in runtime.splitlines() if not l.lstrip().startswith("#"))
    assert re.search(r"^ARG RENDER=0$", body, re.M), "the runtime stage declares ARG RENDER=0"
    step = _render_step(body)
    assert body.index("ARG RENDER=0") < body.index(step)
    assert "apt-get install -y --no-install-recommends chromium" in step
    assert "rm -rf /var/lib/apt/lists/*" in step
    script = step[len("RUN "):]       # the shell reads the continuation lines as Docker does
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("apt-get", "chromium", "rm"):
        (bin_dir / tool).write_text(f'#!/bin/sh\necho "{tool} $*" >> "$LOG"\n')
        (bin_dir / tool).chmod(0o755)

    def run(render: str | None) -> tuple[int, list[str]]:
        log = tmp_path / f"log-{render}"
        log.write_text("")
        env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "LOG": str(log)}
        if render is not None:
            env["RENDER"] = render
        else:
            env["RENDER"] = re.search(r"^ARG RENDER=(\S+)$", body, re.M).group(1)
        done = subprocess.run(["sh", "-efc", script], env=env, capture_output=True, text=True)
        return done.returncode, log.read_text().splitlines()

    assert run(None) == (0, [])
    assert run("0") == (0, [])
    rc, calls = run("1")
    assert rc == 0
    assert calls == ["apt-get update", "apt-get install -y --no-install-recommends chromium",
                     "rm -rf /var/lib/apt/lists/*", "chromium --version"]
    rc, calls = run("yes")
    assert rc != 0 and calls == [], "a RENDER other than 0 or 1 fails the build"


def test_dockerfile_documents_the_render_variant_and_its_size():
    text = (ROOT / "Dockerfile").read_text()
    assert "docker build --build-arg RENDER=1 -t spiderduck:0.1.0-render ." in text
    assert re.search(r"about \d+ MiB installed", text), "the -render variant's measured size cost"
