"""Commands that need no running service: extract."""
from __future__ import annotations

import sys

import orjson   # 30x faster than json.dumps with indent (bench/extract's cli line)

from common.errors import SpiderDuckError
from common.record_proto import page_to_dict
from common.config import Settings


def cmd_extract(settings: Settings, args) -> int:
    from scheduler.extraction import extract_cases, extract_page
    parser, prefer_dates = settings.process.parser, settings.process.prefer_dates
    if args.cases:
        try:
            result = extract_cases(args.cases, parser, prefer_dates)
        except OSError as exc:
            raise SpiderDuckError(f"cannot read {args.cases}: {exc.strerror or exc}") from exc
        sys.stdout.buffer.write(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
        return 0
    if not (args.url and args.file):
        raise SpiderDuckError("give --url URL FILE, or --cases CASES_JSON")
    try:
        with (sys.stdin.buffer if args.file == "-" else open(args.file, "rb")) as fh:
            body = fh.read()
    except OSError as exc:
        raise SpiderDuckError(f"cannot read {args.file}: {exc.strerror}") from exc
    page = extract_page(body, args.url, args.content_type, parser, prefer_dates)
    sys.stdout.buffer.write(orjson.dumps(page_to_dict(args.url, page)) + b"\n")
    return 0


def add_commands(sub, common) -> None:
    p = sub.add_parser("extract", parents=[common],
                       help="run the Post Processor on saved HTML, no network")
    p.add_argument("file", nargs="?", metavar="FILE", help="saved page ('-' for stdin)")
    p.add_argument("--url", help="the address the page was fetched from")
    p.add_argument("--content-type", help="the HTTP Content-Type header, if known")
    p.add_argument("--cases", metavar="CASES_JSON", help="a corpus cases file; prints name -> record")
    p.set_defaults(run=cmd_extract)
