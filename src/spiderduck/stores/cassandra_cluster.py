"""Connecting to Cassandra: the store URL's options, the driver's cluster, the schema command.

`cassandra://[user:password@]h1,h2[:9042]/keyspace[?options]`, as `metadata_store` takes it.

Options (query parameters of the store URL):

    consistency         LOCAL_QUORUM   reads and writes (any cassandra ConsistencyLevel name)
    serial_consistency  LOCAL_SERIAL   the lightweight transactions of `schema apply` (the
                                       store's reads and writes use none)
    dc                  ""             local datacenter for DC-aware routing; for `schema apply`
                                       it also selects NetworkTopologyStrategy {dc: replication}
    replication         1              copies per datacenter (`schema apply` only)
    connect_timeout     10             seconds
    request_timeout     10             seconds per request, retries included
    retries             2              retries of an idempotent request (see IdempotentRetryPolicy)
    concurrency         128            requests in flight per call (get_many of 300 URLs)
    batch               32             keys a request at most, of the reads and share counts
                                       the store coalesces across callers (one turn of the
                                       event loop: spiderduck.stores.cassandra_batches); 1: a
                                       request per key
    batch_flying        2              of each kind of those, requests in flight past which new
                                       keys wait for one to end and go with it (0: never wait)
    reconnect_max       10             seconds, at most, between tries to reach a node that went
                                       away (from 0.5 s, doubling); the driver's own default is
                                       600, which leaves a restarted node unused for minutes
    ssl                 false          TLS to every node (client_encryption_options on the nodes)
    ca                  (system CAs)   PEM bundle the nodes' certificates must chain to
    check_hostname      true           each node's certificate must name the address it is
                                       dialed on (see below); false: the chain to `ca` only
    cert, key           ""             PEM client certificate and its unencrypted key, for nodes
                                       with require_client_auth (both or neither)
    password_file       ""             a file holding the password (one line), instead of the
                                       URL's `user:password@`; read at open, never logged

TLS (`ssl=true`): a node whose certificate does not chain to `ca` is refused in the handshake,
and so, with `check_hostname` (the default), is one whose certificate does not name the address
the driver dialed. The driver dials every node by IP address, never by name: the contact points
as their names resolve when the store opens, the other nodes at the IP they gossip
(`rpc_address`). So each node's certificate needs its IP address in subjectAltName. Clusters
whose certificates do not name their nodes' addresses (one certificate for the whole cluster)
set `check_hostname=false`: then any certificate from `ca` is accepted for any node, so `ca`
must be a CA that issues to that cluster's nodes only. `ca`, `cert` and `key` need `ssl=true`.

Secrets: the password (from the URL or password_file) is kept out of every repr, error message
and log line; a URL quoted in an error shows it as `<set>` (spiderduck.core.secrets.redact_url).

Routing is token-aware over DC-aware round robin, so each single-partition request goes to a
replica of its key in the local datacenter.

Errors: cassandra-driver's exceptions become `StoreError` here (`translate`: retryable, except
invalid requests), so callers never see the driver's own types.
"""
from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from spiderduck.core.errors import ConfigError, SpiderDuckError, StoreError
from spiderduck.core.secrets import read_secret_file, redact_url
from spiderduck.stores import cassandra_schema, tls

DEFAULT_PORT = 9042
MOST_BATCH = 1024           # keys in one IN: past it a coordinator holds too much of one request
RECONNECT_BASE = 0.5            # seconds before the first try to reach a node that went away


@dataclass(frozen=True)
class CassandraOptions:
    """Where the store lives and how to talk to it: parsed from the store URL."""
    hosts: tuple[str, ...]
    keyspace: str
    port: int = DEFAULT_PORT
    username: str = ""
    password: str = field(default="", repr=False)
    consistency: str = "LOCAL_QUORUM"
    serial_consistency: str = "LOCAL_SERIAL"
    dc: str = ""
    replication: int = 1
    connect_timeout: float = 10.0
    request_timeout: float = 10.0
    retries: int = 2
    concurrency: int = 128
    batch: int = 32
    batch_flying: int = 2
    reconnect_max: float = 10.0
    ssl: bool = False
    ca: str = ""
    check_hostname: bool = True
    cert: str = ""
    key: str = ""
    password_file: str = ""

    @classmethod
    def from_url(cls, url: str) -> "CassandraOptions":
        shown = redact_url(url)                     # what an error may quote
        parts = urlsplit(url)
        if parts.scheme != "cassandra":
            raise ConfigError(f"not a cassandra URL: {shown!r}")
        userinfo, _, hostlist = parts.netloc.rpartition("@")
        username, _, password = userinfo.partition(":")
        hosts, port = _parse_hosts(hostlist, shown)
        keyspace = parts.path.strip("/")
        if not keyspace:
            raise ConfigError(f"metadata_store {shown!r}: name a keyspace, "
                              "e.g. cassandra://h1,h2:9042/spiderduck")
        cassandra_schema.check_keyspace(keyspace)
        values: dict[str, Any] = {}
        for name, value in parse_qsl(parts.query, keep_blank_values=True):
            if name not in _OPTION_TYPES:
                raise ConfigError(f"metadata_store: unknown cassandra option {name!r} "
                                  f"(known: {', '.join(sorted(_OPTION_TYPES))})")
            values[name] = _convert(name, value)
        password = unquote(password)
        if values.get("password_file"):
            if password:
                raise ConfigError(f"metadata_store {shown!r}: give the password in the URL or "
                                  "in password_file, not both")
            if not username:
                raise ConfigError(f"metadata_store {shown!r}: password_file needs a user name "
                                  "(cassandra://USER@h1,h2/keyspace?password_file=PATH)")
            password = read_secret_file("metadata_store", "password_file", values["password_file"])
        if not values.get("ssl") and {"ca", "cert", "key"} & values.keys():
            raise ConfigError(f"metadata_store {shown!r}: ca, cert and key need ssl=true")
        return cls(hosts=hosts, keyspace=keyspace, port=port, username=unquote(username),
                   password=password, **values)

    def ssl_context(self):
        """The SSLContext for the driver (None without ssl=true); ConfigError for a bad file."""
        if not self.ssl:
            return None
        return tls.client_context("metadata_store", ca=self.ca, cert=self.cert, key=self.key,
                                  check_hostname=self.check_hostname)


def _parse_hosts(hostlist: str, shown: str) -> tuple[tuple[str, ...], int]:
    """`h1,h2:9042` or `h1:9042,h2:9042`: one port for all (the driver takes one)."""
    hosts, ports = [], set()
    for item in hostlist.split(","):
        item = item.strip()
        host, port = item, None
        if item.startswith("["):                      # [IPv6]:port
            host, _, rest = item[1:].partition("]")
            port = rest[1:] if rest.startswith(":") else None
        elif item.count(":") == 1:
            host, port = item.split(":")
        if not host:
            raise ConfigError(f"metadata_store {shown!r}: empty host")
        if port is not None:
            if not port.isdigit() or not 0 < int(port) < 65536:
                raise ConfigError(f"metadata_store {shown!r}: bad port {port!r}")
            ports.add(int(port))
        hosts.append(host)
    if len(ports) > 1:
        raise ConfigError(f"metadata_store {shown!r}: all hosts must use one port")
    return tuple(hosts), ports.pop() if ports else DEFAULT_PORT


def _consistency_name(value: str) -> str:
    from cassandra import ConsistencyLevel
    name = value.strip().upper()
    if name not in ConsistencyLevel.name_to_value:
        raise ConfigError(f"cassandra consistency {value!r}: use one of "
                          f"{', '.join(ConsistencyLevel.name_to_value)}")
    return name


def _flag(value: str) -> bool:
    if value.strip().lower() not in _FLAGS:
        raise ValueError(value)
    return _FLAGS[value.strip().lower()]


_FLAGS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
_OPTION_TYPES = {"consistency": _consistency_name, "serial_consistency": _consistency_name,
                 "dc": str, "replication": int, "connect_timeout": float,
                 "request_timeout": float, "retries": int, "concurrency": int,
                 "batch": int, "batch_flying": int,
                 "reconnect_max": float, "ssl": _flag, "ca": str, "check_hostname": _flag,
                 "cert": str, "key": str, "password_file": str}


def _convert(name: str, value: str) -> Any:
    try:
        converted = _OPTION_TYPES[name](value)
    except ValueError:
        raise ConfigError(f"cassandra option {name}={value!r} is not a valid value") from None
    if name in ("replication", "concurrency") and converted < 1 or (
            name == "batch" and not 1 <= converted <= MOST_BATCH) or (
            name == "batch_flying" and converted < 0) or (
            name in ("retries", "connect_timeout", "request_timeout") and converted < 0) or (
            name == "reconnect_max" and converted < RECONNECT_BASE):
        raise ConfigError(f"cassandra option {name}={value!r} is out of range")
    return converted


def translate(exc: BaseException, what: str) -> SpiderDuckError:
    """cassandra-driver's exceptions as StoreError: the one place they are mapped."""
    from cassandra import RequestValidationException
    if isinstance(exc, SpiderDuckError):
        return exc
    retryable = not isinstance(exc, RequestValidationException)   # syntax, invalid, unauthorized
    return StoreError(f"cassandra {what}: {type(exc).__name__}: {exc}", retryable=retryable)


def _retry_policy(max_retries: int):
    from cassandra.policies import RetryPolicy, WriteType

    class IdempotentRetryPolicy(RetryPolicy):
        """Retry what is safe to repeat, a bounded number of times.

        Reads (always idempotent): a read timeout or request error retries on the next
        replica. Writes: only statements marked idempotent are retried (our plain INSERT and
        UPDATE, and unlogged batches of them); counter increments and lightweight transactions
        are not (the outcome of a timed-out one is unknown), so they surface as StoreError. Unavailable: one try on
        another coordinator.
        """
        def on_read_timeout(self, query, consistency, required_responses,
                            received_responses, data_retrieved, retry_num):
            if retry_num >= max_retries:
                return self.RETHROW, None
            if received_responses >= required_responses and not data_retrieved:
                return self.RETRY, consistency
            return self.RETRY_NEXT_HOST, None

        def on_write_timeout(self, query, consistency, write_type,
                             required_responses, received_responses, retry_num):
            safe = getattr(query, "is_idempotent", False) and write_type in (
                WriteType.SIMPLE, WriteType.BATCH, WriteType.UNLOGGED_BATCH, WriteType.BATCH_LOG)
            if safe and retry_num < max_retries:
                return self.RETRY, consistency
            return self.RETHROW, None

        def on_unavailable(self, query, consistency, required_replicas, alive_replicas,
                           retry_num):
            return (self.RETRY_NEXT_HOST, None) if retry_num == 0 else (self.RETHROW, None)

        def on_request_error(self, query, consistency, error, retry_num):
            if getattr(query, "is_idempotent", False) and retry_num < max_retries:
                return self.RETRY_NEXT_HOST, None
            return self.RETHROW, None

    return IdempotentRetryPolicy()


class _Negotiation(logging.Filter):
    """Drops the driver's WARNING for each protocol version a node declines while the driver
    negotiates down to the one it speaks (four lines at every connect to a Cassandra 5 node:
    the driver's newest versions are betas). Negotiating is what it should do; the protocol in
    use is logged at DEBUG by the driver itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno == logging.WARNING
                    and str(record.msg).startswith("Downgrading core protocol version"))


_NEGOTIATION = _Negotiation()


def build_cluster(options: CassandraOptions):
    """A `cassandra.cluster.Cluster` for the options (not yet connected)."""
    logging.getLogger("cassandra.cluster").addFilter(_NEGOTIATION)     # once: filters are a set
    from cassandra import ConsistencyLevel
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import (DCAwareRoundRobinPolicy, ExponentialReconnectionPolicy,
                                    TokenAwarePolicy)
    from cassandra.query import dict_factory
    profile = ExecutionProfile(
        load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc=options.dc or None)),
        retry_policy=_retry_policy(options.retries),
        consistency_level=ConsistencyLevel.name_to_value[options.consistency],
        serial_consistency_level=ConsistencyLevel.name_to_value[options.serial_consistency],
        request_timeout=options.request_timeout,
        row_factory=dict_factory)
    auth = (PlainTextAuthProvider(username=options.username, password=options.password)
            if options.username else None)
    return Cluster(contact_points=list(options.hosts), port=options.port,
                   execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                   auth_provider=auth, connect_timeout=options.connect_timeout,
                   ssl_context=options.ssl_context(),
                   # max_attempts=None: never give up (the driver's default stops after 64
                   # tries, ~10 minutes at 10 s, and the node is never used again).
                   reconnection_policy=ExponentialReconnectionPolicy(
                       RECONNECT_BASE, options.reconnect_max, max_attempts=None))


async def connect(options: CassandraOptions):
    """(cluster, session), connected in a worker thread (Cluster.connect blocks)."""
    where = f"connect to {','.join(options.hosts)}:{options.port}"
    try:
        cluster = build_cluster(options)          # resolves the contact points
    except Exception as exc:
        raise translate(exc, where) from exc
    try:
        session = await asyncio.to_thread(cluster.connect)
    except Exception as exc:
        await asyncio.to_thread(cluster.shutdown)
        raise translate(exc, where) from exc
    return cluster, session


async def apply_schema(url: str) -> tuple[int, list[int]]:
    """`spiderduck schema apply`: create or upgrade the keyspace the URL names."""
    options = CassandraOptions.from_url(url)
    cluster, session = await connect(options)
    try:
        return await asyncio.to_thread(cassandra_schema.apply, session, options.keyspace,
                                       replication=options.replication, dc=options.dc)
    except Exception as exc:
        raise translate(exc, f"schema apply to keyspace {options.keyspace}") from exc
    finally:
        await asyncio.to_thread(cluster.shutdown)
