"""Secrets kept out of what we print: the credentials of a URL, in any text.

Store and bus URLs may carry a secret in their userinfo: `cassandra://user:password@h1/ks`,
`nats://token@host:4222`. Error messages and log lines quote such URLs so an operator can see
which setting is wrong; `redact_url` keeps everything of them but the secret:

    cassandra://user:password@h1/ks   ->  cassandra://user:<set>@h1/ks
    nats://s3cr3t@host:4222           ->  nats://<set>@host:4222
    nats://user:@host, http://h/p     ->  unchanged (no secret in them)

The userinfo runs to the *last* `@` before the host's end (`/`, `?`, `#` or a blank), as
urllib's own split reads it, so a password with an unescaped `@` in it is hidden whole.

`read_secret_file` reads a password kept in a file of its own (a mounted Kubernetes secret)
rather than in the URL, so that neither the config file nor the environment holds it.
"""
from __future__ import annotations

import re

from spiderduck.core.errors import ConfigError

REDACTED = "<set>"

_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^\s/?#]*)@")


def _hide(match: re.Match) -> str:
    user, colon, password = match["userinfo"].partition(":")
    if colon:                                  # user:password -- the user name stays
        secret = password and REDACTED
        return f"{match['scheme']}{user}:{secret}@"
    return f"{match['scheme']}{user and REDACTED}@"    # a token alone: all of it is secret


def redact_url(text: str) -> str:
    """`text` with the password (or token) of every `scheme://userinfo@` in it as `<set>`."""
    return _USERINFO.sub(_hide, text) if "@" in text else text


def read_secret_file(setting: str, option: str, path: str) -> str:
    """The secret in the file at `path`: its text without the line end that ends it. A missing,
    unreadable or empty file is a ConfigError naming `setting`, `option` and the path (never
    the contents)."""
    try:
        with open(path, encoding="utf-8") as file:
            secret = file.read().rstrip("\r\n")
    except FileNotFoundError:
        raise ConfigError(f"{setting}: {option}={path}: no such file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{setting}: {option}={path}: not UTF-8 text") from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(f"{setting}: {option}={path}: cannot be read ({reason})") from None
    if not secret:
        raise ConfigError(f"{setting}: {option}={path}: the file is empty")
    return secret
