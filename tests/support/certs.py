"""Certificates made in the test: a private CA and leaf certificates signed by it (PEM files).

`ca = TestCA(tmp_path / "pki")`; `ca.issue("fetcher", dns=["localhost"], ips=["127.0.0.1"])`
writes fetcher.crt and fetcher.key and returns their paths; `ca.revoke([issued], path)` writes
a CRL signed by this CA listing those certificates. A second TestCA is "another CA",
whose certificates the first one's peers refuse. ECDSA P-256 keys: quick to make.
"""
from __future__ import annotations

import datetime
import ipaddress
import pathlib
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Issued:
    cert: str       # path of the PEM certificate
    key: str        # path of the PEM private key (unencrypted)


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _write_key(key, path: pathlib.Path) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)


class TestCA:
    __test__ = False     # not a pytest class

    def __init__(self, folder, name: str = "SpiderDuck test CA"):
        self.folder = pathlib.Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        self._cert = (x509.CertificateBuilder().subject_name(_name(name)).issuer_name(_name(name))
                      .public_key(self._key.public_key()).serial_number(x509.random_serial_number())
                      .not_valid_before(now - datetime.timedelta(minutes=5))
                      .not_valid_after(now + datetime.timedelta(days=2))
                      .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                      .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                                   content_commitment=False, key_encipherment=False,
                                                   data_encipherment=False, key_agreement=False,
                                                   encipher_only=False, decipher_only=False), critical=True)
                      .sign(self._key, hashes.SHA256()))
        slug = "".join(c if c.isalnum() else "-" for c in name.lower())
        self.ca = str(self.folder / f"{slug}.crt")
        pathlib.Path(self.ca).write_bytes(self._cert.public_bytes(serialization.Encoding.PEM))

    def issue(self, cn: str, *, dns: list[str] | None = None, ips: list[str] | None = None,
              days: float = 1, not_before_days: float = 0) -> Issued:
        """A leaf certificate for `cn` with these subjectAltNames (none given: localhost and
        127.0.0.1), usable as both a server's and a client's."""
        if dns is None and ips is None:
            dns, ips = ["localhost"], ["127.0.0.1"]
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=not_before_days)
        sans = [x509.DNSName(d) for d in dns or ()] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips or ()]
        builder = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(self._cert.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=days))
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                         ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False))
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        slug = "".join(c if c.isalnum() else "-" for c in cn.lower())
        cert_path, key_path = self.folder / f"{slug}.crt", self.folder / f"{slug}.key"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key, key_path)
        return Issued(cert=str(cert_path), key=str(key_path))

    def revoke(self, issued: list[Issued], path) -> str:
        """Write at `path` a PEM CRL, signed by this CA, listing the certificates of `issued`."""
        now = datetime.datetime.now(datetime.timezone.utc)
        builder = (x509.CertificateRevocationListBuilder().issuer_name(self._cert.subject)
                   .last_update(now - datetime.timedelta(minutes=5)).next_update(now + datetime.timedelta(days=1)))
        for item in issued:
            serial = x509.load_pem_x509_certificate(pathlib.Path(item.cert).read_bytes()).serial_number
            builder = builder.add_revoked_certificate(
                x509.RevokedCertificateBuilder().serial_number(serial).revocation_date(now).build())
        crl = builder.sign(self._key, hashes.SHA256())
        pathlib.Path(path).write_bytes(crl.public_bytes(serialization.Encoding.PEM))
        return str(path)
