"""TLS to the production stores: the client's SSLContext, built from a store URL's options.

Cassandra (`ssl=true&ca=&cert=&key=`), WebHDFS (`hdfs+https://...?ca=`) and memcached
(`memcacheds://...?ca=`) all verify the server the same way: its certificate must chain to
`ca` (a PEM bundle; without it, the system's trusted CAs) and, unless the store says
otherwise, name the host dialed. A bad or missing file is a ConfigError naming the setting, the
option and the path, never the file's contents (a key file is a secret).
"""
from __future__ import annotations

import ssl

from spiderduck.core.errors import ConfigError


def client_context(setting: str, *, ca: str = "", cert: str = "", key: str = "",
                   check_hostname: bool = True) -> ssl.SSLContext:
    """A client context: CERT_REQUIRED, TLS 1.2 or later, and the client certificate `cert`
    with its private key `key` when the server asks for one (both or neither)."""
    if bool(cert) != bool(key):
        raise ConfigError(f"{setting}: set both cert= and key= (the client certificate and its "
                          "private key), or neither")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)       # CERT_REQUIRED
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if ca:
        _load(setting, "ca", ca, context.load_verify_locations)   # ca alone, not the system's
    else:
        context.load_default_certs()
    context.check_hostname = check_hostname
    if cert:
        _readable(setting, "cert", cert)
        _readable(setting, "key", key)
        _load(setting, "cert and key", f"{cert}, {key}",
              lambda _: context.load_cert_chain(cert, key, password=_encrypted(setting, key)))
    return context


def _encrypted(setting: str, key: str):
    """load_cert_chain's password callback: an encrypted key is refused (OpenSSL would
    otherwise prompt for its passphrase on the terminal)."""
    def refuse():
        raise ConfigError(f"{setting}: key={key} is encrypted: give the unencrypted key "
                          "(readable by this process only)")
    return refuse


def _readable(setting: str, option: str, path: str) -> None:
    """ConfigError unless `path` is a file this process can read (so that an error names the
    cert or the key, where load_cert_chain's would name neither)."""
    _load(setting, option, path, lambda p: open(p, "rb").close())


def _load(setting: str, option: str, path: str, load) -> None:
    try:
        load(path)
    except FileNotFoundError:
        raise ConfigError(f"{setting}: {option}={path}: no such file") from None
    except PermissionError:
        raise ConfigError(f"{setting}: {option}={path}: not readable by this process") from None
    except IsADirectoryError:
        raise ConfigError(f"{setting}: {option}={path}: is a folder, not a PEM file") from None
    except (ssl.SSLError, ValueError) as exc:
        # The library's reason (e.g. "[X509: NO_CERTIFICATE_OR_CRL_FOUND]"), never the bytes.
        reason = getattr(exc, "reason", None) or type(exc).__name__
        raise ConfigError(f"{setting}: {option}={path}: not usable PEM ({reason})") from None
    except OSError as exc:
        raise ConfigError(f"{setting}: {option}={path}: {exc.strerror or exc}") from None
