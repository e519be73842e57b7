"""Logging: one format for every role; the effective config logged at start."""
from __future__ import annotations

import json
import logging

from common.config import Settings, as_dict


def setup(level: str) -> None:
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("nats", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def log_settings(settings: Settings, role: str) -> None:
    logging.getLogger("spiderduck").info("%s starting with config %s", role,
                                         json.dumps(as_dict(settings), sort_keys=True))
