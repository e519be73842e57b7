"""What each SpiderDuck role may do on NATS: the one definition behind `spiderduck up`'s users
and the nats-server authorization block the chart ships (helm/spiderduck/files/, written by
scripts/gen_nats_authorization.py; tests/bus/test_nats_permissions.py holds it up to date and
proves each permission against a real nats-server).

    ROLES                          -> the roles: client (programs beside the service: submit,
                                      watch, get), scheduler, fetcher, metadata-api (with the web UI)
    permissions(role)              -> {"publish": {"allow": [...]}, "subscribe": {"allow": [...]}}
    inbox_prefix(role)             -> the reply prefix its connection uses (nats-py inbox_prefix):
                                      its own, so no other role's user can read its replies
    authorization(passwords)       -> nats-server `authorization { users = [...] }` for user/password

An allow list denies everything else: no role may delete or purge a stream, only the metadata-api
may erase a message (of the events stream, for a forgotten URL) and write the denylist (the
scheduler watches it), and the client may write no key-value bucket and publish no event, dead
letter or reply. Writing a KV key is a
publish to $KV.<bucket>.<key>; reading one is a JetStream API request ($JS.API.DIRECT.GET or
$JS.API.STREAM.MSG.GET); watching a bucket (or reading a stream) is an ordered consumer
($JS.API.CONSUMER.CREATE, deliveries to an inbox, flow control on $JS.FC).
"""
from __future__ import annotations

import json

from spiderduck.bus.claims import CLAIM_BUCKET
from spiderduck.bus.denylist import BUCKET as DENYLIST_BUCKET
from spiderduck.bus.streams import (DEAD_STREAM, DEAD_SUBJECT, EVENTS_STREAM, EVENTS_SUBJECTS, LEASE_BUCKET,
                                    QUEUE_SUBJECT, REPLIES_PREFIX, URLS_STREAM)
from spiderduck.client.names import QUEUED_BUCKET, SUBMIT_SUBJECT

CONTROLS_BUCKET = "spiderduck_domain_controls"   # fetcher.domain_controls.BUCKET (a role: not imported here)
CLIENT = "client"
ROLES = (CLIENT, "scheduler", "fetcher", "metadata-api")
CLIENT_INBOX = "_INBOX"                          # nats-py's default: a program needs no option
ROLE_INBOX = "_INBOX_SPIDERDUCK"                 # the roles': <this>.<role>


def inbox_prefix(role: str) -> str:
    return CLIENT_INBOX if role == CLIENT else f"{ROLE_INBOX}.{role}"


def _stream_api(stream: str, *, create: bool = False, consume: bool = False) -> list[str]:
    """JetStream API subjects to use `stream`: its info and its messages by sequence or subject
    (a KV get), with `create` its creation and update, with `consume` consumers on it and their
    acks and flow control (a pull consumer, a KV watch, a stream read)."""
    out = [f"$JS.API.STREAM.INFO.{stream}", f"$JS.API.STREAM.MSG.GET.{stream}",
           f"$JS.API.DIRECT.GET.{stream}", f"$JS.API.DIRECT.GET.{stream}.>"]
    if create:
        out += [f"$JS.API.STREAM.CREATE.{stream}", f"$JS.API.STREAM.UPDATE.{stream}"]
    if consume:
        out += [f"$JS.API.CONSUMER.CREATE.{stream}", f"$JS.API.CONSUMER.CREATE.{stream}.>",
                f"$JS.API.CONSUMER.DURABLE.CREATE.{stream}.>", f"$JS.API.CONSUMER.INFO.{stream}.>",
                f"$JS.API.CONSUMER.MSG.NEXT.{stream}.>", f"$JS.ACK.{stream}.>", f"$JS.FC.{stream}.>"]
    return out


def _kv(bucket: str, *, write: bool = False, watch: bool = False) -> list[str]:
    """To open `bucket` (creating it as configured: every role but the client), read it, with
    `watch` watch it, with `write` put and delete its keys."""
    return _stream_api(f"KV_{bucket}", create=True, consume=watch) + ([f"$KV.{bucket}.>"] if write else [])


# Read-only: the account's JetStream limits, and which stream holds a subject (nats-py asks when
# subscribing to a subject without naming its stream).
_LOOKUPS = ["$JS.API.INFO", "$JS.API.STREAM.NAMES"]
_STREAMS = [api for stream in (URLS_STREAM, EVENTS_STREAM, DEAD_STREAM) for api in _stream_api(stream, create=True)]

_PUBLISH: dict[str, list[str]] = {
    # Submit URLs (straight to the stream, or through the metadata-api, which marks them queued),
    # read events and dead letters from their streams.
    CLIENT: [SUBMIT_SUBJECT, QUEUE_SUBJECT, *_LOOKUPS,
             *_stream_api(EVENTS_STREAM, consume=True), *_stream_api(DEAD_STREAM, consume=True)],
    "scheduler": [*_LOOKUPS, *_STREAMS, *_stream_api(URLS_STREAM, consume=True),
                  SUBMIT_SUBJECT, EVENTS_SUBJECTS, DEAD_SUBJECT, f"{REPLIES_PREFIX}.>",
                  *_kv(CLAIM_BUCKET, write=True, watch=True), *_kv(LEASE_BUCKET, watch=True),
                  *_kv(DENYLIST_BUCKET, watch=True)],
    "fetcher": [*_LOOKUPS, *_kv(LEASE_BUCKET, write=True, watch=True),
                *_kv(CONTROLS_BUCKET, write=True, watch=True)],
    "metadata-api": [*_LOOKUPS, *_STREAMS, *_stream_api(EVENTS_STREAM, consume=True), SUBMIT_SUBJECT,
                     *_kv(QUEUED_BUCKET, write=True), *_kv(CLAIM_BUCKET),
                     # Forget: the denylist kept, and a forgotten URL's events erased.
                     *_kv(DENYLIST_BUCKET, write=True, watch=True), f"$JS.API.STREAM.MSG.DELETE.{EVENTS_STREAM}"],
}

_SUBSCRIBE: dict[str, list[str]] = {
    CLIENT: [EVENTS_SUBJECTS, DEAD_SUBJECT],
    "scheduler": [],
    "fetcher": [],
    "metadata-api": [f"{REPLIES_PREFIX}.>", QUEUE_SUBJECT],
}


# Roles that answer requests (the metadata-api, on QUEUE_SUBJECT): each may publish one answer to
# the reply subject of a request it received (nats-server's allow_responses), and no other inbox.
_ANSWERS = {"metadata-api"}


def permissions(role: str) -> dict[str, object]:
    """nats-server permissions of `role`'s user: what it may publish, and subscribe to (its
    own inbox included), and whether it answers requests."""
    out: dict[str, object] = {"publish": {"allow": list(_PUBLISH[role])},
                              "subscribe": {"allow": [*_SUBSCRIBE[role], f"{inbox_prefix(role)}.>"]}}
    if role in _ANSWERS:
        out["allow_responses"] = True
    return out


def authorization(passwords: dict[str, str]) -> str:
    """nats-server's `authorization { users = [...] }` with one user per role of `passwords`
    (role -> password; the user is named as the role), each with its permissions. A password
    may be a nats-server variable reference ("$SCHEDULER_PASSWORD"), written bare."""
    users = []
    for role, password in passwords.items():
        secret = password if password.startswith("$") else json.dumps(password)
        allowed = json.dumps(permissions(role), indent=2).replace("\n", "\n    ")
        users.append(f"    {{user: {json.dumps(role)}, password: {secret},\n     permissions: {allowed}}}")
    return "authorization {\n  users = [\n" + ",\n".join(users) + "\n  ]\n}\n"
