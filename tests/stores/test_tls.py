"""The stores' TLS client context: what it verifies, and bad files told by option and path."""
from __future__ import annotations

import ssl

import pytest
from cryptography.hazmat.primitives import serialization

from spiderduck.core.errors import ConfigError
from spiderduck.stores.tls import client_context
from support.certs import TestCA


@pytest.fixture
def pki(tmp_path):
    ca = TestCA(tmp_path / "pki")
    return ca, ca.issue("client")


def test_the_server_must_chain_to_ca_and_name_the_host(pki):
    ca, _ = pki
    context = client_context("x", ca=ca.ca)
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    assert context.minimum_version >= ssl.TLSVersion.TLSv1_2
    assert len(context.get_ca_certs()) == 1              # ca alone, not the system's CAs too
    assert not client_context("x", ca=ca.ca, check_hostname=False).check_hostname


def test_a_client_certificate_is_loaded(pki):
    ca, client = pki
    client_context("x", ca=ca.ca, cert=client.cert, key=client.key)
    with pytest.raises(ConfigError, match="set both cert= and key="):
        client_context("x", ca=ca.ca, cert=client.cert)


@pytest.mark.parametrize("content, reason", [
    (None, "no such file"),
    ("folder", "is a folder"),
    (b"-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n",
     "not usable PEM"),
])
def test_a_bad_ca_is_named_by_option_and_path_never_by_contents(tmp_path, content, reason):
    path = tmp_path / "ca.pem"
    if content == "folder":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(ConfigError, match=f"content_store: ca={path}: {reason}") as raised:
        client_context("content_store", ca=str(path))
    assert "base64" not in str(raised.value)


def test_a_bad_key_is_refused_without_showing_it(tmp_path, pki):
    ca, client = pki
    other = TestCA(tmp_path / "other").issue("other")
    with pytest.raises(ConfigError, match="cert and key") as raised:     # key of another cert
        client_context("robots_cache", ca=ca.ca, cert=client.cert, key=other.key)
    key_text = open(other.key).read()
    assert key_text.splitlines()[1] not in str(raised.value)
    with pytest.raises(ConfigError, match=f"key={tmp_path / 'none.key'}: no such file"):
        client_context("robots_cache", ca=ca.ca, cert=client.cert, key=str(tmp_path / "none.key"))


def test_an_encrypted_key_is_refused_not_prompted_for(tmp_path, pki):
    ca, client = pki
    key = serialization.load_pem_private_key(open(client.key, "rb").read(), None)
    locked = tmp_path / "locked.key"
    locked.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                         serialization.PrivateFormat.PKCS8,
                                         serialization.BestAvailableEncryption(b"pw")))
    with pytest.raises(ConfigError, match=f"key={locked} is encrypted"):
        client_context("metadata_store", ca=ca.ca, cert=client.cert, key=str(locked))
