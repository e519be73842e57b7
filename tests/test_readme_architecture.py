"""The README's architecture drawing is the whiteboard's (../shared/architecture.json): every arrow
the whiteboard allows is drawn, no drawn arrow is one it says must never be, and the only arrow
drawn that the whiteboard lacks is Common -> Client (dashed: the service and the client share
one implementation of NATS security, spiderduck/client/security.py), which the code has."""
from __future__ import annotations

import json
import re

from conftest import ROOT, shared_path

# The one arrow the code has and the whiteboard does not draw (common/bus.py, common/nats_auth.py
# -> spiderduck/client/security.py, errors.py).
NOT_ON_THE_WHITEBOARD = {("Common", "Client")}

_FENCE = re.compile(r"^## Architecture\n.*?```mermaid\n(.*?)```", re.S | re.M)
_NODE = re.compile(r'^(\w+)\[".*"\]$')
# A --> B, A -.-> B, A -. "label" .-> B, A -->|label| B
_EDGE = re.compile(r'^(\w+)\s*(-->|-\.->|-\.\s*"[^"]*"\s*\.->)\s*(?:\|[^|]*\|\s*)?(\w+)$')


def _drawing() -> tuple[set[str], dict[tuple[str, str], bool]]:
    """The README's mermaid block: its nodes, and its edges -> whether drawn dashed."""
    text = (ROOT / "README.md").read_text("utf-8")
    block = _FENCE.search(text)
    assert block, "README.md's ## Architecture section has no ```mermaid block"
    lines = [line.strip() for line in block.group(1).splitlines() if line.strip()]
    assert lines[0].startswith(("flowchart", "graph")), lines[0]
    nodes: set[str] = set()
    edges: dict[tuple[str, str], bool] = {}
    for line in lines[1:]:
        if node := _NODE.match(line):
            nodes.add(node.group(1))
        elif edge := _EDGE.match(line):
            edges[(edge.group(1), edge.group(3))] = edge.group(2) != "-->"
        else:
            raise AssertionError(f"a line of the drawing this test cannot read: {line!r}")
    return nodes, edges


def _whiteboard() -> dict:
    return json.loads(shared_path("architecture.json").read_text())


def test_the_drawing_has_every_part_and_every_allowed_arrow():
    board = _whiteboard()
    nodes, edges = _drawing()
    assert nodes == set(board["parts"])
    assert {a for edge in edges for a in edge} <= nodes
    missing = {(a, b) for a, b in board["arrows"]} - set(edges)
    assert not missing, f"whiteboard arrows not drawn in README.md: {sorted(missing)}"
    solid_extra = {edge for edge, dashed in edges.items() if not dashed} - {(a, b) for a, b in board["arrows"]}
    assert not solid_extra, f"solid arrows the whiteboard does not draw: {sorted(solid_extra)}"


def test_no_drawn_arrow_is_a_never_and_the_only_extra_one_is_common_to_client():
    board = _whiteboard()
    _, edges = _drawing()
    nevers = {(a, b): why for a, b, why in board["never"]}
    drawn_nevers = {edge: nevers[edge] for edge in edges if edge in nevers}
    assert not drawn_nevers, f"drawn arrows the whiteboard says never: {drawn_nevers}"
    extra = set(edges) - {(a, b) for a, b in board["arrows"]}
    assert extra == NOT_ON_THE_WHITEBOARD
    assert all(edges[edge] for edge in extra), "an arrow not on the whiteboard must be drawn dashed"


def test_the_parts_folders_are_named_in_the_drawing():
    """Each node's label names its part's folders, as the whiteboard's `is` says."""
    text = (ROOT / "README.md").read_text("utf-8")
    block = _FENCE.search(text).group(1)
    for name, part in _whiteboard()["parts"].items():
        label = re.search(rf'^\s*{name}\["(.*)"\]$', block, re.M)
        assert label, f"{name} has no node"
        for folder in part["is"]:
            assert folder in label.group(1), f"{name}'s node does not name {folder}"
