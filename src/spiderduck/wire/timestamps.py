"""Epoch seconds (the record's floats) <-> protobuf Timestamps, exactly: a float comes back as it went."""
from __future__ import annotations

import math

from google.protobuf.timestamp_pb2 import Timestamp


def from_epoch(seconds: float) -> Timestamp:
    """Whole seconds and the fraction apart: `seconds * 1e9` is past a float's 53 bits (an
    epoch in nanoseconds has 19 digits), so 1795444492.25 came back as 1795444492.2499998."""
    whole = math.floor(seconds)
    nanos = round((seconds - whole) * 1e9)
    if nanos >= 1_000_000_000:
        whole, nanos = whole + 1, nanos - 1_000_000_000
    return Timestamp(seconds=whole, nanos=nanos)


def to_epoch(ts: Timestamp) -> float:
    """The inverse of from_epoch: the same float comes back."""
    return ts.seconds + ts.nanos / 1e9
