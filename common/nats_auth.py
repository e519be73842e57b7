"""The service's NATS credentials and TLS, from its nats_* settings: one NatsOptions (the
client's, spiderduck.client.security) for every role, the CLI and `up`.

At most one of nats_creds, nats_nkey_seed, nats_user (with nats_password_file) and
nats_token_file; nats_tls_ca (with nats_tls_cert and nats_tls_key for a server that verifies
clients) for a NATS served over TLS. Secrets are read from files when a connection is made.

`up`'s embedded nats-server takes only the token `up` writes to data_dir/nats.token (0600).
Where bus.nats_url finds that server (no nats_url, and an `up` holds data_dir's lock), its
token is used, unless credentials are configured: a file left by an `up` that is gone is
never read.
"""
from __future__ import annotations

import os

from common.config import Settings
from common.errors import ConfigError
from common.up_lock import running_up
from spiderduck.client.security import NatsOptions

UP_TOKEN_FILE = "nats.token"    # under data_dir: the token `up`'s embedded nats-server requires
CREDENTIAL_KEYS = ("nats_creds", "nats_nkey_seed", "nats_user", "nats_token_file")


def up_token_path(data_dir: str) -> str:
    return os.path.join(data_dir, UP_TOKEN_FILE)


def up_token(data_dir: str) -> str:
    """The token of the NATS of the `up` running on data_dir (for tools that connect to it
    with nats-py themselves, as the benchmarks do)."""
    with open(up_token_path(data_dir), encoding="utf-8") as fh:
        return fh.readline().strip()


def configured_credentials(settings: Settings) -> list[str]:
    """The credential keys set in `settings`."""
    return [key for key in CREDENTIAL_KEYS if getattr(settings, key)]


def nats_options(settings: Settings) -> NatsOptions:
    """NatsOptions from the nats_* settings (bus.connect's `auth`). A contradiction (two kinds
    of credentials, a user without a password file, a TLS certificate without its key) is a
    ConfigError naming the keys."""
    s = settings
    token_file = s.nats_token_file
    if not s.nats_url and not configured_credentials(s) and running_up(s.data_dir) is not None:
        token_file = up_token_path(s.data_dir)
    try:
        return NatsOptions(creds=s.nats_creds or None, nkey_seed=s.nats_nkey_seed or None,
                           user=s.nats_user or None, password_file=s.nats_password_file or None,
                           token_file=token_file or None, tls_ca=s.nats_tls_ca or None,
                           tls_cert=s.nats_tls_cert or None, tls_key=s.nats_tls_key or None)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
