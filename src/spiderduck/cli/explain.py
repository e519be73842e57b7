"""`spiderduck explain URL [--json]`: why a URL's preview looks as it does (MetadataService.ExplainUrl
on the running service): each field of its record with where it was read and the values that lost
(from the stored page, extracted again), and what each platform will show of its card. Exit 0 with an explanation, 1 for a URL never seen or a service that cannot
answer."""
from __future__ import annotations

import asyncio
import sys

from google.protobuf import json_format

from spiderduck import client as sdclient
from spiderduck.cli.client import ServiceClient, _as_command_errors, add_token_option, api_token
from spiderduck.core.config import Settings
from spiderduck.v1 import metadata_pb2

SEVERITIES = ("error", "warning", "info")


async def _explain(settings: Settings, url: str, token: str | None) -> metadata_pb2.Explanation:
    async with ServiceClient(settings, token=token) as client:
        return await client.explain(url, timeout=30)


def render(explained: metadata_pb2.Explanation) -> str:
    """The explanation as text: the fields and their sources, then the findings, worst first."""
    record = json_format.MessageToDict(explained.metadata, preserving_proto_field_name=True)
    lines = [f"{explained.metadata.url}: {record.get('status', 'STATUS_UNSPECIFIED')}"]
    if explained.note:
        lines.append(f"  ({explained.note})")
    for source in explained.fields:
        value = record.get(source.field)
        shown = value.get("url", "") if isinstance(value, dict) else str(value or "")
        lines.append(f"  {source.field:<15} {shown[:40]!r:<44} from {source.source}")
        lines.extend(f"  {'':<15}   not {c.value[:60]!r} ({c.source}): {c.reason}" for c in source.rejected)
    findings = sorted(explained.findings, key=lambda f: (SEVERITIES.index(f.severity)
                                                         if f.severity in SEVERITIES else 3, f.platform))
    lines.append("findings:" if findings else "findings: none")
    lines.extend(f"  {f.severity:<8} {f.platform:<9} {f.code:<21} {f.message}" for f in findings)
    return "\n".join(lines) + "\n"


def cmd_explain(settings: Settings, args) -> int:
    with _as_command_errors(settings):
        try:
            explained = asyncio.run(_explain(settings, args.url, api_token(args)))
        except sdclient.ServiceError as exc:
            if exc.code == "NOT_FOUND":
                print(f"spiderduck: {exc.details}", file=sys.stderr)
                return 1
            raise
    if args.json:
        sys.stdout.write(json_format.MessageToJson(explained, preserving_proto_field_name=True,
                                                   indent=None) + "\n")
    else:
        sys.stdout.write(render(explained))
    return 0


def add_commands(sub, common) -> None:
    p = sub.add_parser("explain", parents=[common],
                       help="why a URL's preview looks as it does: each field's source, each platform's findings")
    p.add_argument("url", metavar="URL")
    p.add_argument("--json", action="store_true", help="the Explanation as one JSON object")
    add_token_option(p)
    p.set_defaults(run=cmd_explain)
