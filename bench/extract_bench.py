"""bench/extract: pages per second of the Post Processor's extraction over the metascraper corpus,
against a bare lxml parse of the same pages, in the same run, on one core.

Three ways over every page of ../shared/corpus/metascraper, interleaved round by round so that the
machine's drift touches all three alike:

  bare     lxml.html.document_fromstring(body): a parse and nothing else
  extract  extract_page: charset, the lexbor parse, the rules, JSON-LD, microdata
  cli      what `spiderduck extract --cases` does per page: extract_page, the record's JSON
           mapping, and the JSON text

It prints each one's median pages per second and the median of the per-round ratios to bare.
`--parser html5lib` measures the reference parser instead (slow: fewer rounds). `--cpu` times each
round in this process's CPU time instead of wall time: on a shared machine under load, a round's
wall time is mostly waiting for a core (round ratios of 0.2-6x), its CPU time is the work done.
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

import lxml.html
import orjson

import tree  # noqa: E402
tree.use_this_tree()
from spiderduck.core.config import HTML_PARSERS, FetcherSettings
from spiderduck.extract import extract_page
from spiderduck.extract.page import page_json
from spiderduck.extract.signals import robots_token

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "metascraper"

Page = tuple[bytes, str, "str | None"]
# The robots meta the scheduler reads with the default fetcher.user_agent.
ROBOTS_TOKEN = robots_token(FetcherSettings().user_agent)


def corpus() -> list[Page]:
    cases = json.loads((CORPUS / "cases.json").read_text("utf-8"))
    return [((CORPUS / c["html"]).read_bytes(), c["url"], c.get("content_type")) for c in cases]


def bare(pages: list[Page], parser: str) -> None:
    for body, _, _ in pages:
        lxml.html.document_fromstring(body)


def extract(pages: list[Page], parser: str) -> None:
    for body, url, content_type in pages:
        extract_page(body, url, content_type, parser=parser, robots_token=ROBOTS_TOKEN)


def cli(pages: list[Page], parser: str) -> None:
    orjson.dumps([page_json(body, url, content_type, parser=parser, robots_token=ROBOTS_TOKEN)
                  for body, url, content_type in pages], option=orjson.OPT_INDENT_2)


WAYS = {"bare": bare, "extract": extract, "cli": cli}


def rate(way, pages: list[Page], parser: str, clock=time.perf_counter) -> float:
    start = clock()
    way(pages, parser)
    return len(pages) / (clock() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parser", choices=HTML_PARSERS, default="selectolax")
    ap.add_argument("--rounds", type=int, default=None,
                    help="timed rounds after one warm-up (default 15, or 3 with html5lib)")
    ap.add_argument("--cpu", action="store_true",
                    help="time rounds in this process's CPU time, not wall time (a loaded machine)")
    args = ap.parse_args()
    if not (CORPUS / "cases.json").exists():
        print(f"bench/extract: skipped, {CORPUS} not found (the corpus is read from ../shared "
              "beside the repo)")
        return
    rounds = args.rounds or (3 if args.parser == "html5lib" else 15)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})   # one core
    pages = corpus()
    for way in WAYS.values():
        way(pages, args.parser)                     # warm-up: imports, caches, regex compilation
    clock = time.process_time if args.cpu else time.perf_counter
    rates: dict[str, list[float]] = {name: [] for name in WAYS}
    names = list(WAYS)
    for n in range(rounds):
        for name in names[n % 3:] + names[:n % 3]:  # each way goes first in turn
            rates[name].append(rate(WAYS[name], pages, args.parser, clock))
    print(f"{len(pages)} corpus pages x {rounds} rounds, one core, parser {args.parser}"
          f"{', CPU time' if args.cpu else ''}:")
    for name in names:
        line = f"  {name:8s} {statistics.median(rates[name]):6.0f} pages/s median"
        if name != "bare":
            ratios = [ours / base for ours, base in zip(rates[name], rates["bare"])]
            line += f", {statistics.median(ratios):.2f} x bare lxml (rounds {min(ratios):.2f}-{max(ratios):.2f})"
        print(line)


if __name__ == "__main__":
    sys.exit(main())
