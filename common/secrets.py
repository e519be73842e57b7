"""Secrets kept out of what we print: the credentials of a URL, in any text.

Store and bus URLs may carry a secret in their userinfo: `cassandra://user:password@h1/ks`,
`nats://token@host:4222`. Error messages and log lines quote such URLs so an operator can see
which setting is wrong; `redact_url` keeps everything of them but the secret:

    cassandra://user:password@h1/ks   ->  cassandra://user:<set>@h1/ks
    nats://s3cr3t@host:4222           ->  nats://<set>@host:4222
    nats://user:@host, http://h/p     ->  unchanged (no secret in them)

The userinfo runs to the *last* `@` before the host's end (`/`, `?`, `#` or a blank), as
urllib's own split reads it, so a password with an unescaped `@` in it is hidden whole.
"""
from __future__ import annotations

import re

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
