"""spiderduck-client, the client's own distribution (clients/python/pyproject.toml, issue 28), and
the service's beside it (issue 37).

`spiderduck` is one import package, a namespace package two distributions share without sharing
a file: spiderduck-client's wheel holds spiderduck/client/ and spiderduck/v1/ only; the service's
wheel holds every other part of spiderduck/ and nothing at the top level. Installed into an empty
virtualenv, the client's public API imports there and none of the service does; with both
installed, uninstalling either leaves the other whole and importable."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT_PROJECT = ROOT / "clients" / "python"
PIP = ("--disable-pip-version-check", "-q")
SERVICE_PARTS = ("core", "wire", "stores", "bus", "rpc", "extract", "query",
                 "scheduler", "fetcher", "metadata_api", "web", "cli")
OLD_TOP_LEVEL = ("cli", "common", "scheduler", "fetcher", "metadata_api", "web")   # before issue 37

# the names src/spiderduck/client/__init__.py exports
PUBLIC_API = ("AsyncClient", "Client", "Error", "EventIterator", "EventStream", "InvalidUrl", "Lookup",
              "NotConfigured", "Resolution", "ServiceError", "StillResolving", "Unavailable", "UrlMetadata",
              "UrlProcessed", "CLOSE_CALLS_TIMEOUT", "DEFAULT_METADATA", "MAX_URLS", "PROCESSED_SUBJECT",
              "PROTOBUF_CONTENT_TYPE", "PUBLISH_WINDOW", "QUEUED_TTL", "RESOLUTION_KEY", "SUBMIT_SUBJECT")


@pytest.fixture(autouse=True)
def _no_pycache_prefix(monkeypatch):
    """pip here runs as a user's would: bin/test's PYTHONPYCACHEPREFIX (a bytecode cache for the
    test run) would send the bytecode pip compiles at install out of site-packages."""
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)


def _project(path: Path) -> dict:
    return tomllib.loads(path.read_text())["project"]


def _requirement_name(requirement: str) -> str:
    return requirement.split(">")[0].split("=")[0].split("<")[0].split("~")[0].strip().lower()


def _build_wheel(tmp_path: Path, project: Path = CLIENT_PROJECT, name: str = "spiderduck_client") -> Path:
    """pip wheel, offline, with the setuptools of this venv; its build tree goes to tmp_path
    (DIST_EXTRA_CONFIG), so concurrent runs neither share nor leave one in the checkout."""
    work = tmp_path / name
    (work / "egg").mkdir(parents=True)
    (work / "build.cfg").write_text(f"[build]\nbuild_base = {work / 'build'}\n"
                                    f"[egg_info]\negg_base = {work / 'egg'}\n")
    out = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", *PIP, "--no-deps", "--no-build-isolation",
                    "-w", str(out), str(project)],
                   check=True, timeout=180, env={**os.environ, "DIST_EXTRA_CONFIG": str(work / "build.cfg")})
    [wheel] = out.glob(f"{name}-*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheel_of(tmp_path_factory):
    """wheel_of(name): the wheel of "spiderduck_client" or "spiderduck", built on first request and
    shared by this module's tests (none of them changes it), so each is built once per run."""
    built: dict[str, Path] = {}

    def wheel(name: str) -> Path:
        if name not in built:
            built[name] = _build_wheel(tmp_path_factory.mktemp(name),
                                       CLIENT_PROJECT if name == "spiderduck_client" else ROOT, name)
        return built[name]
    return wheel


def _packaged(wheel: Path) -> set[str]:
    return {name for name in zipfile.ZipFile(wheel).namelist() if ".dist-info/" not in name}


def _pip(python: Path) -> list[str]:
    """pip acting on the virtualenv of `python`: the pip of the Python running the tests, run in that
    venv by its --python (pip >= 22.3), as the venv has no pip of its own (bootstrapping one by
    ensurepip took 5 s a venv). The venv's packages are still all that venv's python sees."""
    return [sys.executable, "-m", "pip", "--python", str(python)]


def _venv_with(tmp_path: Path, *requirements: str) -> Path:
    """A new virtualenv, without pip (see _pip), with `requirements` from the index, or skip when
    it is unreachable."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    python = venv / "bin" / "python"
    probe = subprocess.run([*_pip(python), "install", *PIP, "--timeout", "5", "--retries", "0",
                            *requirements], capture_output=True, text=True, timeout=300)
    if probe.returncode != 0:
        pytest.skip(f"PyPI unreachable, {' '.join(requirements)} not installed: "
                    f"{(probe.stderr.strip().splitlines() or ['pip failed'])[-1]}")
    return python


def _run(python: Path, script: str, cwd: Path) -> subprocess.CompletedProcess:
    # -I from cwd: neither the checkout nor its src/ is on sys.path, only the venv's site-packages
    return subprocess.run([str(python), "-I", "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


def test_metadata_follows_the_service():
    """Same version as the service, and the service's ranges for what the client needs."""
    client, service = _project(CLIENT_PROJECT / "pyproject.toml"), _project(ROOT / "pyproject.toml")
    assert client["name"] == "spiderduck-client"
    assert client["version"] == service["version"]
    ranges = {_requirement_name(r): r for r in service["dependencies"]}
    assert sorted(client["dependencies"]) == sorted(ranges[name] for name in ("grpcio", "protobuf", "nats-py"))
    assert client["optional-dependencies"]["markers"] == [ranges["ada-url"]]


def test_wheel_holds_the_client_only_and_installs_alone(tmp_path, wheel_of):
    wheel = wheel_of("spiderduck_client")
    names = zipfile.ZipFile(wheel).namelist()
    packaged = _packaged(wheel)
    assert {"spiderduck/client/__init__.py", "spiderduck/client/py.typed", "spiderduck/client/keys.py",
            "spiderduck/v1/__init__.py", "spiderduck/v1/metadata_pb2.py", "spiderduck/v1/metadata_pb2.pyi",
            "spiderduck/v1/events_pb2_grpc.py", "spiderduck/v1/py.typed"} <= packaged
    stray = sorted(name for name in packaged if not name.startswith(("spiderduck/client/", "spiderduck/v1/")))
    assert stray == [], "the client's wheel holds spiderduck/client/ and spiderduck/v1/ only"
    assert not any(name.split("/")[0] in OLD_TOP_LEVEL for name in names)
    # every module of the sources is in it
    sources = {path.relative_to(ROOT / "src").as_posix() for package in ("client", "v1")
               for path in (ROOT / "src" / "spiderduck" / package).glob("*.py*")}
    assert sources <= packaged

    python = _venv_with(tmp_path, "nats-py>=2.9")
    subprocess.run([*_pip(python), "install", *PIP, str(wheel)], check=True, timeout=120)
    script = (f"import importlib.util, spiderduck.client\n"
              f"from spiderduck.client import {', '.join(PUBLIC_API)}\n"
              f"from spiderduck.v1 import events_pb2, fetcher_pb2_grpc, metadata_pb2, metadata_pb2_grpc\n"
              f"assert issubclass(Unavailable, Error) and MAX_URLS == 300\n"
              f"client = AsyncClient()\n"
              f"for name in {SERVICE_PARTS!r}:\n"
              f"    assert importlib.util.find_spec('spiderduck.' + name) is None, name\n"
              f"for name in {OLD_TOP_LEVEL!r}:\n"
              f"    assert importlib.util.find_spec(name) is None, name\n"
              f"print(spiderduck.client.__file__)\n")
    done = _run(python, script, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(str(tmp_path / "venv")), done.stdout


def test_the_service_wheel_installs_spiderduck_and_no_file_of_the_clients(wheel_of):
    """One import package: the service's wheel installs spiderduck/ and nothing else at the top
    level, no spiderduck/__init__.py (a namespace package), and no file the client's wheel has."""
    service, client = _packaged(wheel_of("spiderduck")), _packaged(wheel_of("spiderduck_client"))
    assert {name.split("/")[0] for name in service} == {"spiderduck"}
    assert {name.split("/")[1] for name in service} == set(SERVICE_PARTS)
    assert service & client == set()
    assert "spiderduck/__init__.py" not in service | client
    assert {"spiderduck/extract/clean_urls_rules.json", "spiderduck/web/templates/url.html",
            "spiderduck/core/settings.py", "spiderduck/cli/main.py"} <= service
    requires = [r for r in _project(ROOT / "pyproject.toml")["dependencies"]
                if _requirement_name(r) == "spiderduck-client"]
    assert requires == [f"spiderduck-client=={_project(CLIENT_PROJECT / 'pyproject.toml')['version']}"]


# what each side imports to show it is whole: the client's public API and the stubs; of the
# service, modules that need nothing but the standard library and the client's dependencies
CLIENT_SIDE = "import spiderduck.client, spiderduck.v1.metadata_pb2; from spiderduck.client import Client\n"
SERVICE_SIDE = "import spiderduck.core.errors, spiderduck.core.status, spiderduck.core.backoff\n"
GONE = "import importlib.util\nassert importlib.util.find_spec({name!r}) is None, {name!r}\n"


def test_installing_both_then_uninstalling_either_leaves_the_other(tmp_path, wheel_of):
    service_wheel, client_wheel = wheel_of("spiderduck"), wheel_of("spiderduck_client")
    python = _venv_with(tmp_path, "grpcio>=1.70", "protobuf>=7.35.1", "nats-py>=2.9")
    pip = _pip(python)

    def install(*wheels: Path) -> None:
        # --no-deps: the service's own dependencies are not what this test is about
        subprocess.run([*pip, "install", *PIP, "--no-deps", *map(str, wheels)], check=True, timeout=120)

    def uninstall(name: str) -> None:
        subprocess.run([*pip, "uninstall", *PIP, "-y", name], check=True, timeout=60)

    def files_of(*names: str) -> list[list[Path]]:
        """The spiderduck/ files of each of `names` by one `pip show -f` (a "---" line between them)."""
        shown = subprocess.run([*pip, "show", "-f", *names], capture_output=True, text=True, timeout=60,
                               check=True).stdout
        by_name = {}
        for block in re.split(r"^---$", shown, flags=re.M):
            name = re.search(r"^Name: (.+)$", block, re.M).group(1).strip()
            location = Path(re.search(r"^Location: (.+)$", block, re.M).group(1))
            listed = block.split("Files:", 1)[1].split()
            by_name[name] = [location / f for f in listed if f.startswith("spiderduck/")]
        assert sorted(by_name) == sorted(names), shown
        return [by_name[name] for name in names]

    install(client_wheel, service_wheel)
    assert _run(python, CLIENT_SIDE + SERVICE_SIDE, tmp_path).returncode == 0
    client_files, service_files = files_of("spiderduck-client", "spiderduck")
    assert client_files and service_files and not set(client_files) & set(service_files)

    uninstall("spiderduck")
    done = _run(python, CLIENT_SIDE + GONE.format(name="spiderduck.core"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert all(path.exists() for path in client_files)
    assert not any(path.exists() for path in service_files)

    install(service_wheel)
    uninstall("spiderduck-client")
    done = _run(python, SERVICE_SIDE + GONE.format(name="spiderduck.client"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert all(path.exists() for path in service_files)
    assert not any(path.exists() for path in client_files)
