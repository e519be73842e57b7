"""`spiderduck`: the command line. Thin: it parses, loads settings, and calls the roles."""
from __future__ import annotations

import argparse
import sys

from common import config
from common.errors import SpiderDuckError


def _overrides(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SpiderDuckError(f"--set expects key.path=value, got {pair!r}")
        out[key.strip()] = value
    return out


def parser() -> argparse.ArgumentParser:
    from cli import client, domains, fetch, health, offline, resolve, roles, schema
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="F", help="YAML config file")
    common.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                        help="override one config key, e.g. --set fetcher.default_rate=5")
    top = argparse.ArgumentParser(prog="spiderduck", description="Real-time URL resolution service.")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (roles, client, fetch, resolve, domains, offline, schema, health):
        module.add_commands(sub, common)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        settings = config.load(args.config, overrides=_overrides(args.set))
        return args.run(settings, args) or 0
    except SpiderDuckError as exc:
        print(f"spiderduck {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
