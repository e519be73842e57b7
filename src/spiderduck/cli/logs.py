"""Logging: one format for every role; the effective config logged at start, its secrets
left out (the admin token, and a password or token in any URL: cassandra://USER:PASSWORD@...,
nats://TOKEN@...; secret files are named by path, never read); and a warning when what serves
callers listens beyond loopback with no token asked."""
from __future__ import annotations

import json
import logging
from typing import Any

from spiderduck.core.config import Settings, as_dict
from spiderduck.core.secrets import redact_url
from spiderduck.core.urls import is_loopback_host


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


def beyond_loopback(listen: str) -> bool:
    """A listen address ("host:port", "[v6]:port") other sockets than this host's may reach:
    any host but localhost and a loopback IP ("0.0.0.0", "", a name, a LAN address). "" (off)
    reaches nobody."""
    if not listen:
        return False
    return not is_loopback_host(listen.rpartition(":")[0].strip("[]"))


def warn_if_open(settings: Settings) -> None:
    """One WARNING when the web UI or the metadata API listens beyond loopback while
    metadata_api.tokens_file is unset: then anyone who reaches the port reads every URL and
    starts crawls."""
    if settings.metadata_api.tokens_file:
        return
    open_to = [f"{key} {listen}" for key, listen in (("metadata_api.listen", settings.metadata_api.listen),
                                                      ("web.listen", settings.web.listen))
               if beyond_loopback(listen)]
    if open_to:
        logging.getLogger("spiderduck").warning(
            "%s: beyond loopback with no metadata_api.tokens_file, so anyone who reaches %s reads "
            "every URL and starts crawls; set metadata_api.tokens_file, or listen on 127.0.0.1",
            " and ".join(open_to), "them" if len(open_to) > 1 else "it")
