"""The service's NATS credentials and TLS, from its nats_* settings: one NatsOptions (the
client's, spiderduck.client.security) for every role, the CLI and `up`.

At most one of nats_creds, nats_nkey_seed, nats_user (with nats_password_file) and
nats_token_file; nats_tls_ca (with nats_tls_cert and nats_tls_key for a server that verifies
clients) for a NATS served over TLS. Secrets are read from files when a connection is made.

Only what the settings say is used: where the command finds the NATS of a running `up`, it
puts that server's URL and token file into the settings first (src/spiderduck/cli/up_nats.py).
"""
from __future__ import annotations

from spiderduck.bus import streams as bus
from spiderduck.bus.permissions import inbox_prefix
from spiderduck.client.security import NatsOptions
from spiderduck.core.config import Settings
from spiderduck.core.errors import ConfigError

CREDENTIAL_KEYS = ("nats_creds", "nats_nkey_seed", "nats_user", "nats_token_file")


def configured_credentials(settings: Settings) -> list[str]:
    """The credential keys set in `settings`."""
    return [key for key in CREDENTIAL_KEYS if getattr(settings, key)]


def nats_options(settings: Settings) -> NatsOptions:
    """NatsOptions from the nats_* settings (bus.connect's `auth`). A contradiction (two kinds
    of credentials, a user without a password file, a TLS certificate without its key) is a
    ConfigError naming the keys."""
    s = settings
    try:
        return NatsOptions(creds=s.nats_creds or None, nkey_seed=s.nats_nkey_seed or None,
                           user=s.nats_user or None, password_file=s.nats_password_file or None,
                           token_file=s.nats_token_file or None, tls_ca=s.nats_tls_ca or None,
                           tls_cert=s.nats_tls_cert or None, tls_key=s.nats_tls_key or None)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


async def connect_role(settings: Settings, role: str, name: str):
    """The NATS connection of `role` (spiderduck.bus.permissions.ROLES), named `name`: the
    configured NATS and credentials, replies to the role's own inbox prefix (which its user
    alone may read)."""
    return await bus.connect(bus.nats_url(settings), name=name, timeout=settings.nats_connect_timeout,
                             auth=nats_options(settings), inbox_prefix=inbox_prefix(role))
