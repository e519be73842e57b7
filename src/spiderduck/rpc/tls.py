"""TLS for the service's gRPC servers and clients, from config `tls` (spiderduck.core.config.TlsSettings).

    server_credentials(tls)   None (plaintext) or the credentials a server binds with: its
                              certificate, and with client_auth require, the CA a client's
                              certificate must chain to (else the handshake fails)
    server_files(tls)         the same, read again when tls.cert, tls.key or tls.ca change
                              (spiderduck.rpc.reloading; spiderduck.rpc.server serves them anew)
    client_files(tls)         a client's credentials, read again when the files change
    open_channel(address, tls)  a grpc.aio channel: TLS verifying the server against tls.ca
                              (its certificate as the client's) when tls.cert or tls.ca is set
    caller(context)           who is calling: the client certificate's first DNS
                              subjectAltName, else its CN; None without one (or naming nobody)
    peer_certificate(context) the verified client certificate (PEM bytes), or None

A channel reads the files once, when it is made: a long-lived channel keeps presenting the
certificate it was opened with. The scheduler's channels to fetchers are opened again once the
files change (spiderduck.scheduler.fetcher_client); other clients open a channel per use. The PEM files are
read and checked when a server or channel is made, so a wrong path, a key
that is not a key or one that does not match its certificate fails at start with one line
naming the setting and the path; never a file's contents.
"""
from __future__ import annotations

from typing import Any, Sequence

import grpc
import grpc.aio
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from spiderduck.core.config import TlsSettings
from spiderduck.core.errors import ConfigError
from spiderduck.rpc.reloading import Reloading


def read_file(setting: str, path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise ConfigError(f"{setting}: cannot read {path}: {exc.strerror}") from None


def _certificates(setting: str, path: str) -> tuple[bytes, list[x509.Certificate]]:
    data = read_file(setting, path)
    try:
        certs = x509.load_pem_x509_certificates(data)
    except ValueError:
        certs = []
    if not certs:
        raise ConfigError(f"{setting}: {path} holds no PEM certificate")
    return data, certs


def _private_key(setting: str, path: str):
    data = read_file(setting, path)
    try:
        return data, serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        # Neither the error's text nor the data: a key file is a secret.
        raise ConfigError(f"{setting}: {path} is not an unencrypted PEM private key") from None


def _identity_pair(tls: TlsSettings) -> tuple[bytes, bytes]:
    """(key PEM, certificate chain PEM), checked to belong together."""
    chain, certs = _certificates("tls.cert", tls.cert)
    key_pem, key = _private_key("tls.key", tls.key)
    public = key.public_key().public_bytes(serialization.Encoding.DER,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    if certs[0].public_key().public_bytes(serialization.Encoding.DER,
                                          serialization.PublicFormat.SubjectPublicKeyInfo) != public:
        raise ConfigError(f"tls.key: {tls.key} is not the key of the certificate in {tls.cert}")
    return key_pem, chain


def _ca(tls: TlsSettings) -> bytes | None:
    return _certificates("tls.ca", tls.ca)[0] if tls.ca else None


def ca_certificates(tls: TlsSettings) -> list[x509.Certificate]:
    """The certificates of tls.ca (none when unset)."""
    return _certificates("tls.ca", tls.ca)[1] if tls.ca else []


def server_credentials(tls: TlsSettings) -> grpc.ServerCredentials | None:
    if not tls.server_on:
        return None
    return grpc.ssl_server_credentials([_identity_pair(tls)], root_certificates=_ca(tls),
                                       require_client_auth=tls.require_client_cert)


def server_files(tls: TlsSettings) -> Reloading[grpc.ServerCredentials] | None:
    """The server's credentials, made again when tls.cert, tls.key or tls.ca change (None:
    plaintext). Read now, so a bad file fails the start."""
    if not tls.server_on:
        return None
    return Reloading("tls.cert, tls.key and tls.ca", (tls.cert, tls.key, tls.ca), lambda: server_credentials(tls))


def channel_credentials(tls: TlsSettings) -> grpc.ChannelCredentials | None:
    if not tls.client_on:
        return None
    key, chain = _identity_pair(tls) if tls.cert else (None, None)
    return grpc.ssl_channel_credentials(root_certificates=_ca(tls), private_key=key,
                                        certificate_chain=chain)


def client_files(tls: TlsSettings) -> Reloading[grpc.ChannelCredentials | None]:
    """A client's credentials, made again when tls.cert, tls.key or tls.ca change: for a holder
    of long-lived channels, whose new channels should present the new ones. Read now."""
    return Reloading("tls.cert, tls.key and tls.ca", (tls.cert, tls.key, tls.ca), lambda: channel_credentials(tls))


def open_channel(address: str, tls: TlsSettings | None, options: Sequence[tuple[str, Any]] = (),
                 credentials: grpc.ChannelCredentials | None = None) -> grpc.aio.Channel:
    """A channel to `address`, over TLS when `tls` turns clients' TLS on (with `credentials`
    when given, else tls's files read now)."""
    if credentials is None and tls is not None:
        credentials = channel_credentials(tls)
    if credentials is None:
        return grpc.aio.insecure_channel(address, options=list(options))
    options = list(options)
    if tls.server_name:
        options.append(("grpc.ssl_target_name_override", tls.server_name))
    return grpc.aio.secure_channel(address, credentials, options=options)


def peer_certificate(context: grpc.aio.ServicerContext) -> bytes | None:
    """The PEM of the client certificate the handshake verified; None without one."""
    for value in (context.auth_context() or {}).get("x509_pem_cert") or ():
        if value:
            return value
    return None


def caller(context: grpc.aio.ServicerContext) -> str | None:
    """The verified client certificate's identity: its first DNS subjectAltName, else its
    common name. None on a plaintext connection, without a client certificate, or with one
    naming nobody (gRPC gives such a certificate the common name "", which is no identity)."""
    auth = context.auth_context() or {}
    for key in ("peer_dns", "x509_common_name"):
        for value in auth.get(key) or ():
            if value:
                return value.decode("utf-8", "replace")
    return None
