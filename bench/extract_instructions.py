"""bench/extract_instructions: machine instructions per corpus page of an extraction worker's job,
counted by valgrind's callgrind: a figure the machine's load does not move (time and CPU time on
this shared 2-core machine drift by up to 2x within an hour; see docs/benchmarks.md).

The job is what src/spiderduck/extract/worker.py does per page: extract_page, the structured
data encoded as protobuf Struct bytes, and the answer pickled. Each tree is run twice under
callgrind, once warming up only (imports, caches, compiled expressions: one pass over the 60 pages
of ../shared/corpus/metascraper) and once warming up then making ROUNDS passes; the difference
over ROUNDS x 60 is the job's instructions per page (repeatable to about 0.01 M), the garbage
collector off and the hash seed fixed. A bare lxml parse of the same pages is counted the same way,
as the ratio's baseline (bench/extract's).

    bench/extract_instructions.py [--rounds 2] [--tree DIR ...]

`--tree` measures another checkout's src/ (an A/B: `git worktree add /tmp/base COMMIT`, then
`--tree /tmp/base --tree .`). Needs valgrind (Debian's package); exits 0 with a message, measuring
nothing, when ../shared or valgrind is absent. Takes about a minute a tree.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "metascraper"


def child(tree: str, rounds: int) -> None:
    """The job over the corpus, a warm-up pass then `rounds` passes (in a callgrind run)."""
    import gc
    import json
    import pickle
    gc.disable()
    pages = [((CORPUS / c["html"]).read_bytes(), c["url"], c.get("content_type"))
             for c in json.loads((CORPUS / "cases.json").read_text("utf-8"))]
    if tree == "lxml":
        import lxml.html

        def job() -> None:
            for body, _, _ in pages:
                lxml.html.document_fromstring(body)
    else:
        sys.path.insert(0, str(pathlib.Path(tree) / "src"))
        from spiderduck.core.frozen import evolve
        from spiderduck.extract.page import extract_page
        from spiderduck.wire.record_proto import StructuredData

        def job() -> None:
            for body, url, content_type in pages:
                page = extract_page(body, url, content_type, parser="selectolax", robots_token="spiderduck")
                if page.structured_data:
                    page = evolve(page, structured_data=StructuredData.from_dict(page.structured_data))
                pickle.dumps((1, "ok", page), protocol=pickle.HIGHEST_PROTOCOL)
    for _ in range(1 + rounds):
        job()


def instructions(tree: str, rounds: int) -> int:
    """Instructions callgrind collected over a child run."""
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                          __file__, "--child", tree, str(rounds)],
                         capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"}, check=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        sys.exit(f"callgrind printed no count:\n{out.stderr[-2000:]}")
    return int(found.group(1))


def per_page(tree: str, rounds: int, pages: int) -> float:
    return (instructions(tree, rounds) - instructions(tree, 0)) / (rounds * pages)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tree", action="append", default=[], help="a checkout whose src/ is measured (repeatable)")
    ap.add_argument("--child", nargs=2, metavar=("TREE", "ROUNDS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return 0
    if not (CORPUS / "cases.json").exists():
        print(f"{CORPUS} not found: the benchmark reads ../shared/corpus beside the repo; nothing measured")
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind not found (apt-get install valgrind): nothing measured")
        return 0
    import json
    pages = len(json.loads((CORPUS / "cases.json").read_text("utf-8")))
    bare = per_page("lxml", args.rounds, pages)
    print(f"bare lxml parse: {bare / 1e6:.2f} M instructions per page ({pages} pages, {args.rounds} rounds)")
    for tree in args.tree or [str(ROOT)]:
        job = per_page(str(pathlib.Path(tree).resolve()), args.rounds, pages)
        print(f"{tree}: {job / 1e6:.2f} M instructions per page, {bare / job:.3f}x bare lxml's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
