"""struct_wire writes the bytes protobuf's own Struct API would, and survives hostile values."""
from __future__ import annotations

import json

import pytest
from google.protobuf import json_format
from google.protobuf.struct_pb2 import Struct

from spiderduck.wire import struct_wire


def parsed(data: bytes) -> Struct:
    msg = Struct()
    msg.ParseFromString(data)
    return msg


def by_protobuf(value) -> Struct:
    msg = Struct()
    msg.update(json.loads(json.dumps(value, default=str)))
    return msg


@pytest.mark.parametrize("value", [
    {},
    {"a": "b"},
    {"json-ld": [{"@type": "Article", "headline": "Ünïcödé ✓ 𝄞", "wordCount": 1234,
                  "ratio": 0.25, "negative": -7, "draft": False, "live": True, "missing": None,
                  "author": [{"@type": "Person", "name": "A"}, "B", [], {}]}],
     "opengraph": {"og:title": "x" * 300}},
    {"long": "y" * 100_000, "list": list(range(200))},
    {1: "int key", True: "bool key", None: "null key", 2.5: "float key"},
    {"tuple": (1, "two"), "object": object.__name__, "big": 2 ** 53},
])
def test_same_struct_as_the_protobuf_api(value):
    assert parsed(struct_wire.encode(value)) == by_protobuf(value)


def test_values_json_cannot_hold_are_written_as_json_would_show_them():
    data = parsed(struct_wire.encode({"nan": float("nan"), "inf": float("-inf"), "huge": 10 ** 400,
                                      "surrogate": "a\ud800b", "set": {1}}))
    as_json = json_format.MessageToDict(data)
    assert as_json["nan"] is None and as_json["inf"] is None
    assert as_json["huge"] == str(10 ** 400)
    assert as_json["surrogate"] == "a\ufffdb"
    assert as_json["set"] == "{1}"


def test_deep_nesting_is_cut_to_null_not_a_recursion_error():
    deep: list = []
    node = deep
    for _ in range(5000):
        node.append([])
        node = node[0]
    data = json_format.MessageToDict(parsed(struct_wire.encode({"deep": deep})))
    depth, node = 0, data["deep"]
    while isinstance(node, list) and node:
        depth, node = depth + 1, node[0]
    assert node is None and depth == struct_wire.MAX_DEPTH


def test_a_cycle_ends():
    loop: dict = {"name": "loop"}
    loop["self"] = loop
    data = json_format.MessageToDict(parsed(struct_wire.encode(loop)))
    assert data["name"] == "loop" and data["self"]["self"]["name"] == "loop"


def test_a_record_with_the_deepest_structured_data_kept_is_stored_and_read_back():
    from spiderduck.core.record import UrlRecord
    from spiderduck.core.status import Status
    from spiderduck.wire import record_proto

    deep: dict = {}
    node = deep
    for _ in range(5000):
        node["n"] = {}
        node = node["n"]
    rec = UrlRecord(url="http://a.test/", status=Status.OK,
                    structured_data=record_proto.StructuredData.from_dict({"json-ld": [deep]}))
    back = record_proto.from_bytes(record_proto.to_bytes(rec))
    node, levels = record_proto.to_dict(back)["structured_data"]["json-ld"][0], 0
    while isinstance(node, dict):
        node, levels = node["n"], levels + 1
    assert node is None and levels == struct_wire.MAX_DEPTH - 1     # the list took one level
