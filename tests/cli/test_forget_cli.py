"""`spiderduck forget` (issue 39) before it asks anything: a wrong command exits 2 with one line
and asks nobody, and what it prints of an answer is one line a person reads (or JSON), with a
crawled page's control characters escaped."""
from __future__ import annotations

import json

from google.protobuf.timestamp_pb2 import Timestamp

from spiderduck.cli.forget import Removed, entries_table, entry_json, removed_line
from spiderduck.cli.nats_server import free_port
from spiderduck.v1 import metadata_pb2
from support.cli import run_cli

NOBODY = ("--set", f"metadata_api.listen=127.0.0.1:{free_port()}")   # nothing listens there


async def test_a_forget_without_a_reason_is_refused_before_any_call():
    for reason in ((), ("--reason", "  ")):
        code, out, err = await run_cli("forget", "http://a.test/", *reason, *NOBODY)
        assert (code, out) == (2, "")
        assert "needs --reason" in err and "UNAVAILABLE" not in err and len(err.strip().splitlines()) == 1


async def test_wrong_commands_exit_2_with_one_line():
    for args, words in ((("--reason", "r"), "nothing to forget"),
                        (("--list", "http://a.test/"), "--list takes no URL"),
                        (("--undo", "http://a.test/", "--reason", "r"), "--undo takes no --reason"),
                        (("--undo",), "nothing to forget")):
        code, out, err = await run_cli("forget", *args, *NOBODY)
        assert (code, out) == (2, ""), args
        assert words in err and len(err.strip().splitlines()) == 1, err


async def test_a_service_that_does_not_answer_exits_1_saying_it_can_be_run_again():
    code, out, err = await run_cli("forget", "http://a.test/", "--reason", "ticket 7", *NOBODY)
    assert (code, out) == (1, "")
    assert "UNAVAILABLE" in err and "run the same command again" in err
    assert len(err.strip().splitlines()) == 1


def test_the_removed_line_says_what_went_and_how_to_undo():
    removed = Removed(records=3, content_records=1, events=0)
    assert removed_line(["http://a.test/x"], "", removed) == (
        "forgot http://a.test/x: removed 3 records, 1 content-log record, 0 events; "
        "on the denylist until `spiderduck forget --undo`")
    assert removed_line(["http://a.test/", "http://b.test/"], "c.test", removed).startswith(
        "forgot 2 URLs and domain c.test: removed")
    assert removed_line([], "c.test", removed).startswith("forgot domain c.test: removed")


def test_the_denylist_table_and_json_escape_what_a_person_typed():
    at = Timestamp(seconds=1_795_000_000)
    entries = [metadata_pb2.ForgottenEntry(url="http://a.test/\x1b[2J", reason="GDPR 1", by="ops",
                                           forgotten_at=at),
               metadata_pb2.ForgottenEntry(domain="c.test", reason="DMCA\x9b", by="admin")]
    table = entries_table(entries)
    assert "\x1b" not in table and "\x9b" not in table and "\\x1b[2J" in table
    head, first, second = table.splitlines()
    assert head.split() == ["FORGOTTEN", "REASON", "BY", "WHEN"]
    assert first.split() == ["http://a.test/\\x1b[2J", "GDPR", "1", "ops", "2026-11-18T11:06:40Z"]
    assert second.split()[:2] == ["domain", "c.test"] and second.rstrip().endswith("-")
    assert json.loads(entry_json(entries[0])) == {"url": "http://a.test/\x1b[2J", "domain": "", "reason": "GDPR 1",
                                                  "by": "ops", "forgotten_at": "2026-11-18T11:06:40Z"}
    assert json.loads(entry_json(entries[1]))["forgotten_at"] is None
