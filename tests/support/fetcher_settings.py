"""FetcherSettings for a fetcher on the tests' local web: every *.test host on 127.0.0.1 (allowed
past the guard) and a rate that keeps politeness out of the way; `overrides` are config keys."""
from __future__ import annotations

from spiderduck.core import config


def local_settings(**overrides):
    values = {"fetcher.allowed_networks": ["127.0.0.0/8"],
              "fetcher.dns_overrides": {"*.test": "127.0.0.1"}, "fetcher.default_rate": 100.0}
    values.update(overrides)
    return config.load(env={}, overrides=values).fetcher
