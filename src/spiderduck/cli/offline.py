"""Commands that need no running service: extract."""
from __future__ import annotations

import sys
from pathlib import Path

import orjson   # 30x faster than json.dumps with indent (bench/extract's cli line)

from spiderduck.core.config import Settings
from spiderduck.core.errors import SpiderDuckError
from spiderduck.wire.record_proto import page_to_dict


def _options(settings: Settings) -> dict[str, str]:
    """extract_page's parser and robots_token, as the scheduler passes them: process.parser and
    the product token of fetcher.user_agent."""
    from spiderduck.extract.signals import robots_token
    return {"parser": settings.process.parser, "robots_token": robots_token(settings.fetcher.user_agent)}


def _extract_cases(settings: Settings, path: str, jsonl: bool) -> None:
    """Every case of a corpus cases file, with a progress bar on a terminal's stderr. By
    default one JSON map name -> record (DESIGN's contract: tools json.load it); with `jsonl`,
    one {"case": name, ...record} line per case, written as each case is done."""
    from spiderduck.cli.client import progress_bar
    from spiderduck.extract.page import load_cases, page_json
    options = _options(settings)
    out = sys.stdout.buffer
    try:
        cases = load_cases(path)
    except OSError as exc:
        raise SpiderDuckError(f"cannot read {path}: {exc.strerror or exc}") from exc
    folder = Path(path).parent
    result = {}
    with progress_bar(len(cases), "case") as bar:
        for case in cases:
            try:
                body = (folder / case["html"]).read_bytes()
            except OSError as exc:
                raise SpiderDuckError(f"cannot read {folder / case['html']}: {exc.strerror or exc}") from exc
            record = page_json(body, case["url"], case.get("content_type"), **options)
            if jsonl:
                out.write(orjson.dumps({"case": case["name"], **record}) + b"\n")
                out.flush()
            else:
                result[case["name"]] = record
            bar.update(1)
    if not jsonl:
        out.write(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")


def cmd_extract(settings: Settings, args) -> int:
    from spiderduck.extract import extract_page
    if args.cases:
        _extract_cases(settings, args.cases, args.jsonl)
        return 0
    if args.jsonl:
        raise SpiderDuckError("--jsonl goes with --cases CASES_JSON")
    if not (args.url and args.file):
        raise SpiderDuckError("give --url URL FILE, or --cases CASES_JSON")
    try:
        with (sys.stdin.buffer if args.file == "-" else open(args.file, "rb")) as fh:
            body = fh.read()
    except OSError as exc:
        raise SpiderDuckError(f"cannot read {args.file}: {exc.strerror}") from exc
    page = extract_page(body, args.url, args.content_type, **_options(settings))
    sys.stdout.buffer.write(orjson.dumps(page_to_dict(args.url, page)) + b"\n")
    return 0


def add_commands(sub, common) -> None:
    p = sub.add_parser("extract", parents=[common],
                       help="run the Post Processor on saved HTML, no network")
    p.add_argument("file", nargs="?", metavar="FILE", help="saved page ('-' for stdin)")
    p.add_argument("--url", help="the address the page was fetched from")
    p.add_argument("--content-type", help="the HTTP Content-Type header, if known")
    p.add_argument("--cases", metavar="CASES_JSON", help="a corpus cases file; prints name -> record")
    p.add_argument("--jsonl", action="store_true",
                   help="with --cases: one JSON line {\"case\": name, ...record} per case, as each is done")
    p.set_defaults(run=cmd_extract)
