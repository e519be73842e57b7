"""The NATS names a producer and a subscriber must agree on, and the key rule of queued markers
and claims, are defined once, in the client (spiderduck.client.names, spiderduck.client.keys):
the bus imports them, and no other module of src/spiderduck spells them out."""
from __future__ import annotations

import ast

from spiderduck.bus import claims, pending, streams
from spiderduck.client import keys, names
from conftest import ROOT

SRC = ROOT / "src" / "spiderduck"
SHARED = {"SUBMIT_SUBJECT": "spiderduck.urls.submit", "PROCESSED_SUBJECT": "spiderduck.events.processed",
          "PROTOBUF_CONTENT_TYPE": "application/x-protobuf", "QUEUED_BUCKET": "spiderduck_url_queued"}


def spelled_in(value: str, sources: dict[str, str]) -> set[str]:
    """The modules whose code holds the string literal `value` itself (a docstring or message
    that only mentions it is a longer string, not counted)."""
    return {path for path, source in sources.items()
            if any(isinstance(node, ast.Constant) and node.value == value for node in ast.walk(ast.parse(source)))}


def _sources() -> dict[str, str]:
    return {path.relative_to(ROOT).as_posix(): path.read_text("utf-8") for path in SRC.rglob("*.py")}


def test_the_bus_uses_the_clients_objects():
    assert SHARED == {name: getattr(names, name) for name in SHARED}
    assert streams.SUBMIT_SUBJECT is names.SUBMIT_SUBJECT
    assert streams.PROCESSED_SUBJECT is names.PROCESSED_SUBJECT
    assert streams.PROTOBUF_CONTENT_TYPE is names.PROTOBUF_CONTENT_TYPE
    assert pending.QUEUED_BUCKET is names.QUEUED_BUCKET
    assert claims.claim_key is keys.claim_key
    assert pending.key_for is keys.key_for


def test_each_shared_name_is_spelled_in_the_clients_names_only():
    sources = _sources()
    spelled = {value: spelled_in(value, sources) for value in SHARED.values()}
    assert spelled == {value: {"src/spiderduck/client/names.py"} for value in SHARED.values()}


def test_a_copy_of_a_name_is_found():
    """The check above sees a constant copied back into the bus, and not a mention of it."""
    sources = {"src/spiderduck/client/names.py": 'SUBMIT_SUBJECT = "spiderduck.urls.submit"\n',
               "src/spiderduck/bus/streams.py": '"""Subjects: spiderduck.urls.submit."""\n'
                                                'SUBMIT_SUBJECT = "spiderduck.urls.submit"\n',
               "src/spiderduck/bus/pending.py": '"""Submitted to spiderduck.urls.submit."""\n'
                                                'log(f"cannot publish to {SUBMIT_SUBJECT}")\n'}
    assert spelled_in("spiderduck.urls.submit", sources) == {"src/spiderduck/client/names.py",
                                                             "src/spiderduck/bus/streams.py"}


def test_the_service_keys_a_url_by_the_clients_rule():
    url, canonical = " HTTPS://EXAMPLE.com/a#top", "https://example.com/a"
    assert pending.url_key(url) == keys.key_for(url, canonical) == keys.claim_key(canonical)
    assert pending.url_key(" not a url ") == keys.key_for(" not a url ", None) == keys.claim_key("not a url")
