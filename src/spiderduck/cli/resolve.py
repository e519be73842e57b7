"""`spiderduck resolve URL`: one URL's record, fresh enough, crawled first if need be.

    spiderduck resolve URL [--refresh] [--timeout S] [--trace] [--config F] [--set KEY=VALUE]

Without --trace it asks the running service: MetadataService.ResolveUrl at metadata_api.listen
(cli.client.cmd_resolve_remote), within --timeout (else the server's metadata_api.resolve_timeout).

With --trace it runs the URL through the service's own pipeline, here, on its real parts.
It opens what the scheduler opens, by the same code (scheduler.worker.scheduler_parts): the
service's NATS (`nats_url`, else the running `up`'s), its metadata and content stores, its
fetchers, routed as the scheduler routes (`scheduler.fetchers`, else the lease bucket; to the
fetcher of the `up` running on data_dir, which holds every shard), and an extraction pool of one
worker. The URL goes through the pipeline as a submission of it would, so what happens is what
the service does: its hops through the fetchers (politely, robots.txt first), the crawl and the
sighting recorded in the stores, the UrlProcessed announced on spiderduck.events.processed, a
fresh record answered FRESH without a fetch. It prints the record as `get` prints it (one JSON
line), and its resolution on stderr.

--trace prints, before the record, each stage's decision (src/spiderduck/scheduler/trace.py, as text by
src/spiderduck/cli/trace_view.py): whether it called next or answered, what it changed of the task and of the
outcome, the hops, its time. A run that fails prints its trace too, up to where it failed.
Tracing needs the stages in this process, which is why `resolve_here` runs them here.
--refresh submits the URL with refresh; --timeout gives up after S seconds, with the trace so far.

Exit status: 0 when the URL got an outcome, whatever it is (REJECTED, FRESH, a failed fetch);
2 for a bad option, config or submission (without --trace: a URL ResolveUrl refuses); 1 when it
could not be resolved: no NATS, no fetcher answering a hop within scheduler.hop_timeout, a store
failing, the metadata-api unreachable, or --timeout past.
"""
from __future__ import annotations

import asyncio
import sys
import time
from typing import Callable

from spiderduck.bus import submissions
from spiderduck.cli.client import add_token_option, api_token, cmd_resolve_remote, json_line
from spiderduck.cli.trace_view import render
from spiderduck.cli.up_lock import running_up
from spiderduck.cli.up_nats import with_up_nats
from spiderduck.core.config import Settings
from spiderduck.core.errors import ConfigError, InvalidMessage, SpiderDuckError
from spiderduck.scheduler.stages.chain import stage_name
from spiderduck.scheduler.task import Outcome, Submission
from spiderduck.scheduler.trace import StageRun, traced
from spiderduck.scheduler.worker import scheduler_parts
from spiderduck.wire import record_proto
from spiderduck.core.frozen import evolve

USAGE_ERRORS = (ConfigError, InvalidMessage)     # exit 2; any other SpiderDuckError exits 1


def submission(url: str, now: float, refresh: bool = False) -> Submission:
    """The URL as a producer submits it (a protobuf UrlSubmission, as `spiderduck submit`)."""
    out = submissions.encode(url, source="cli", refresh=refresh)
    return Submission(out.data, out.headers, received_at=now)


async def resolve_here(settings: Settings, url: str,
                       sink: Callable[[StageRun], object] | None = None,
                       names: list[str] | None = None, refresh: bool = False) -> Outcome:
    """Run `url` through the service's pipeline in this process; `sink` gets each stage's run
    (scheduler.trace), `names` the pipeline's stage names, outer first."""
    static = running_up(settings.data_dir) is not None      # `up`: one fetcher, no leases
    async with scheduler_parts(settings, static_routing=static, workers=1,
                               name="spiderduck-resolve") as parts:
        pipeline = parts.pipeline if sink is None else traced(parts.pipeline, sink)
        if names is not None:
            names[:] = [stage_name(s) for s in parts.pipeline.stages]
        outcomes = await pipeline(submission(url, time.time(), refresh))
    if len(outcomes) != 1:
        raise SpiderDuckError(f"the pipeline gave {len(outcomes)} outcomes for one URL")
    return outcomes[0]


def cmd_resolve(settings: Settings, args) -> int:
    if not args.url.strip():
        raise SpiderDuckError("URL is empty")
    if args.timeout is not None and not args.timeout > 0:
        raise ConfigError(f"--timeout {args.timeout:g}: give a number of seconds above 0")
    if not args.trace:
        return cmd_resolve_remote(settings, args.url, refresh=args.refresh, timeout=args.timeout,
                                  token=api_token(args))
    try:
        settings = with_up_nats(settings, "scheduler")   # nats_url, else the `up` running here's, as its scheduler
    except ConfigError as exc:
        print(f"spiderduck resolve: {exc}", file=sys.stderr)
        return 1
    runs: list[StageRun] = []
    names: list[str] = []
    started = time.monotonic()

    async def bounded() -> Outcome:
        async with asyncio.timeout(args.timeout):
            return await resolve_here(settings, args.url, runs.append, names, args.refresh)
    try:
        outcome = asyncio.run(bounded())
    except USAGE_ERRORS:
        raise
    except TimeoutError:
        _print_trace(runs, names)
        print(f"spiderduck resolve: not resolved within --timeout {args.timeout:g}s", file=sys.stderr)
        return 1
    except (SpiderDuckError, OSError) as exc:
        _print_trace(runs, names)
        print(f"spiderduck resolve: not resolved: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        _print_trace(runs, names)          # where it was when interrupted
        raise
    _print_trace(runs, names)
    out = sys.stdout.buffer
    record = evolve(outcome.record, url=outcome.task.submitted)   # the URL asked for
    out.write((json_line(record_proto.to_dict(record)) + "\n").encode("utf-8", "replace"))
    out.flush()
    print(f"{outcome.resolution.name} {outcome.record.status.name} "
          f"in {time.monotonic() - started:.3f}s", file=sys.stderr)
    return 0


def _print_trace(runs: list[StageRun], names: list[str]) -> None:
    if runs:
        sys.stdout.buffer.write(render(runs, names).encode("utf-8", "replace"))
        sys.stdout.buffer.flush()


def add_commands(sub, common) -> None:
    p = sub.add_parser("resolve", parents=[common],
                       help="one URL's record, crawled first if it is not fresh (ResolveUrl on the "
                            "running service); --trace: here, with each stage's decision")
    p.add_argument("url", metavar="URL", help="the URL, as a producer would submit it")
    p.add_argument("--refresh", action="store_true",
                   help="re-fetch even a fresh record (at most once per min_refresh_interval)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="give up after S seconds (exit 1); the service's crawl goes on")
    p.add_argument("--trace", action="store_true",
                   help="run the service's pipeline in this process and print each stage's "
                        "decision (next or answer, changes, hops, time) before the record")
    add_token_option(p)
    p.set_defaults(run=cmd_resolve)
