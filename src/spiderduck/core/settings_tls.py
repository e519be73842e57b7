"""The `tls` section of the settings (src/spiderduck/core/settings.py re-exports it): TLS of every gRPC
server and client of the service."""
from __future__ import annotations

from dataclasses import dataclass

from spiderduck.core.errors import ConfigError
from spiderduck.core.settings_duration import Duration

CLIENT_AUTH = ("none", "require")      # tls.client_auth


@dataclass(frozen=True)
class TlsSettings:
    """TLS of every gRPC server and client of the service (src/spiderduck/rpc/tls.py). Off by default:
    `up` on loopback is plaintext. With `cert` set every gRPC server (metadata-api, fetcher and
    fetcher admin, scheduler health) serves TLS only; with `cert` or `ca` set every gRPC client
    (the scheduler's fetcher client, the web UI's admin client, the CLI) uses TLS and verifies
    the server against `ca`."""
    cert: str = ""                    # PEM certificate (chain) of this process, as server and as client
    key: str = ""                     # PEM private key of `cert` (unencrypted; keep it mode 0600)
    ca: str = ""                      # PEM bundle the peers' certificates must chain to (empty: a
                                      # client verifies servers against the system's CAs)
    client_auth: str = ""             # none | require; empty = require once cert is set: a client
                                      # without a certificate chaining to `ca` is refused in the handshake
    server_name: str = ""             # verify servers' certificates against this name instead of the
                                      # host dialed (a shared certificate naming the service, not pod IPs)
    crl: str = ""                     # PEM certificate revocation list(s), signed by a CA of `ca`: a client
                                      # certificate it lists is refused (UNAUTHENTICATED) by every gRPC
                                      # server. Read again when it changes, as cert, key and ca are.
                                      # Needs client_auth require
    reload_interval: Duration = 5.0   # seconds between looks at cert, key, ca and crl (and web.tls_cert,
                                      # web.tls_key) for a change: new connections get the new ones

    def __post_init__(self) -> None:
        if bool(self.cert) != bool(self.key):
            raise ConfigError("tls.cert and tls.key: set both or neither")
        if self.client_auth and self.client_auth not in CLIENT_AUTH:
            raise ConfigError(f"tls.client_auth: {self.client_auth!r} is not one of {', '.join(CLIENT_AUTH)}")
        if self.require_client_cert and not self.ca:
            raise ConfigError("tls.client_auth require needs tls.ca, the CA client certificates must chain to")
        if self.reload_interval <= 0:
            raise ConfigError(f"tls.reload_interval: {self.reload_interval:g}s must be positive")
        if self.crl and not self.require_client_cert:
            raise ConfigError("tls.crl needs tls.cert, tls.key and tls.ca with tls.client_auth require: "
                              "without client certificates there is nothing to revoke")

    @property
    def server_on(self) -> bool:
        """Whether this process's gRPC servers serve TLS (only)."""
        return bool(self.cert)

    @property
    def client_on(self) -> bool:
        """Whether this process's gRPC clients use TLS."""
        return bool(self.cert or self.ca)

    @property
    def require_client_cert(self) -> bool:
        return self.server_on and (self.client_auth or "require") == "require"
