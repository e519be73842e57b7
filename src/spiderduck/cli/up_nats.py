"""The NATS of the `spiderduck up` running on a data_dir, as the command finds it.

`up` starts an embedded nats-server, writes its URL to data_dir/nats.url and the token that
server requires to data_dir/nats.token (0600), and holds data_dir's lock (cli.up_lock) while
it runs. A command run beside it with no nats_url set (submit, watch, get, resolve --trace, a
role started on its own) uses that server and its token: `with_up_nats` puts them into the
settings before they reach the client or the role, so the shared code (spiderduck.bus.streams,
spiderduck.bus.credentials) only ever uses what the settings say. The files are trusted only while an
`up` holds the lock: ones left by a `kill -9` never point a command at a dead (or someone
else's) server, nor give it a stale token.
"""
from __future__ import annotations

import dataclasses
import os

from spiderduck.bus import credentials as nats_auth
from spiderduck.cli.up_lock import running_up
from spiderduck.core.config import Settings
from spiderduck.core.errors import ConfigError

EMBEDDED_URL_FILE = "nats.url"   # under data_dir: where `up` writes its embedded server's URL
UP_TOKEN_FILE = "nats.token"     # under data_dir: the token `up`'s embedded nats-server requires


def url_path(data_dir: str) -> str:
    return os.path.join(data_dir, EMBEDDED_URL_FILE)


def up_token_path(data_dir: str) -> str:
    return os.path.join(data_dir, UP_TOKEN_FILE)


def up_token(data_dir: str) -> str:
    """The token of the NATS of the `up` running on data_dir (for tools that connect to it
    with nats-py themselves, as the benchmarks do)."""
    with open(up_token_path(data_dir), encoding="utf-8") as fh:
        return fh.readline().strip()


def up_nats_url(data_dir: str) -> str:
    """The URL of the embedded NATS of the `up` running on data_dir; a ConfigError saying how
    to start one or point at a NATS when none runs there.

    Never a default address: a NATS this service was not pointed at (another team's, on the
    usual port) must not get SpiderDuck's streams."""
    pid = running_up(data_dir)
    if pid is not None:
        try:
            with open(url_path(data_dir), encoding="utf-8") as fh:
                url = fh.read().strip()
        except OSError:
            url = ""
        if url:
            return url
        raise ConfigError(f"`spiderduck up` (pid {pid}) on {data_dir} has not started its "
                          "NATS yet; try again in a moment")
    raise ConfigError(f"no NATS to use: nats_url is not set and no `spiderduck up` runs on "
                      f"{data_dir}; start one (spiderduck up) or set nats_url "
                      "(--set nats_url=nats://host:4222 or SPIDERDUCK_NATS_URL)")


def with_up_nats(settings: Settings) -> Settings:
    """`settings` if nats_url is set; else the same settings naming the NATS of the `up`
    running on data_dir (up_nats_url, or its ConfigError) and, unless credentials of their own
    are configured, the token file of that `up`."""
    if settings.nats_url:
        return settings
    url = up_nats_url(settings.data_dir)
    changes: dict[str, str] = {"nats_url": url}
    if not nats_auth.configured_credentials(settings):
        changes["nats_token_file"] = up_token_path(settings.data_dir)
    return dataclasses.replace(settings, **changes)
