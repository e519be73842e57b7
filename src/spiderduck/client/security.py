"""How the client proves who it is and checks whom it talks to: gRPC TLS and bearer token,
NATS credentials and TLS. Files are read when a connection is made, and a file that cannot be
read is a NotConfigured naming the setting and the path, never its contents."""
from __future__ import annotations

import re
import ssl
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio

from nats.aio.client import Client as NATS

from spiderduck.client.errors import NotConfigured


def read_file(setting: str, path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise NotConfigured(f"{setting}: cannot read {path}: {exc.strerror}") from None


def read_secret(setting: str, path: str) -> str:
    """A secret kept in a file: its first line, without the line's end."""
    text = read_file(setting, path).decode("utf-8", "replace")
    secret = text.splitlines()[0].strip() if text.strip() else ""
    if not secret:
        raise NotConfigured(f"{setting}: {path} is empty")
    return secret


@dataclass(frozen=True)
class GrpcOptions:
    """The metadata-api's channel: TLS when `ca` or `cert` is set, and the bearer token."""
    token: str | None = field(default=None, repr=False)
    ca: str | None = None
    cert: str | None = None
    key: str | None = None
    server_name: str | None = None

    def __post_init__(self) -> None:
        if bool(self.cert) != bool(self.key):
            raise ValueError("tls_cert and tls_key: give both or neither")

    @property
    def tls(self) -> bool:
        return bool(self.ca or self.cert)

    def channel(self, address: str, options: list[tuple[str, Any]] | None = None) -> grpc.aio.Channel:
        options = list(options or ())
        if not self.tls:
            return grpc.aio.insecure_channel(address, options=options)
        if self.server_name:
            options.append(("grpc.ssl_target_name_override", self.server_name))
        credentials = grpc.ssl_channel_credentials(
            root_certificates=read_file("tls_ca", self.ca) if self.ca else None,
            private_key=read_file("tls_key", self.key) if self.key else None,
            certificate_chain=read_file("tls_cert", self.cert) if self.cert else None)
        return grpc.aio.secure_channel(address, credentials, options=options)

    @property
    def call_metadata(self) -> tuple[tuple[str, str], ...] | None:
        """The metadata every call carries: the bearer token, if any."""
        return (("authorization", f"Bearer {self.token}"),) if self.token else None


@dataclass(frozen=True)
class NatsOptions:
    """nats-py's connect() arguments for the service's NATS credentials and TLS (the same
    settings as the service's nats_* keys)."""
    creds: str | None = None
    nkey_seed: str | None = None
    user: str | None = None
    password_file: str | None = None
    token_file: str | None = None
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None

    def __post_init__(self) -> None:
        ways = [name for name, value in (("nats_creds", self.creds), ("nats_nkey_seed", self.nkey_seed),
                                         ("nats_user", self.user), ("nats_token_file", self.token_file))
                if value]
        if len(ways) > 1:
            raise ValueError(f"NATS credentials: give one of {', '.join(ways)}, not several")
        if bool(self.user) != bool(self.password_file):
            raise ValueError("nats_user and nats_password_file: give both or neither")
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ValueError("nats_tls_cert and nats_tls_key: give both or neither")

    @property
    def credentials(self) -> str:
        """Which credentials these are, for a message (never the secret)."""
        given = [said for said, value in (
            (f"the nats_creds of {self.creds}", self.creds), (f"the nkey seed of {self.nkey_seed}", self.nkey_seed),
            (f"nats_user {self.user}", self.user), (f"the token of {self.token_file}", self.token_file),
            (f"the client certificate {self.tls_cert}", self.tls_cert)) if value]
        return " with ".join(given) or ("no credentials (nats_creds, nats_nkey_seed, nats_user, "
                                        "nats_token_file) and no client certificate (nats_tls_cert)")

    def refused(self, url: str, why: str) -> str:
        """The one line saying the NATS at `url` refused these credentials, and why."""
        who = self.credentials
        if who.startswith("no credentials") and "@" in url:
            who = "the credentials in nats_url"
        return f"NATS at {shown_url(url)} refused {who}: {why}"

    def connect_kwargs(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.creds:
            read_file("nats_creds", self.creds)            # a clear error if it cannot be read
            out["user_credentials"] = self.creds
        if self.nkey_seed:
            read_file("nats_nkey_seed", self.nkey_seed)
            out["nkeys_seed"] = self.nkey_seed
        if self.user and self.password_file:
            out["user"] = self.user
            out["password"] = read_secret("nats_password_file", self.password_file)
        if self.token_file:
            out["token"] = read_secret("nats_token_file", self.token_file)
        if self.tls_ca or self.tls_cert:
            out["tls"] = self.ssl_context()
        return out

    @property
    def tls(self) -> bool:
        return bool(self.tls_ca or self.tls_cert)

    def new_client(self) -> Any:
        """A nats-py client for these options. With TLS configured it refuses a server that
        does not offer TLS before sending anything (nats-py itself upgrades only when the
        server asks, so an impostor or a misconfigured server would get the credentials in
        plaintext)."""
        return _TlsOnlyNATS() if self.tls else NATS()

    def ssl_context(self) -> ssl.SSLContext:
        try:
            context = ssl.create_default_context(cafile=self.tls_ca)
            if self.tls_cert and self.tls_key:
                context.load_cert_chain(self.tls_cert, self.tls_key)
        except (OSError, ssl.SSLError) as exc:
            raise NotConfigured(f"nats_tls_ca/nats_tls_cert/nats_tls_key: cannot load: {exc}") from None
        return context


class PlaintextServer(Exception):
    """A NATS server that does not offer TLS, met with TLS configured: nothing was sent to it."""


class _TlsOnlyNATS(NATS):
    async def _process_info(self, info: dict[str, Any], initial_connection: bool = False) -> None:
        # Called with the server's first INFO, before CONNECT (and the credentials) is written.
        if initial_connection and not info.get("tls_required"):
            raise PlaintextServer("TLS: the server does not offer TLS (nats_tls_ca is set), so "
                                  "nothing was sent to it")
        await super()._process_info(info, initial_connection)


def nats_refusal(exc: BaseException) -> str | None:
    """Why a NATS server refused this client, when `exc` says it did: it refused the
    credentials (Authorization Violation, an expired or revoked user), the TLS handshake
    failed (a certificate it or we do not trust), or it offers no TLS while we require it.
    Retrying would not help; None otherwise."""
    if isinstance(exc, PlaintextServer):
        return str(exc)
    if isinstance(exc, ssl.SSLError):
        return "TLS: " + re.sub(r"\s*\(_ssl\.c:\d+\)$", "", str(exc))
    text = str(exc).removeprefix("nats: ").strip("'")
    return text if any(said in text for said in _REFUSALS) else None


def abandon(nc: Any) -> None:
    """Drop the socket of a NATS connection whose first connect() was given up on a refusal,
    without waiting: nats-py's close() can wait for ever on a failed TLS handshake."""
    transport = getattr(nc, "_transport", None)
    if transport is not None:
        transport.close()


# What the server (or nats-py) says when it refuses the credentials; not "Authentication
# Timeout", which a slow start may meet.
_REFUSALS = ("Authorization Violation", "Authentication Expired", "Authentication Revoked",
             "authorization failed")


_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^\s/?#]*)@")


def shown_url(text: str) -> str:
    """`text` with the password or token of every URL's userinfo as <set> (as the service's
    spiderduck.core.secrets.redact_url, which this package may not import): nats://alice:<set>@h,
    nats://<set>@h."""
    def hide(m: re.Match[str]) -> str:
        user, colon, password = m["userinfo"].partition(":")
        return f"{m['scheme']}{user}:{password and '<set>'}@" if colon else f"{m['scheme']}{user and '<set>'}@"
    return _USERINFO.sub(hide, text)
