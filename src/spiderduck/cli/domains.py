"""`spiderduck domains`: the fetchers' domain queues, through FetcherAdmin.

    spiderduck domains [list] [DOMAIN...] [--json]   a table (or one JSON object per line)
    spiderduck domains pause DOMAIN [--for S]        S: seconds or 30s, 5m, ...; default fetcher.pause_for
    spiderduck domains resume DOMAIN                 lifts a pause or a halt
    spiderduck domains set-rate DOMAIN RATE          requests per second

It asks every fetcher it knows of (`scheduler.fetchers`, else `fetcher.listen`). A list
that misses a fetcher exits non-zero after printing the rest. A change is sent to each
fetcher; the owner of the domain keeps it in NATS KV (so it outlives restarts) and applies
it, the others answer FAILED_PRECONDITION; it exits non-zero when no fetcher applied it.
DOMAIN may be a host name or URL under the domain; what names no registrable domain (`com`,
`*.example.com`, `-bad-.com`) is refused by the fetchers (INVALID_ARGUMENT).
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import math
import sys

from google.protobuf import json_format

from spiderduck.core.config import Settings, parse_duration
from spiderduck.core.errors import ConfigError, SpiderDuckError
from spiderduck.rpc import fetcher_admin as admin_client
from spiderduck.v1 import fetcher_pb2 as pb

def _as_dict(info: pb.DomainInfo) -> dict:
    return json_format.MessageToDict(info, preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=True)


def _note(info: pb.DomainInfo) -> str:
    if info.state == pb.DOMAIN_PAUSED and info.paused_until:
        until = datetime.datetime.fromtimestamp(info.paused_until).strftime("%H:%M:%S")
        return f"until {until}: {info.reason}"
    if info.state == pb.DOMAIN_HALTED:
        return info.reason
    if info.hold_seconds > 0:
        return f"holding {info.hold_seconds:.1f}s: {info.hold_reason}"
    return ""


def _table(infos: list[pb.DomainInfo]) -> str:
    head = ("DOMAIN", "STATE", "QUEUE", "RATE/S", "INTERVAL", "REQUESTS", "ERRORS", "STATUSES",
            "OWNER", "NOTE")
    rows = [head]
    for i in infos:
        statuses = " ".join(f"{k}:{v}" for k, v in sorted(i.status_counts.items()))
        rows.append((i.domain, pb.DomainState.Name(i.state).removeprefix("DOMAIN_").lower(),
                     str(i.queue_depth), f"{i.rate:g}", f"{i.interval_seconds:.2f}s",
                     f"{i.requests}/{i.window_seconds:g}s", f"{i.error_rate:.0%}",
                     statuses or "-", i.owner, _note(i)))
    widths = [max(len(r[c]) for r in rows) for c in range(len(head))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
                     for row in rows)


def _print(infos: list[pb.DomainInfo], as_json: bool) -> None:
    if as_json:
        for info in infos:
            print(json.dumps(_as_dict(info), ensure_ascii=False, sort_keys=True))
    elif infos:
        print(_table(infos))
    else:
        print("no domain queues", file=sys.stderr)


def cmd_list(settings: Settings, args) -> int:
    answers = asyncio.run(admin_client.list_domains(settings.fetcher_addresses,
                                                    getattr(args, "domains", None) or [], settings.tls))
    if answers.infos or not answers.failed:
        _print(answers.infos, args.json)
    if answers.failed:
        raise SpiderDuckError("; ".join(answers.reasons()))
    return 0


def _change(settings: Settings, args, call) -> int:
    answers = asyncio.run(admin_client.answers(settings.fetcher_addresses, call, settings.tls))
    if not answers.infos:
        raise SpiderDuckError("; ".join(answers.reasons()) or "no fetcher to ask")
    _print(answers.infos, args.json)
    for warning in answers.reasons(skip_not_owner=True):
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def cmd_pause(settings: Settings, args) -> int:
    seconds = 0.0
    if args.seconds is not None:
        try:
            seconds = parse_duration(args.seconds)
        except ConfigError as exc:
            raise SpiderDuckError(f"--for: {exc}") from exc
        if not (seconds > 0 and math.isfinite(seconds)):
            raise SpiderDuckError(f"--for must be a positive duration, got {args.seconds!r}")
    return _change(settings, args, admin_client.pause(args.domain, seconds))


def cmd_resume(settings: Settings, args) -> int:
    return _change(settings, args, admin_client.resume(args.domain))


def cmd_set_rate(settings: Settings, args) -> int:
    try:
        rate = float(args.rate)
    except ValueError:
        rate = math.nan
    if not (rate > 0 and math.isfinite(rate)):
        raise SpiderDuckError(f"RATE must be a positive number of requests per second, got {args.rate!r}")
    return _change(settings, args, admin_client.set_rate(args.domain, rate))


def add_commands(sub, common) -> None:
    # The actions' own --config/--set/--json default to SUPPRESS, so that
    # `spiderduck domains --config F list` keeps F (a sub-parser's defaults would replace it).
    leaf = argparse.ArgumentParser(add_help=False)
    leaf.add_argument("--config", metavar="F", default=argparse.SUPPRESS, help="YAML config file")
    leaf.add_argument("--set", metavar="KEY=VALUE", action="append", default=argparse.SUPPRESS,
                      help="override one config key")
    leaf.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                      help="one JSON object per domain and line")
    p = sub.add_parser("domains", parents=[common],
                       help="list, pause, resume or re-rate the fetchers' domain queues")
    p.add_argument("--json", action="store_true", help="one JSON object per domain and line")
    p.set_defaults(run=cmd_list)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    a = actions.add_parser("list", parents=[leaf], help="queue depth, rate, status counts, state")
    a.add_argument("domains", nargs="*", metavar="DOMAIN", help="only these domains")
    a.set_defaults(run=cmd_list)
    a = actions.add_parser("pause", parents=[leaf], help="hold a domain's requests for a while")
    a.add_argument("domain", metavar="DOMAIN")
    a.add_argument("--for", dest="seconds", metavar="S",
                   help="how long (seconds, or 30s, 5m, 1h); default fetcher.pause_for")
    a.set_defaults(run=cmd_pause)
    a = actions.add_parser("resume", parents=[leaf], help="lift a pause or a halt")
    a.add_argument("domain", metavar="DOMAIN")
    a.set_defaults(run=cmd_resume)
    a = actions.add_parser("set-rate", parents=[leaf], help="requests per second for a domain")
    a.add_argument("domain", metavar="DOMAIN")
    a.add_argument("rate", metavar="RATE")
    a.set_defaults(run=cmd_set_rate)
