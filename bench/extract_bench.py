"""bench/extract: pages per second of the whole Post Processor over the metascraper corpus.

Runs `extract_page` (charset, parse, rules) over every page of ../shared/corpus/metascraper,
pinned to one core, for a warm-up round and then ROUNDS timed rounds, and prints the median
pages per second. `--parser html5lib` measures the reference parser (slow: fewer rounds do).
Exits 0 with a message, measuring nothing, when ../shared is absent.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import time

from scheduler.extraction import extract_page
from scheduler.extraction.parsers import PARSERS

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "metascraper"


def corpus() -> list[tuple[bytes, str, str | None]]:
    cases = json.loads((CORPUS / "cases.json").read_text("utf-8"))
    return [((CORPUS / c["html"]).read_bytes(), c["url"], c.get("content_type")) for c in cases]


def one_round(pages: list[tuple[bytes, str, str | None]], parser: str) -> float:
    start = time.perf_counter()
    for body, url, content_type in pages:
        extract_page(body, url, content_type, parser=parser)
    return len(pages) / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parser", choices=PARSERS, default="selectolax")
    ap.add_argument("--rounds", type=int, default=None,
                    help="timed rounds after one warm-up (default 15, or 3 with html5lib)")
    args = ap.parse_args()
    if not (CORPUS / "cases.json").exists():
        print(f"bench/extract: skipped, {CORPUS} not found (the corpus is read from ../shared "
              "beside the repo)")
        return
    rounds = args.rounds or (3 if args.parser == "html5lib" else 15)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})   # one core
    pages = corpus()
    one_round(pages, args.parser)   # warm-up: imports, caches, regex compilation
    rates = [one_round(pages, args.parser) for _ in range(rounds)]
    print(f"extract_page, {args.parser}, {len(pages)} pages x {rounds} rounds, one core: "
          f"{statistics.median(rates):.0f} pages/s median (min {min(rates):.0f}, max {max(rates):.0f})")


if __name__ == "__main__":
    sys.exit(main())
