"""Summarise a py-spy raw (collapsed stacks) profile: where the samples are, by function and by area.

    py-spy record --pid PID --format raw -o prof.raw ...
    python bench/profile_summary.py prof.raw [--top 25]

Prints the share of samples in each area (a function anywhere on the stack, first matching
area wins, innermost first) and the functions with the most inclusive and self samples.
"""
from __future__ import annotations

import argparse
import collections
import re

# Area -> substrings of a frame ("function (path:line)"); checked from the innermost frame out.
AREAS = [
    ("gzip/zlib (WARC compression)", ("gzip.py", "zlib", "compress (", "warc_record")),
    ("protobuf JSON (json_format)", ("json_format.py",)),
    ("extraction (parse + rules)", ("spiderduck/extract/",)),
    ("sqlite", ("sqlite_metadata.py", "sqlite_reads.py")),
    ("record <-> protobuf", ("record_proto.py", "record_wire.py")),
    ("grpc", ("grpc/", "spiderduck/rpc/", "fetch_proto.py")),
    ("aiohttp client/server", ("aiohttp/", "yarl/", "multidict/")),
    ("nats", ("nats/",)),
    ("fetcher (politeness, robots)", ("spiderduck/fetcher/",)),
    ("scheduler stages", ("spiderduck/scheduler/",)),
    ("asyncio loop", ("asyncio/", "uvloop")),
]


def frames(line: str) -> tuple[list[str], int]:
    stack, _, count = line.rstrip("\n").rpartition(" ")
    return stack.split(";"), int(count)


def area_of(stack: list[str]) -> str:
    for frame in reversed(stack):
        for name, needles in AREAS:
            if any(n in frame for n in needles):
                return name
    return "other"


def short(frame: str) -> str:
    m = re.match(r"(.*) \((.*?):\d+\)$", frame)
    if not m:
        return frame
    path = m.group(2)
    for marker in ("site-packages/", "python3.11/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{m.group(1)} ({path})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw")
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    total = 0
    areas: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    self_: collections.Counter[str] = collections.Counter()
    with open(args.raw, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                continue
            stack, count = frames(line)
            total += count
            areas[area_of(stack)] += count
            for name in {short(f) for f in stack}:
                inclusive[name] += count
            self_[short(stack[-1])] += count
    print(f"{total} samples")
    print("\nby area (innermost matching frame):")
    for name, n in areas.most_common():
        print(f"  {100 * n / total:5.1f}%  {name}")
    print(f"\ntop {args.top} self:")
    for name, n in self_.most_common(args.top):
        print(f"  {100 * n / total:5.1f}%  {name}")
    print(f"\ntop {args.top} inclusive (skipping the loop's own frames):")
    shown = 0
    for name, n in inclusive.most_common():
        if any(s in name for s in ("runpy", "asyncio/", "threading.py", "src/spiderduck/cli/main.py", "src/spiderduck/cli/roles.py",
                                   "concurrent/futures")):
            continue
        print(f"  {100 * n / total:5.1f}%  {name}")
        shown += 1
        if shown >= args.top:
            break


if __name__ == "__main__":
    main()
