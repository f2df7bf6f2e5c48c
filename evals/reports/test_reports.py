"""Tests of the bug-report set's label and metric code (no git, no index).

python -m pytest -q evals/reports/test_reports.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import labels as L

SOURCE = '''\
import os


def top(a):
    return a + 1


class Box:
    """A box."""

    size = 3

    @property
    def area(self):
        return self.size**2

    def grow(self, n):
        self.size += n
        return self.size


async def fetch():
    return None
'''

PATCH = """\
diff --git a/pkg/box.py b/pkg/box.py
--- a/pkg/box.py
+++ b/pkg/box.py
@@ -5,1 +5,1 @@ def top(a):
-    return a + 1
+    return a + 2
@@ -11,1 +11,2 @@ class Box:
     size = 3
+    colour = "red"
@@ -18,2 +19,3 @@ class Box:
         self.size += n
+        self.size = max(self.size, 0)
         return self.size
@@ -19,0 +21,4 @@ class Box:
+
+    def shrink(self, n):
+        self.size -= n
+
diff --git a/tests/test_box.py b/tests/test_box.py
--- a/tests/test_box.py
+++ b/tests/test_box.py
@@ -1,1 +1,2 @@
 import box
+import os
diff --git a/docs/whatsnew.rst b/docs/whatsnew.rst
--- a/docs/whatsnew.rst
+++ b/docs/whatsnew.rst
@@ -1,1 +1,2 @@
 v1
+* fixed grow
diff --git a/pkg/new.py b/pkg/new.py
new file mode 100644
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1,2 @@
+def fresh():
+    return 1
"""


def test_parse_patch_files_and_lines():
    changes = L.parse_patch(PATCH)
    assert [c.path for c in changes] == [
        "pkg/box.py",
        "tests/test_box.py",
        "docs/whatsnew.rst",
        "pkg/new.py",
    ]
    box = changes[0]
    assert box.removed == {5}
    # insertions: after line 11 (class body), after 18 (inside grow), after 19 (grow's
    # last line, indented like a method header: a new method of Box, not grow's body);
    # the replacement of line 5 is a removal only
    assert box.inserted == [(11, 4), (18, 8), (19, 4)]
    assert changes[3].old_path is None and changes[3].new_path == "pkg/new.py"


def test_removed_sql_comment_is_not_a_header():
    patch = "diff --git a/q.sql b/q.sql\n--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,1 @@\n--- old\n x\n"
    (c,) = L.parse_patch(patch)
    assert c.old_path == "q.sql" and c.removed == {1}


def test_classify():
    assert L.classify("tests/test_box.py") == "test"
    assert L.classify("test/rules/std_test.py") == "test"
    assert L.classify("src/pkg/conftest.py") == "test"
    assert L.classify("docs/sphinx/source/whatsnew/v0.9.rst") == "doc"
    assert L.classify("CHANGELOG.rst") == "doc"
    assert L.classify("pvlib/pvsystem.py") == "code"
    assert L.classify("src/sqlfluff/core/default_config.cfg") == "code"
    assert L.classify("setup.py") == "code"


def test_definitions_and_changed_functions():
    defs = L.definitions(SOURCE)
    names = {d.name: (d.start, d.end) for d in defs}
    assert names["top"] == (4, 5)
    assert names["Box"] == (8, 19)
    assert names["Box.area"] == (13, 15)  # the decorator line counts
    assert names["fetch"] == (22, 23)
    (box, *_) = L.parse_patch(PATCH)
    assert L.changed_definitions(box, defs) == ["top", "Box", "Box.grow"]
    # code added after a function's last line at the function's own indent is a new
    # sibling (no name of its own at the base); deeper, the function's body grows
    tail = L.FileChange("pkg/box.py", "pkg/box.py", inserted=[(5, 0)])
    assert L.changed_definitions(tail, defs) == []
    tail = L.FileChange("pkg/box.py", "pkg/box.py", inserted=[(5, 4)])
    assert L.changed_definitions(tail, defs) == ["top"]


def test_definitions_of_broken_source():
    assert L.definitions("def (:\n") == []


def test_hit_definition_prefers_most_overlap_then_innermost():
    defs = L.definitions(SOURCE)
    assert L.hit_definition(defs, 17, 19).name == "Box.grow"  # inside the method
    assert L.hit_definition(defs, 8, 19).name == "Box"  # the whole class
    assert L.hit_definition(defs, 1, 2) is None  # imports: no definition


def test_rankings_and_metrics():
    defs = {"pkg/box.py": L.definitions(SOURCE)}
    hits = [
        ("README.md", 1, 5),
        ("pkg/box.py", 17, 19),
        ("pkg/box.py", 4, 5),
        ("pkg/box.py", 18, 19),
        ("pkg/util.py", 1, 9),
    ]
    files = L.file_ranking(hits)
    assert files == ["README.md", "pkg/box.py", "pkg/util.py"]
    funcs = L.function_ranking(hits, defs)
    assert funcs == ["pkg/box.py::Box.grow", "pkg/box.py::top"]
    assert L.accuracy_at(files, ["pkg/box.py"], 1) == 0.0
    assert L.accuracy_at(files, ["pkg/box.py"], 5) == 1.0
    assert L.accuracy_at(files, ["pkg/box.py", "pkg/other.py"], 10) == 0.0
    assert L.accuracy_at(files, [], 5) is None
    assert L.reciprocal_rank(files, ["pkg/util.py", "pkg/box.py"]) == 0.5
    assert L.reciprocal_rank(files, ["nowhere.py"]) == 0.0
    assert L.accuracy_at(funcs, ["pkg/box.py::top", "pkg/box.py::Box.grow"], 5) == 1.0


def test_split_description():
    import make_manifest as build

    text = "Title\nbody with Hints: inline\n\n\nHints:\nnan\n\nCreated at: 2021-01-02T03:04:05Z\n"
    got, created = build.split_description(text)
    assert got == "Title\nbody with Hints: inline\n"
    assert created == "2021-01-02T03:04:05Z"


def _git(gd: Path, *args: str, **kw) -> str:
    return subprocess.run(
        ["git", "-C", str(gd), *args], check=True, capture_output=True, text=True, **kw
    ).stdout


@pytest.mark.skipif(
    subprocess.run(["git", "--version"], capture_output=True).returncode != 0,
    reason="no git",
)
def test_materialize_moves_a_tree_between_commits(tmp_path):
    import run

    repo = tmp_path / "src"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.invalid")
    _git(repo, "config", "user.name", "t")
    (repo / "a.py").write_text("a = 1\n")
    (repo / "b.py").write_text("b = 1\n")
    (repo / "data").mkdir()
    (repo / "data" / "big.csv").write_text("1,2\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    one = _git(repo, "rev-parse", "HEAD").strip()
    (repo / "b.py").unlink()
    (repo / "a.py").write_text("a = 2\n")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "c.py").write_text("c = 1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "two")
    two = _git(repo, "rev-parse", "HEAD").strip()

    root = tmp_path / "tree"
    gd = repo / ".git"
    got = run.materialize(gd, one, root, ("data/",))
    assert got == {"files": 2, "written": 2, "removed": 0, "absent": 0}
    assert sorted(p.name for p in root.rglob("*") if p.is_file()) == ["a.py", "b.py"]
    got = run.materialize(gd, two, root, ("data/",))
    assert got == {"files": 2, "written": 2, "removed": 1, "absent": 0}
    assert (root / "a.py").read_text() == "a = 2\n" and not (root / "b.py").exists()
    stat = (root / "a.py").stat()
    got = run.materialize(gd, two, root, ("data/",))
    assert got["written"] == 0 and (root / "a.py").stat().st_mtime_ns == stat.st_mtime_ns

    # a blob the git directory lacks (a snapshot without its largest files) is left out
    (repo / "huge.csv").write_text("9,9\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "three")
    three = _git(repo, "rev-parse", "HEAD").strip()
    sha = _git(repo, "rev-parse", "HEAD:huge.csv").strip()
    (gd / "objects" / sha[:2] / sha[2:]).unlink()
    got = run.materialize(gd, three, root, ("data/",))
    assert got == {"files": 2, "written": 0, "removed": 0, "absent": 1}
    assert not (root / "huge.csv").exists()


def test_score_a_case(tmp_path):
    import run

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "box.py").write_text(SOURCE)
    case = {"files": ["pkg/box.py"], "functions": ["pkg/box.py::Box.grow"]}
    hits = [("docs/x.rst", 1, 3), ("pkg/box.py", 18, 19)]
    got = run.score(case, hits, tmp_path, {})
    assert got["file_acc@1"] == 0.0 and got["file_acc@5"] == 1.0
    assert got["func_acc@5"] == 1.0 and got["mrr"] == 0.5
    assert got["file_ranks"] == [2]
