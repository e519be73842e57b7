"""The README's architecture drawing is the whiteboard's (../shared/architecture-next.json): every
arrow the whiteboard allows is drawn, no drawn arrow is one it says must never be, and the arrows
drawn that the whiteboard lacks are exactly the imports between parts the code has and the
whiteboard does not draw, each dashed."""
from __future__ import annotations

import json
import re

from conftest import ROOT, shared_path
from test_architecture import WHITEBOARD, _edges


def _not_on_the_whiteboard(board: dict) -> set[tuple[str, str]]:
    """The parts' imports the code has and the whiteboard does not draw."""
    return {(a, b) for a, b, _, _ in _edges()} - {(a, b) for a, b, *_ in board["arrows"]}


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
    return json.loads(shared_path(WHITEBOARD).read_text())


def test_the_drawing_has_every_part_and_every_allowed_arrow():
    board = _whiteboard()
    nodes, edges = _drawing()
    assert nodes == set(board["parts"])
    assert {a for edge in edges for a in edge} <= nodes
    missing = {(a, b) for a, b, *_ in board["arrows"]} - set(edges)
    assert not missing, f"whiteboard arrows not drawn in README.md: {sorted(missing)}"
    solid_extra = {edge for edge, dashed in edges.items() if not dashed} - {(a, b) for a, b, *_ in board["arrows"]}
    assert not solid_extra, f"solid arrows the whiteboard does not draw: {sorted(solid_extra)}"


def test_no_drawn_arrow_is_a_never_and_the_extra_ones_are_the_codes():
    board = _whiteboard()
    _, edges = _drawing()
    nevers = {(a, b): why for a, b, why in board["never"]}
    drawn_nevers = {edge: nevers[edge] for edge in edges if edge in nevers}
    assert not drawn_nevers, f"drawn arrows the whiteboard says never: {drawn_nevers}"
    extra = set(edges) - {(a, b) for a, b, *_ in board["arrows"]}
    assert extra == _not_on_the_whiteboard(board), "draw (dashed) the code's imports the whiteboard lacks, and no other"
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
