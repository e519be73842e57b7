"""`spiderduck forget`: remove URLs or a domain from SpiderDuck and keep them off it
(MetadataService.Forget, ListForgotten and Unforget: admin calls).

    spiderduck forget URL... [--file F] [--domain D] --reason TEXT [--json]
    spiderduck forget --list [--json]
    spiderduck forget --undo URL... | --undo --domain D

A forget removes each URL with the URLs of its redirect chain (or, with --domain, every URL of
that registrable domain): records, content-log records and events; then they are on the
denylist, so a later submission ends FORGOTTEN without a request to the origin. It prints what
was removed, one line (or, with --json, one JSON object). --reason is required: it is what the
audit log and the denylist keep of why, which is what an auditor asks for; a forget without one
is refused before anything is asked. URLs of --file are sent in calls of at most
metadata_api.max_urls.

The call needs an admin: a token of the service's metadata_api.admin_tokens_file, read from
--token-file F, else $SPIDERDUCK_ADMIN_TOKEN, else $SPIDERDUCK_TOKEN (never an argument: it would
show in `ps`); or the client certificate of tls.cert when its identity is in
metadata_api.admin_callers; or, with neither set on the service, a caller on its loopback.

Exit 0 when done, 1 when the service refused or failed (one line saying why; a forget that failed
part-way can be run again until it succeeds), 2 for a wrong command."""
from __future__ import annotations

import asyncio
import datetime
import json
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import grpc

from spiderduck import client as sdclient
from spiderduck.cli.client import ServiceClient, api_token, read_url_lines
from spiderduck.cli.text import printable
from spiderduck.core.config import Settings
from spiderduck.core.errors import SpiderDuckError
from spiderduck.v1 import metadata_pb2

ADMIN_TOKEN_ENV = "SPIDERDUCK_ADMIN_TOKEN"
TOKEN_ENV = "SPIDERDUCK_TOKEN"


def admin_token(args) -> str | None:
    """The admin token: the first line of --token-file F, else $SPIDERDUCK_ADMIN_TOKEN, else
    $SPIDERDUCK_TOKEN (an admin token is accepted wherever an ordinary one is), else none."""
    if getattr(args, "token_file", None):
        return api_token(args)
    return (os.environ.get(ADMIN_TOKEN_ENV, "").strip() or os.environ.get(TOKEN_ENV, "").strip()
            or None)


class AdminClient(ServiceClient):
    """The command's client: the admin calls of MetadataService, their failures as the client's
    errors (never a raw gRPC one)."""

    async def _call(self, method: str, request, timeout: float | None):
        try:
            return await getattr(self._service(), method)(request, timeout=timeout,
                                                         metadata=self._grpc.call_metadata)
        except grpc.aio.AioRpcError as exc:
            raise self._failed(exc) from None

    async def forget(self, urls: list[str], domain: str, reason: str) -> metadata_pb2.ForgetResponse:
        # No deadline: a domain's forget rewrites content-log files and may take minutes; it is
        # an operator's command (Ctrl-C stops waiting) and a forget can be repeated.
        return await self._call("Forget", metadata_pb2.ForgetRequest(urls=urls, domain=domain, reason=reason),
                                None)

    async def forgotten(self) -> list[metadata_pb2.ForgottenEntry]:
        answer = await self._call("ListForgotten", metadata_pb2.ListForgottenRequest(), self.timeout)
        return list(answer.entries)

    async def unforget(self, urls: list[str], domain: str) -> int:
        answer = await self._call("Unforget", metadata_pb2.UnforgetRequest(urls=urls, domain=domain),
                                  self.timeout)
        return answer.entries


# --- what the command prints ----------------------------------------------------------------------

@dataclass
class Removed:
    """What a forget removed, summed over its calls."""
    records: int = 0
    content_records: int = 0
    events: int = 0

    def add(self, answer: metadata_pb2.ForgetResponse) -> None:
        self.records += answer.records
        self.content_records += answer.content_records
        self.events += answer.events


def _plural(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _what(urls: list[str], domain: str) -> str:
    parts = [_plural(len(urls), "URL")] if len(urls) != 1 else [printable(urls[0])]
    if domain:
        parts.append(f"domain {printable(domain)}")
    return " and ".join(parts) if urls else parts[-1]


def removed_line(urls: list[str], domain: str, removed: Removed) -> str:
    """The line a person reads: what was forgotten and what went."""
    return (f"forgot {_what(urls, domain)}: removed {_plural(removed.records, 'record')}, "
            f"{_plural(removed.content_records, 'content-log record')}, {_plural(removed.events, 'event')}; "
            f"on the denylist until `spiderduck forget --undo`")


def removed_json(urls: list[str], domain: str, removed: Removed) -> str:
    return json.dumps({"urls": urls, "domain": domain, "records": removed.records,
                       "content_records": removed.content_records, "events": removed.events},
                      ensure_ascii=False)


def _when(entry: metadata_pb2.ForgottenEntry) -> str:
    if not entry.HasField("forgotten_at"):
        return "-"
    at = entry.forgotten_at.ToDatetime(tzinfo=datetime.timezone.utc)
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def entries_table(entries: list[metadata_pb2.ForgottenEntry]) -> str:
    """The denylist as a table: what (a URL, or domain D), reason, by, when (UTC)."""
    rows = [("FORGOTTEN", "REASON", "BY", "WHEN")]
    rows += [(printable(e.url) if e.url else f"domain {printable(e.domain)}", printable(e.reason) or "-",
              printable(e.by) or "-", _when(e)) for e in entries]
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]) - 1)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1]
                     for row in rows)


def entry_json(entry: metadata_pb2.ForgottenEntry) -> str:
    return json.dumps({"url": entry.url, "domain": entry.domain, "reason": entry.reason, "by": entry.by,
                       "forgotten_at": _when(entry) if entry.HasField("forgotten_at") else None},
                      ensure_ascii=False)


# --- the command ----------------------------------------------------------------------------------

def refusal(settings: Settings, exc: sdclient.Error) -> str:
    """One line saying why a call failed, and what to do about it."""
    if exc.code is None:
        return str(exc)
    where = f"metadata-api at {settings.metadata_api.listen}"
    details = printable(exc.details)
    if exc.code == "PERMISSION_DENIED":
        return (f"{where} refused: {details}; forgetting needs an admin: a token of "
                f"metadata_api.admin_tokens_file (--token-file F or ${ADMIN_TOKEN_ENV}), a client "
                f"certificate named in metadata_api.admin_callers, or, with neither set, a caller on loopback")
    if exc.code == "UNAUTHENTICATED":
        return f"{where}: {details}; give an admin token with --token-file F or ${ADMIN_TOKEN_ENV}"
    if exc.code == "UNAVAILABLE":
        again = "" if "repeat" in details else ("; not done, or done in part: run the same command again "
                                                "(a forget can be repeated until it succeeds)")
        return f"{where}: UNAVAILABLE: {details}{again}"
    return f"{where}: {exc.code}: {details}"


def _run(settings: Settings, args, work: Callable[[AdminClient], Awaitable[int]]) -> int:
    async def main() -> int:
        async with AdminClient(settings, token=admin_token(args), name="spiderduck-forget") as client:
            return await work(client)
    try:
        return asyncio.run(main())
    except sdclient.Error as exc:
        print(f"spiderduck forget: {refusal(settings, exc)}", file=sys.stderr)
        return 1


def _batches(urls: list[str], size: int) -> list[list[str]]:
    return [urls[i:i + size] for i in range(0, len(urls), size)] or [[]]


def cmd_forget(settings: Settings, args) -> int:
    urls = list(args.urls) + (read_url_lines(args.file) if args.file else [])
    domain = (args.domain or "").strip()
    if args.list:
        if urls or domain or args.reason:
            raise SpiderDuckError("--list takes no URL, --domain or --reason")
        return _run(settings, args, lambda client: _list(client, args.json))
    if not urls and not domain:
        raise SpiderDuckError("nothing to forget: give URLs, --file F or --domain D")
    if args.undo:
        if args.reason:
            raise SpiderDuckError("--undo takes no --reason (the audit log names who took entries off)")
        return _run(settings, args, lambda client: _undo(client, urls, domain))
    reason = (args.reason or "").strip()
    if not reason:
        raise SpiderDuckError("a forget needs --reason TEXT (a ticket, \"GDPR art. 17 request 1234\"): "
                              "the audit log and the denylist keep it")
    return _run(settings, args, lambda client: _forget(client, urls, domain, reason, args.json,
                                                       settings.metadata_api.max_urls))


async def _forget(client: AdminClient, urls: list[str], domain: str, reason: str, as_json: bool,
                  per_call: int) -> int:
    removed = Removed()
    done: list[str] = []
    for i, batch in enumerate(_batches(urls, per_call)):
        try:
            removed.add(await client.forget(batch, domain if i == 0 else "", reason))
        except sdclient.Error:
            if done:
                print(f"spiderduck forget: done before the failure: {removed_line(done, domain, removed)}",
                      file=sys.stderr)
            raise
        done += batch
    print(removed_json(urls, domain, removed) if as_json else removed_line(urls, domain, removed))
    return 0


async def _list(client: AdminClient, as_json: bool) -> int:
    entries = await client.forgotten()
    if as_json:
        for entry in entries:
            print(entry_json(entry))
    elif entries:
        print(entries_table(entries))
    else:
        print("the denylist is empty", file=sys.stderr)
    return 0


async def _undo(client: AdminClient, urls: list[str], domain: str) -> int:
    taken = await client.unforget(urls, domain)
    if not taken:
        print(f"spiderduck forget: {_what(urls, domain)}: not on the denylist", file=sys.stderr)
        return 1
    print(f"took {taken} {'entry' if taken == 1 else 'entries'} off the denylist")
    return 0


def add_commands(sub, common) -> None:
    p = sub.add_parser("forget", parents=[common],
                       help="remove URLs or a domain (records, content log, events) and deny them; "
                            "--list, --undo")
    p.add_argument("urls", nargs="*", metavar="URL", help="each with the URLs of its redirect chain")
    p.add_argument("--domain", metavar="D", help="every URL of this registrable domain")
    p.add_argument("--reason", metavar="TEXT",
                   help="why (a ticket, a request's number): required, kept in the audit log and the denylist")
    p.add_argument("--file", metavar="F",
                   help="also the URLs of F, one per line ('-' for stdin; blank lines and #comments skipped)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--list", action="store_true", help="print the denylist")
    mode.add_argument("--undo", action="store_true",
                      help="take the URLs or --domain off the denylist (nothing removed comes back)")
    p.add_argument("--json", action="store_true", help="JSON: one object (--list: one per entry and line)")
    p.add_argument("--token-file", metavar="F",
                   help=f"a file holding an admin token (metadata_api.admin_tokens_file); else "
                        f"${ADMIN_TOKEN_ENV}, else ${TOKEN_ENV}")
    p.set_defaults(run=cmd_forget)
