"""The Cassandra metadata schema as versioned CQL migrations (`spiderduck schema apply`).

    keyspace      created first; replication from the store URL: SimpleStrategy with
                  `replication` copies (default 1, for development), or
                  NetworkTopologyStrategy {dc: replication} when `dc` is given
    MIGRATIONS    [(version, [CQL statement, ...]), ...], ascending; `{keyspace}` in a
                  statement is replaced by the (validated) keyspace name

Tables (version 4):

    records        key text PK -> record_pb (protobuf bytes, v2), record (protobuf JSON, v1),
                                  first_seen (v1, v2), earliest and shares_seen (v3), fetched_at
    resolutions    url text PK -> key            any URL of a chain -> the final record's key
    crawl_status   key text PK -> status, fetched_at               written by versions 1-2, read by
                                                                   nothing; no longer written
    shares         key text PK -> "count" counter                  sightings per record
    aliases        (key, url) PK                 the URLs a put pointed at a record: what a forget
                                                 of the record reads (cassandra_forget)
    schema_version id int PK (always 1) -> version, applied_at

Versions:

    1   the tables above, each record as the JSON text of its UrlMetadata in `record`
    2   `records.record_pb blob`: the store writes the record's UrlMetadata bytes there (first_seen
        and share_count left out: they have columns of their own) and no longer writes `record`;
        rows written at version 1 keep their JSON and read as before (cassandra_metadata)
    3   `records.earliest timestamp` and `records.shares_seen bigint`: first_seen and the share
        count as plain writes whose write timestamps make the earliest first_seen and the largest
        count win (no lightweight transaction, no read before a write; cassandra_metadata).
        `first_seen` (set by version 2's lightweight transactions) and the `shares` counter
        are still read, for rows from before and processes still at version 2
    4   `aliases`: each put also writes (key, url) for every URL it points at the key, in the
        record's partition of the same mutation, so a forget finds the resolution rows pointing at
        a record without scanning `resolutions`; puts from before version 4 left none there
        (cassandra_forget says what a forget finds of those)

No version rewrites records: those kept with `modified_time` as field 36 (before issue 31 gave
that number to `fetch_mode`) are rewritten as they are read (cassandra_metadata says why).

`apply` is idempotent: every statement says IF NOT EXISTS (CREATE TABLE, ALTER TABLE ... ADD),
the version reached is recorded in `schema_version` after all of its statements ran, and
migrations at or below it are skipped. Two concurrent applies are safe: each statement is
idempotent, and the recorded version only goes up (a lightweight transaction,
`IF version < N`), so the slower apply cannot write an older version over a newer one; each
version is reported as applied by the one call whose transaction recorded it.
Statements are blocking driver calls: run `apply` in a worker thread from async code.
"""
from __future__ import annotations

import re

from spiderduck.core.errors import ConfigError

KEYSPACE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,47}$")   # CQL's unquoted identifier, 48 max

MIGRATIONS: list[tuple[int, list[str]]] = [
    (1, [
        "CREATE TABLE IF NOT EXISTS {keyspace}.schema_version ("
        " id int PRIMARY KEY, version int, applied_at timestamp)",
        "CREATE TABLE IF NOT EXISTS {keyspace}.records ("
        " key text PRIMARY KEY, record text, first_seen timestamp, fetched_at timestamp)",
        "CREATE TABLE IF NOT EXISTS {keyspace}.resolutions ("
        " url text PRIMARY KEY, key text)",
        "CREATE TABLE IF NOT EXISTS {keyspace}.crawl_status ("
        " key text PRIMARY KEY, status text, fetched_at timestamp)",
        'CREATE TABLE IF NOT EXISTS {keyspace}.shares ('
        ' key text PRIMARY KEY, "count" counter)',
    ]),
    (2, [
        # No IF EXISTS on the table: were `records` missing, the migration should fail, not
        # record version 2 without the column.
        "ALTER TABLE {keyspace}.records ADD IF NOT EXISTS record_pb blob",
    ]),
    (3, [
        "ALTER TABLE {keyspace}.records ADD IF NOT EXISTS earliest timestamp",
        "ALTER TABLE {keyspace}.records ADD IF NOT EXISTS shares_seen bigint",
    ]),
    (4, [
        "CREATE TABLE IF NOT EXISTS {keyspace}.aliases ("
        " key text, url text, PRIMARY KEY (key, url))",
    ]),
]

LATEST = MIGRATIONS[-1][0]

_VERSION_TABLE = MIGRATIONS[0][1][0]     # created before reading the version
_READ_VERSION = "SELECT version FROM {keyspace}.schema_version WHERE id = 1"
_START_VERSION = ("INSERT INTO {keyspace}.schema_version (id, version) VALUES (1, 0) "
                  "IF NOT EXISTS")
_RAISE_VERSION = ("UPDATE {keyspace}.schema_version SET version = %s, "
                  "applied_at = toTimestamp(now()) WHERE id = 1 IF version < %s")


def check_keyspace(name: str) -> str:
    if not KEYSPACE_NAME.match(name or ""):
        raise ConfigError(f"cassandra keyspace {name!r}: use letters, digits and _ "
                          "(starting with a letter, at most 48)")
    return name


def keyspace_statement(keyspace: str, *, replication: int = 1, dc: str = "") -> str:
    """CREATE KEYSPACE IF NOT EXISTS with SimpleStrategy, or NetworkTopologyStrategy for `dc`."""
    check_keyspace(keyspace)
    if replication < 1:
        raise ConfigError(f"cassandra replication must be at least 1, got {replication}")
    if dc:
        if "'" in dc:
            raise ConfigError(f"cassandra dc {dc!r}: quotes are not allowed")
        strategy = f"{{'class': 'NetworkTopologyStrategy', '{dc}': {replication}}}"
    else:
        strategy = f"{{'class': 'SimpleStrategy', 'replication_factor': {replication}}}"
    return f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = {strategy}"


def statements(version: int, keyspace: str) -> list[str]:
    check_keyspace(keyspace)
    for number, stmts in MIGRATIONS:
        if number == version:
            return [s.format(keyspace=keyspace) for s in stmts]
    raise KeyError(version)


def current_version(session, keyspace: str) -> int:
    """The version recorded in the keyspace (0: none yet). The table must exist."""
    rows = list(session.execute(_READ_VERSION.format(keyspace=check_keyspace(keyspace))))
    if not rows:
        return 0
    row = rows[0]
    value = row["version"] if isinstance(row, dict) else row[0]
    return int(value or 0)


def apply(session, keyspace: str, *, replication: int = 1, dc: str = "",
          upto: int = LATEST) -> tuple[int, list[int]]:
    """Create the keyspace and run the migrations it lacks, in order, up to version `upto`.

    Returns (version now, versions this call recorded). Blocking (cassandra-driver's
    synchronous `Session.execute`, which also waits for schema agreement after each DDL).
    """
    session.execute(keyspace_statement(keyspace, replication=replication, dc=dc))
    session.execute(_VERSION_TABLE.format(keyspace=keyspace))
    session.execute(_START_VERSION.format(keyspace=keyspace))
    version = current_version(session, keyspace)
    applied = []
    for number, _ in MIGRATIONS:
        if number <= version or number > upto:
            continue
        for statement in statements(number, keyspace):
            session.execute(statement)
        if session.execute(_RAISE_VERSION.format(keyspace=keyspace), (number, number)).was_applied:
            applied.append(number)
        version = number
    return max(version, current_version(session, keyspace)), applied
