"""The NATS of the `spiderduck up` running on a data_dir, as the command finds it.

`up` starts an embedded nats-server, writes its URL to data_dir/nats.url, and holds data_dir's
lock (cli.up_lock) while it runs. That server admits one user per role of
spiderduck.bus.permissions, each with only its role's permissions and a password `up` makes at
each start: the user `client` (what programs beside `up` use: submit URLs, read events and dead
letters, receive their own replies) with its password in data_dir/nats.password, and each role's
in data_dir/nats-users/<role> (all 0600). A command run beside it with no nats_url set uses that
server: submit, watch and get as `client`; resolve --trace as the scheduler, a role started on its
own as that role. `with_up_nats` puts the URL, user and password file into the settings before
they reach the client or the role, so the shared code (spiderduck.bus.streams,
spiderduck.bus.credentials) only ever uses what the settings say. The files are trusted only while an
`up` holds the lock: ones left by a `kill -9` never point a command at a dead (or someone
else's) server, nor give it a stale password.
"""
from __future__ import annotations

import os

from spiderduck.bus import credentials as nats_auth
from spiderduck.bus.permissions import CLIENT
from spiderduck.cli.up_lock import running_up
from spiderduck.core.config import Settings
from spiderduck.core.errors import ConfigError
from spiderduck.core.frozen import evolve

EMBEDDED_URL_FILE = "nats.url"   # under data_dir: where `up` writes its embedded server's URL
CLIENT_PASSWORD_FILE = "nats.password"   # under data_dir: the password of the user `client`
ROLE_PASSWORDS_DIR = "nats-users"         # under data_dir: the password of each role's user


def url_path(data_dir: str) -> str:
    return os.path.join(data_dir, EMBEDDED_URL_FILE)


def password_path(data_dir: str, user: str = CLIENT) -> str:
    """Where `up` keeps the password of `user` (a role of spiderduck.bus.permissions)."""
    if user == CLIENT:
        return os.path.join(data_dir, CLIENT_PASSWORD_FILE)
    return os.path.join(data_dir, ROLE_PASSWORDS_DIR, user)


def up_credentials(data_dir: str) -> dict[str, str]:
    """nats-py's connect() arguments for the `client` user of the `up` running on data_dir (for
    tools that connect to it with nats-py themselves, as the benchmarks do)."""
    with open(password_path(data_dir), encoding="utf-8") as fh:
        return {"user": CLIENT, "password": fh.readline().strip()}


def as_user(settings: Settings, user: str) -> Settings:
    """`settings` connecting to `up`'s NATS as `user`, with the password `up` wrote for it."""
    return evolve(settings, nats_user=user, nats_token_file="",
                               nats_password_file=password_path(settings.data_dir, user))


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


def with_up_nats(settings: Settings, user: str = CLIENT) -> Settings:
    """`settings` if nats_url is set; else the same settings naming the NATS of the `up`
    running on data_dir (up_nats_url, or its ConfigError) and, unless credentials of their own
    are configured, `user` of that `up` (`client` for a program beside it; a role started on
    its own is that role)."""
    if settings.nats_url:
        return settings
    settings = evolve(settings, nats_url=up_nats_url(settings.data_dir))
    return settings if nats_auth.configured_credentials(settings) else as_user(settings, user)
