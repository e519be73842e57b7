"""Logging: one format for every role; the effective config logged at start, its secrets
left out (the admin token, and a password or token in any URL: cassandra://USER:PASSWORD@...,
nats://TOKEN@...; secret files are named by path, never read)."""
from __future__ import annotations

import json
import logging
from typing import Any

from spiderduck.core.config import Settings, as_dict
from spiderduck.core.secrets import redact_url


def setup(level: str) -> None:
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("nats", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


SECRET_KEYS = {("web", "admin_token")}


def redacted(value: Any, path: tuple[str, ...] = ()) -> Any:
    """The settings' dict with each secret replaced by "<set>" (or left empty when unset)."""
    if isinstance(value, dict):
        return {k: redacted(v, path + (k,)) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v, path) for v in value]
    if path in SECRET_KEYS:
        return "<set>" if value else value
    if isinstance(value, str):
        return redact_url(value)
    return value


def log_settings(settings: Settings, role: str) -> None:
    logging.getLogger("spiderduck").info("%s starting with config %s", role,
                                         json.dumps(redacted(as_dict(settings)), sort_keys=True))
