"""The committed stubs in src/spiderduck/v1 match what protos/ generates (run scripts/gen_protos.py)."""
from __future__ import annotations

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_protos", ROOT / "scripts" / "gen_protos.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_stubs_are_not_stale(tmp_path):
    fresh = _generator().generate(tmp_path)
    assert fresh, "protoc generated nothing"
    committed = ROOT / "src" / "spiderduck" / "v1"
    for path in fresh:
        mine = committed / path.name
        assert mine.exists(), f"{path.name} is missing: run python scripts/gen_protos.py"
        assert mine.read_bytes() == path.read_bytes(), (
            f"{path.name} is stale against protos/: run python scripts/gen_protos.py")
    names = {p.name for p in fresh}
    extra = {p.name for p in committed.glob("*_pb2*.py*")} - names
    assert not extra, f"stubs without a .proto: {extra}"


def test_stubs_import_from_the_installed_package():
    from spiderduck.v1 import events_pb2, fetcher_pb2_grpc, metadata_pb2_grpc
    assert hasattr(fetcher_pb2_grpc, "FetcherServiceStub")
    assert hasattr(metadata_pb2_grpc, "MetadataServiceStub")
    assert events_pb2.UrlProcessed.DESCRIPTOR.full_name == "spiderduck.v1.UrlProcessed"
