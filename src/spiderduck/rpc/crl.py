"""tls.crl: client certificates refused before they expire (issue 38).

gRPC's Python API has no CRL option, so the list is enforced after the handshake, before any
method runs: spiderduck.rpc.server puts `revocation_list(tls).guard` in front of every service of a
server (health checking and reflection too). A call whose verified client certificate is listed
(its serial, in a list whose issuer is the certificate's issuer) is UNAUTHENTICATED.

The file holds one or more PEM "X509 CRL" blocks, each signed by a CA of tls.ca (checked with
that CA's key). At start a file that cannot be read, holds no list, or holds one no CA of tls.ca
signed is a ConfigError naming tls.crl and its path. tls.crl and tls.ca are read again when they
change (spiderduck.rpc.reloading, looked at every few seconds by the server): a list that does
not load then keeps the previous one, logged at ERROR.
"""
from __future__ import annotations

import functools
import re

import grpc
import grpc.aio
from cryptography import x509

from spiderduck.core.config import TlsSettings
from spiderduck.core.errors import ConfigError
from spiderduck.rpc.reloading import Reloading
from spiderduck.rpc.tls import ca_certificates, peer_certificate, read_file

_BLOCK = re.compile(rb"-----BEGIN X509 CRL-----.+?-----END X509 CRL-----", re.S)

Revoked = dict[x509.Name, frozenset[int]]     # issuer -> serial numbers it revoked


def _signed_by(crl: x509.CertificateRevocationList, cas: list[x509.Certificate]) -> bool:
    for ca in cas:
        if ca.subject != crl.issuer:
            continue
        try:
            if crl.is_signature_valid(ca.public_key()):
                return True
        except (TypeError, ValueError):      # a key type that cannot sign a CRL
            continue
    return False


def load_revoked(tls: TlsSettings) -> Revoked:
    """The serials each issuer's list in tls.crl revokes, every list checked against tls.ca."""
    blocks = _BLOCK.findall(read_file("tls.crl", tls.crl))
    if not blocks:
        raise ConfigError(f"tls.crl: {tls.crl} holds no PEM certificate revocation list")
    cas = ca_certificates(tls)
    revoked: dict[x509.Name, set[int]] = {}
    for block in blocks:
        try:
            crl = x509.load_pem_x509_crl(block)
        except ValueError:
            raise ConfigError(f"tls.crl: {tls.crl} holds a revocation list that does not parse") from None
        if not _signed_by(crl, cas):
            raise ConfigError(f"tls.crl: {tls.crl} holds a list not signed by a CA of tls.ca ({tls.ca})")
        revoked.setdefault(crl.issuer, set()).update(entry.serial_number for entry in crl)
    return {issuer: frozenset(serials) for issuer, serials in revoked.items()}


@functools.lru_cache(maxsize=1024)
def _issuer_and_serial(pem: bytes) -> tuple[x509.Name, int] | None:
    """A client certificate's issuer and serial, parsed once per certificate seen."""
    try:
        cert = x509.load_pem_x509_certificate(pem)
    except ValueError:
        return None
    return cert.issuer, cert.serial_number


def is_revoked(revoked: Revoked, pem: bytes | None) -> bool:
    """Whether the certificate `pem` is listed; a missing or unparsable one counts as listed."""
    found = _issuer_and_serial(pem) if pem else None
    if found is None:
        return True
    issuer, serial = found
    return serial in revoked.get(issuer, ())


class RevocationList:
    """tls.crl in force: `guard` refuses a listed client certificate; `files` is read again when
    tls.crl or tls.ca change (the server owning it watches them, spiderduck.rpc.server)."""

    def __init__(self, tls: TlsSettings):
        self.files = Reloading("tls.crl and tls.ca", (tls.crl, tls.ca), lambda: load_revoked(tls))

    async def guard(self, method: str, context: grpc.aio.ServicerContext) -> None:
        if is_revoked(self.files.current, peer_certificate(context)):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the client certificate is revoked (tls.crl)")


def revocation_list(tls: TlsSettings | None) -> RevocationList | None:
    """tls.crl's list, or None without one. Read now, so a bad list fails the start."""
    if tls is None or not tls.crl:
        return None
    return RevocationList(tls)
