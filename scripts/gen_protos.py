"""Regenerate the protobuf and gRPC stubs in src/spiderduck/v1 from protos/.

    python scripts/gen_protos.py [OUT_DIR]

OUT_DIR defaults to the repository root (stubs land in OUT_DIR/spiderduck/v1).
The stale-stub test runs this into a temporary folder and compares.
"""
import pathlib
import sys

from grpc_tools import protoc
import grpc_tools

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROTOS = ROOT / "protos"


def generate(out: pathlib.Path) -> list[pathlib.Path]:
    files = sorted(str(p.relative_to(PROTOS)) for p in PROTOS.rglob("*.proto"))
    well_known = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    (out / "spiderduck" / "v1").mkdir(parents=True, exist_ok=True)
    args = ["protoc", f"-I{PROTOS}", f"-I{well_known}", f"--python_out={out}",
            f"--pyi_out={out}", f"--grpc_python_out={out}", *files]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    return sorted((out / "spiderduck" / "v1").glob("*_pb2*.py*"))


if __name__ == "__main__":
    target = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "src"
    for path in generate(target):
        print(path)
