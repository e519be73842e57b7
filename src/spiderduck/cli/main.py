"""`spiderduck`: the command line. Thin: it parses, loads settings, and calls the roles."""
from __future__ import annotations

import argparse
import sys

from spiderduck.core import config
from spiderduck.core.errors import SpiderDuckError


def _overrides(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SpiderDuckError(f"--set expects key.path=value, got {pair!r}")
        out[key.strip()] = value
    return out


# The module defining each command, in the order `--help` lists them. A command's module is the
# only one imported to run it: `spiderduck health`, a probe run every few seconds, does not pay
# for the pipeline's imports (0.2 s of CPU against 1.1 s).
MODULES = ("roles", "client", "fetch", "resolve", "explain", "domains", "forget", "offline", "schema",
           "health")
COMMANDS = {"up": "roles", "fetcher": "roles", "scheduler": "roles", "metadata-api": "roles",
            "submit": "client", "get": "client", "watch": "client", "fetch": "fetch",
            "resolve": "resolve", "explain": "explain", "domains": "domains", "extract": "offline", "schema": "schema",
            "forget": "forget", "health": "health"}


def _command_named(argv: list[str]) -> str | None:
    """The command `argv` names: its first word not an option (the options come after it)."""
    return next((word for word in argv if not word.startswith("-")), None)


def parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line; with `command` (a known one), only that command's module is loaded."""
    import importlib
    names = [COMMANDS[command]] if command in COMMANDS else list(MODULES)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="F", help="YAML config file")
    common.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                        help="override one config key, e.g. --set fetcher.default_rate=5")
    top = argparse.ArgumentParser(prog="spiderduck", description="Real-time URL resolution service.")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in names:
        importlib.import_module(f"spiderduck.cli.{name}").add_commands(sub, common)
    return top


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    args = parser(_command_named(words)).parse_args(words)
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
