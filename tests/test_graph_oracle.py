"""The oracle bench (bench/graph_oracle.py, issue 44 item 4) on a repository small enough
to know by heart: jedi's call sites are the ones a reader counts, and scry's callers are
matched against them by (path, line). The figures on real corpora come from the bench."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("jedi")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import graph_oracle as go

REPO = {
    "pkg/__init__.py": "",
    "pkg/util.py": (
        "def helper(x):\n"  # 1
        "    return x + 1\n"
        "\n\n"
        "def unused():\n"  # 5
        "    return 0\n"
        "\n\n"
        "class Box:\n"  # 9
        "    def open(self):\n"  # 10
        "        return self.close()\n"  # 11: Box.close, through self
        "\n"
        "    def close(self):\n"  # 13
        "        return helper(1)\n"  # 14: helper, same file
    ),
    "pkg/main.py": (
        "from pkg.util import Box, helper\n"  # 1: an import, not a call
        "\n\n"
        "def run():\n"  # 4
        "    b = Box()\n"
        "    helper(2)\n"  # 6: helper, imported
        "    value = helper\n"  # 7: a mention, not a call
        "    return b.open(), value\n"  # 8: Box.open, through a local typed by b = Box()
    ),
}


def test_site_kind_reads_calls_decorators_and_mentions() -> None:
    lines = [
        "x = foo(1)",
        "@foo",
        "@foo.setter",
        "def foo(self):",
        "y = foo",
        "z = bar.foo  (3)",
        "@m.foo(2)",
        "w = foo<",
        "  A<{ b: C }>,",
        ">()",
        "ok = foo",
        "(bar) = 1",
    ]
    kinds = [go.site_kind(lines, i, line.find("foo"), "foo") for i, line in enumerate(lines, 1)]
    assert kinds[:8] == [
        "call",
        "decorator",
        "mention",  # a property's setter is not an application of the getter
        "mention",  # a definition
        "mention",
        "call",
        "decorator",
        "call",  # type arguments over several lines, then the call
    ]
    assert go.site_kind(lines, 11, 5, "foo") == "mention"  # a ``(`` on the next line
    assert go.site_kind(lines, 1, 0, "foo") == "mention"  # not the name at that column


def test_definitions_leave_out_dunders(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "def f():\n    pass\n\nclass C:\n    def __init__(self):\n        pass\n"
        "    def m(self):\n        pass\n"
    )
    defs = go.definitions(tmp_path, ["m.py"])
    assert [(d.qualname, d.line, d.column) for d in defs] == [("f", 1, 4), ("C.m", 7, 8)]


def test_compare_on_a_known_call_graph(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for rel, text in REPO.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    res = go.compare(root, "python", n=50, seed=1, work=tmp_path / "ix")
    assert res["sampled"] == res["definitions"] == 5  # helper, unused, open, close, run
    assert res["scry_definition_not_found"] == []
    # jedi's call sites: util.py:14 and main.py:6 (helper), util.py:11 (close), main.py:8
    # (open); the import and the plain mention of helper are left out.
    assert res["oracle_call_sites"] == 4
    loose = res["callers > 0"]
    assert (loose["precision"], loose["recall"]) == (1.0, 1.0)
    strict = res["callers >= 0.7"]
    assert strict["precision"] == 1.0
    assert strict["recall"] == 1.0  # b.open(): b = Box() says b's class
    assert res["callers >= 0.7"]["disagreements"] == []
    # refs: jedi's references but the definition, the import of helper included (jedi
    # calls it a definition; scry's refs lists imports), matched the same way
    assert res["oracle_references"] == 6  # the four calls, the import, the mention
    assert res["refs any"]["precision"] == 1.0
    assert "pkg/main.py:1" not in {m["site"] for m in res["refs any"]["disagreements"]}
    table = go.table([{"corpus": "repo", **res}], {"python": (res["sampled"], res["_tallies"])})
    assert "ALL python" in table and "1.000" in table
