"""spiderduck-client, the client's own distribution (clients/python/pyproject.toml, issue 28).

Its wheel is built from the repo's sources and holds the client and the v1 stubs only; installed
with its dependencies from PyPI into an empty virtualenv, the client's public API imports there
and none of the service does."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT_PROJECT = ROOT / "clients" / "python"
PIP = ("--disable-pip-version-check", "-q")
SERVICE_PACKAGES = ("cli", "common", "scheduler", "fetcher", "metadata_api", "web")

# the names spiderduck/client/__init__.py exports
PUBLIC_API = ("AsyncClient", "Client", "Error", "EventIterator", "EventStream", "InvalidUrl", "Lookup",
              "NotConfigured", "Resolution", "ServiceError", "StillResolving", "Unavailable", "UrlMetadata",
              "UrlProcessed", "CLOSE_CALLS_TIMEOUT", "DEFAULT_METADATA", "MAX_URLS", "PROCESSED_SUBJECT",
              "PROTOBUF_CONTENT_TYPE", "PUBLISH_WINDOW", "QUEUED_TTL", "RESOLUTION_KEY", "SUBMIT_SUBJECT")


def _project(path: Path) -> dict:
    return tomllib.loads(path.read_text())["project"]


def _requirement_name(requirement: str) -> str:
    return requirement.split(">")[0].split("=")[0].split("<")[0].split("~")[0].strip().lower()


def _build_wheel(tmp_path: Path) -> Path:
    """pip wheel, offline, with the setuptools of this venv; its build tree goes to tmp_path
    (DIST_EXTRA_CONFIG), so concurrent runs neither share nor leave one in the checkout."""
    (tmp_path / "build.cfg").write_text(f"[build]\nbuild_base = {tmp_path / 'build'}\n"
                                        f"[egg_info]\negg_base = {tmp_path}\n")
    out = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", *PIP, "--no-deps", "--no-build-isolation",
                    "-w", str(out), str(CLIENT_PROJECT)],
                   check=True, timeout=120, env={**os.environ, "DIST_EXTRA_CONFIG": str(tmp_path / "build.cfg")})
    [wheel] = out.glob("spiderduck_client-*.whl")
    return wheel


def test_metadata_follows_the_service():
    """Same version as the service, and the service's ranges for what the client needs."""
    client, service = _project(CLIENT_PROJECT / "pyproject.toml"), _project(ROOT / "pyproject.toml")
    assert client["name"] == "spiderduck-client"
    assert client["version"] == service["version"]
    ranges = {_requirement_name(r): r for r in service["dependencies"]}
    assert sorted(client["dependencies"]) == sorted(ranges[name] for name in ("grpcio", "protobuf", "nats-py"))
    assert sorted(client["optional-dependencies"]["markers"]) == sorted(
        ranges[name] for name in ("ada-url", "twitter-text-parser", "setuptools"))   # pkg_resources


def test_wheel_holds_the_client_only_and_installs_alone(tmp_path):
    wheel = _build_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    packaged = {name for name in names if ".dist-info/" not in name}
    assert {"spiderduck/__init__.py", "spiderduck/py.typed", "spiderduck/client/__init__.py",
            "spiderduck/client/_keys.py", "spiderduck/v1/__init__.py", "spiderduck/v1/metadata_pb2.py",
            "spiderduck/v1/metadata_pb2.pyi", "spiderduck/v1/events_pb2_grpc.py"} <= packaged
    stray = sorted(name for name in packaged
                   if name not in ("spiderduck/__init__.py", "spiderduck/py.typed")
                   and not name.startswith(("spiderduck/client/", "spiderduck/v1/")))
    assert stray == []
    assert not any(name.split("/")[0] in SERVICE_PACKAGES for name in names)
    # every module of the sources is in it
    sources = {path.relative_to(ROOT).as_posix() for package in ("client", "v1")
               for path in (ROOT / "spiderduck" / package).glob("*.py*")}
    assert sources <= packaged

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=60)
    python = venv / "bin" / "python"
    probe = subprocess.run([str(python), "-m", "pip", "install", *PIP, "--timeout", "5", "--retries", "0",
                            "nats-py>=2.9"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"PyPI unreachable, spiderduck-client not installed with its dependencies: "
                    f"{(probe.stderr.strip().splitlines() or ['pip failed'])[-1]}")
    subprocess.run([str(python), "-m", "pip", "install", *PIP, str(wheel)], check=True, timeout=120)

    script = (f"import importlib.util, spiderduck.client\n"
              f"from spiderduck.client import {', '.join(PUBLIC_API)}\n"
              f"from spiderduck.v1 import events_pb2, fetcher_pb2_grpc, metadata_pb2, metadata_pb2_grpc\n"
              f"assert issubclass(Unavailable, Error) and MAX_URLS == 300\n"
              f"client = AsyncClient()\n"
              f"for name in {SERVICE_PACKAGES!r}:\n"
              f"    assert importlib.util.find_spec(name) is None, name\n"
              f"print(spiderduck.client.__file__)\n")
    # from tmp_path, so neither the checkout nor this venv's site-packages is on sys.path
    done = subprocess.run([str(python), "-I", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(str(venv)), done.stdout
