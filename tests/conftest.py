"""Shared fixtures: ../shared lookup, a private nats-server per test, a local web."""
from __future__ import annotations

import pathlib

import pytest

from common.nats_server import EmbeddedNats

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


def shared_path(*parts: str) -> pathlib.Path:
    """A path under ../shared, or skip the test with the reason when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not found: third-party test data is read from ../shared beside the repo")
    return path


@pytest.fixture
def nats_server(tmp_path):
    """A nats-server of our own on a free port with a temporary JetStream store."""
    with EmbeddedNats(str(tmp_path / "nats")) as server:
        yield server


@pytest.fixture
async def localweb():
    from support.localweb import LocalWeb
    web = await LocalWeb().start()
    yield web
    await web.stop()


@pytest.fixture(name="shared_path")
def _shared_path_fixture():
    """`shared_path` as a fixture, for tests that look a file up at run time."""
    return shared_path


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "vectors(*parts, ids=None): parametrize the test's `case` argument with the "
        "objects of the JSON list at ../shared/<parts> (string entries are comments)",
    )


def pytest_generate_tests(metafunc):
    """Conformance vectors: one test per case of a JSON file under ../shared.

    `@pytest.mark.vectors("testdata", "x.json", ids=lambda case: ...)` on a test
    taking `case`. Where ../shared is absent the test is collected once, skipped,
    with shared_path's reason.
    """
    marker = metafunc.definition.get_closest_marker("vectors")
    if marker is None or "case" not in metafunc.fixturenames:
        return
    import json

    try:
        path = shared_path(*marker.args)
    except pytest.skip.Exception as absent:
        skip = pytest.mark.skip(reason=str(absent.msg))
        metafunc.parametrize("case", [pytest.param(None, marks=skip, id="missing")])
        return
    cases = [c for c in json.loads(path.read_text("utf-8")) if not isinstance(c, str)]
    metafunc.parametrize("case", cases, ids=marker.kwargs.get("ids"))
