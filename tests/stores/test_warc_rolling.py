"""Naming, roll decisions and content_refs shared by the WARC content stores (fake clock)."""
from __future__ import annotations

import pytest

from spiderduck.core.errors import StoreError
from spiderduck.stores.warc_rolling import (ContentRef, RollingFile, RollPolicy, complete_length, file_name,
                                        host_label, in_progress, sealed_name)

T0 = 1_700_000_000.0          # 2023-11-14T22:13:20Z


def test_roll_by_size_or_age():
    policy = RollPolicy(roll_bytes=1000, roll_seconds=60)
    assert not policy.should_roll(999, opened_at=T0, now=T0 + 59.9)
    assert policy.should_roll(1000, opened_at=T0, now=T0)
    assert policy.should_roll(0, opened_at=T0, now=T0 + 60)


def test_defaults_are_256_mib_and_one_hour():
    assert RollPolicy() == RollPolicy(256 << 20, 3600.0)


@pytest.mark.parametrize("args", [(0, 60), (1000, 0), (-1, 60)])
def test_a_roll_policy_must_be_positive(args):
    with pytest.raises(ValueError):
        RollPolicy(*args)


def test_file_names_carry_time_host_pid_and_serial():
    assert (file_name(T0, 7, host="fetcher-3.dc1.example.com", pid=42)
            == "spiderduck-20231114221320-fetcher-3-42-00007.warc.gz")


def test_host_labels_are_safe_in_a_path_and_a_ref():
    assert host_label("web 1/x:y.example") == "web_1_x_y"
    assert host_label("") == "host"


def test_a_rolling_file_rolls_by_size_and_age_and_counts_offsets():
    f = RollingFile(RollPolicy(roll_bytes=100, roll_seconds=60), host="h", pid=1)
    assert f.next(T0)                                    # first record: create
    first = f.path
    assert str(f.wrote(60)) == f"{first}@0+60"
    assert not f.next(T0 + 1)                            # 60 < 100: same file
    assert str(f.wrote(50)) == f"{first}@60+50"
    assert f.next(T0 + 2)                                # 110 >= 100: roll by size
    assert f.path != first and f.path.endswith("-h-1-00002.warc.gz")
    assert str(f.wrote(10)).endswith("@0+10")
    assert not f.next(T0 + 61)
    f.wrote(10)
    assert f.next(T0 + 62)                               # 60 s after it opened: roll by age
    assert f.path.endswith("-00003.warc.gz")


def test_an_abandoned_file_is_never_appended_to_again():
    f = RollingFile(RollPolicy(), host="h", pid=1)
    f.next(T0)
    f.wrote(10)
    broken = f.path
    f.abandon()
    assert f.next(T0 + 1)
    assert f.path != broken and str(f.wrote(5)).endswith("@0+5")


def test_dated_files_live_in_utc_day_folders():
    f = RollingFile(RollPolicy(), dated=True, host="h", pid=1)
    f.next(T0)
    assert f.path == "2023/11/14/spiderduck-20231114221320-h-1-00001.warc.gz"


@pytest.mark.parametrize("ref, parsed", [
    ("a.warc.gz@0+10", ContentRef("a.warc.gz", 0, 10)),
    ("2023/11/14/b-1.warc.gz@123+45", ContentRef("2023/11/14/b-1.warc.gz", 123, 45)),
])
def test_refs_round_trip(ref, parsed):
    assert ContentRef.parse(ref) == parsed
    assert str(parsed) == ref


@pytest.mark.parametrize("ref", ["", "x", "a@1", "a@1+0", "../a@0+1", "a/../b@0+1", "/a@0+1",
                                 "a//b@0+1", ".hidden@0+1", "a@0+1\n", None, 12])
def test_malformed_refs_are_store_errors_not_worth_retrying(ref):
    with pytest.raises(StoreError) as err:
        ContentRef.parse(ref)
    assert not err.value.retryable


@pytest.mark.parametrize("damage", ["deflate", "cut", "header"])
def test_a_damaged_member_is_a_store_error_not_a_crash(damage):
    from spiderduck.core.errors import StoreError
    from spiderduck.stores.content import FetchedContent, warc_record
    from spiderduck.stores.warc_rolling import ContentRef, decode_record

    member = warc_record(FetchedContent(url="http://a.test/", http_status=200, headers=(),
                                        body=bytes(range(256)) * 64, fetched_at=1_700_000_000.0))
    damaged = {"deflate": member[:12] + bytes(40) + member[52:],
               "cut": member[:-9] + bytes(9),
               "header": b"XX" + member[2:]}[damage]
    with pytest.raises(StoreError) as err:
        decode_record(ContentRef("a.warc.gz", 0, len(damaged)), damaged)
    assert not err.value.retryable


def test_complete_length_finds_the_last_whole_member_wherever_a_file_is_cut():
    import gzip
    import os
    members = [gzip.compress(os.urandom(n) + b"a" * (n * 50)) for n in (10, 5000, 300_000, 1)]
    data = b"".join(members)
    ends = [sum(map(len, members[:i])) for i in range(len(members) + 1)]
    for cut in range(0, len(data) + 1, 997):
        assert complete_length(data[:cut], chunk=4096) == max(e for e in ends if e <= cut), cut
    assert complete_length(data) == len(data)
    assert complete_length(data + b"not gzip") == len(data)
    assert complete_length(b"") == 0


def test_in_progress_names_are_hidden_and_map_back():
    assert in_progress("2026/01/02/x.warc.gz") == "2026/01/02/.x.warc.gz.inprogress"
    assert in_progress("x.warc.gz") == ".x.warc.gz.inprogress"
    assert sealed_name(".x.warc.gz.inprogress") == "x.warc.gz"
    assert sealed_name("x.warc.gz") is None and sealed_name(".inprogress") is None
