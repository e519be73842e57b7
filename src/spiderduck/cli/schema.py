"""`spiderduck schema apply`: create or upgrade the metadata store's schema.

    spiderduck schema apply [--config F]

For Cassandra (`metadata_store: cassandra://h1,h2:9042/keyspace?replication=3&dc=dc1`) it
creates the keyspace and runs the migrations it lacks, then prints the version. SQLite needs
nothing: it creates its tables when the store opens.
"""
from __future__ import annotations

import argparse
import asyncio
from urllib.parse import urlsplit

from spiderduck.core.config import Settings
from spiderduck.core.errors import ConfigError
from spiderduck.core.secrets import redact_url


def cmd_apply(settings: Settings, args) -> int:
    url = settings.metadata_store_url
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        print(f"metadata_store {url}: nothing to apply (SQLite creates its schema when the "
              "store opens)")
        return 0
    if scheme != "cassandra":
        raise ConfigError(f"metadata_store: unsupported {redact_url(url)!r} "
                          "(use sqlite:///PATH or cassandra://h1,h2:9042/keyspace)")
    from spiderduck.stores.cassandra_cluster import CassandraOptions, apply_schema
    options = CassandraOptions.from_url(url)
    version, applied = asyncio.run(apply_schema(url))
    done = f"applied {', '.join(map(str, applied))}" if applied else "already up to date"
    print(f"cassandra keyspace {options.keyspace} on {','.join(options.hosts)}:{options.port}: "
          f"schema version {version} ({done})")
    return 0


def add_commands(sub, common) -> None:
    # The action's own --config/--set default to SUPPRESS, so that
    # `spiderduck schema --config F apply` keeps F (a sub-parser's defaults would replace it).
    leaf = argparse.ArgumentParser(add_help=False)
    leaf.add_argument("--config", metavar="F", default=argparse.SUPPRESS, help="YAML config file")
    leaf.add_argument("--set", metavar="KEY=VALUE", action="append", default=argparse.SUPPRESS,
                      help="override one config key")
    p = sub.add_parser("schema", parents=[common], help="create or upgrade the metadata schema")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    a = actions.add_parser("apply", parents=[leaf],
                           help="apply the metadata store's schema migrations (idempotent)")
    a.set_defaults(run=cmd_apply)
