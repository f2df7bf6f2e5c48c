"""Labels of a bug-report case from its fix: the files and the functions a patch changed.

Pure functions (no git, no scrydb), shared by ``make_manifest.py`` (which writes the manifest) and
``run.py`` (which scores searches against it); ``test_reports.py`` covers them.

* ``parse_patch`` reads a unified diff into per-file changes: the old path, the old line
  numbers that were removed or replaced, and the points where lines were inserted.
* ``classify`` sorts a path into ``test``, ``doc`` or ``code``: tests never label a case
  (SWE-bench keeps them in ``test_patch`` anyway); docs and changelogs are kept apart
  (``other_files``) because a release note changed with every fix would otherwise decide
  the file score.
* ``definitions`` lists a Python file's functions and classes with their line spans;
  ``changed_functions`` names the innermost definition around each change at the base
  commit (``path::Class.method``); module-level changes and code added in new functions
  name nothing, as in LocAgent's function-level ground truth.
* ``file_ranking`` / ``function_ranking`` turn a ranked list of chunk hits into ranked
  files and definitions; ``accuracy_at`` is LocAgent's Acc@k: 1 when every label is in
  the first k, else 0.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
TEST_DIRS = frozenset({"test", "tests", "testing"})
DOC_DIRS = frozenset({"doc", "docs"})
DOC_EXTS = frozenset({".rst", ".md", ".txt", ".adoc"})
DOC_NAMES = ("CHANGELOG", "CHANGES", "HISTORY", "NEWS", "AUTHORS", "CONTRIBUTORS", "README")


@dataclass
class FileChange:
    """What a patch did to one file, in the old file's line numbers."""

    old_path: str | None  #: None: the patch creates the file
    new_path: str | None  #: None: the patch deletes the file
    removed: set[int] = field(default_factory=set)  #: old lines removed or replaced
    #: insertion points: (old line after which lines were added, indent of the first
    #: added non-blank line)
    inserted: list[tuple[int, int]] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.old_path or self.new_path or ""


def _strip_prefix(p: str) -> str | None:
    p = p.strip().split("\t")[0]
    if p == "/dev/null":
        return None
    return p[2:] if p[:2] in ("a/", "b/") else p


def parse_patch(patch: str) -> list[FileChange]:
    """Per-file changes of a unified (git) diff."""
    out: list[FileChange] = []
    cur: FileChange | None = None
    old_ln = 0
    pending_insert: int | None = None  # old line after which the current '+' run goes
    replacing = False  # the current '+' run follows removed lines: a replacement
    in_hunk = False
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            parts = line.split()
            cur = FileChange(_strip_prefix(parts[2]), _strip_prefix(parts[3]))
            out.append(cur)
            in_hunk = False
            continue
        if cur is None:
            continue
        if not in_hunk and line.startswith("--- "):
            cur.old_path = _strip_prefix(line[4:])
            continue
        if not in_hunk and line.startswith("+++ "):
            cur.new_path = _strip_prefix(line[4:])
            continue
        m = HUNK.match(line)
        if m:
            in_hunk = True
            old_ln = int(m.group(1))
            if m.group(2) == "0":  # pure insertion: the number is the line before it
                old_ln += 1
            pending_insert = None
            replacing = False
            continue
        if not in_hunk:
            continue
        tag = line[:1]
        if tag == " ":
            old_ln += 1
            pending_insert = None
            replacing = False
        elif tag == "-":
            cur.removed.add(old_ln)
            old_ln += 1
            pending_insert = None
            replacing = True
        elif tag == "+":
            body = line[1:]
            if pending_insert is None and not replacing and body.strip():
                pending_insert = old_ln - 1
                indent = len(body) - len(body.lstrip(" \t"))
                cur.inserted.append((pending_insert, indent))
        # "\ No newline at end of file" and anything else: ignored
    return out


def classify(path: str) -> str:
    """``test``, ``doc`` or ``code`` (anything else a fix changed: source, config)."""
    p = PurePosixPath(path)
    parts = p.parts
    name = p.name
    if TEST_DIRS & set(parts[:-1]) or name == "conftest.py":
        return "test"
    if (name.startswith("test_") and name.endswith(".py")) or name.endswith("_test.py"):
        return "test"
    if parts[0] in DOC_DIRS or p.suffix.lower() in DOC_EXTS:
        return "doc"
    if name.upper().startswith(DOC_NAMES):
        return "doc"
    return "code"


@dataclass(frozen=True)
class Definition:
    """A function or class of a Python file: its dotted name and lines (decorators in)."""

    name: str
    start: int
    end: int
    col: int
    is_class: bool


def definitions(source: str) -> list[Definition]:
    """Every function and class of a Python source, outermost first; [] if it won't parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: list[Definition] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                out.append(
                    Definition(
                        name,
                        start,
                        child.end_lineno or child.lineno,
                        child.col_offset,
                        isinstance(child, ast.ClassDef),
                    )
                )
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def _innermost(defs: Iterable[Definition]) -> Definition | None:
    best = None
    for d in defs:
        if best is None or (d.end - d.start, d.start) < (best.end - best.start, best.start):
            best = d
    return best


def changed_definitions(change: FileChange, defs: Sequence[Definition]) -> list[str]:
    """Names of the innermost definitions around the change's lines, in line order."""
    names: dict[str, int] = {}
    for ln in sorted(change.removed):
        d = _innermost(x for x in defs if x.start <= ln <= x.end)
        if d is not None:
            names.setdefault(d.name, ln)
    for after, indent in change.inserted:
        # Lines added after line `after`: inside a definition that goes on past it, or
        # at its very end when indented deeper than its header (its body grows).
        d = _innermost(
            x
            for x in defs
            if x.start <= after and (after < x.end or (after == x.end and indent > x.col))
        )
        if d is not None:
            names.setdefault(d.name, after)
    return [n for n, _ in sorted(names.items(), key=lambda kv: kv[1])]


def function_id(path: str, name: str) -> str:
    return f"{path}::{name}"


# -- scoring ------------------------------------------------------------------------------


def file_ranking(hits: Iterable[tuple[str, int, int]]) -> list[str]:
    """Distinct files in the order their first hit came."""
    seen: dict[str, None] = {}
    for path, _, _ in hits:
        seen.setdefault(path, None)
    return list(seen)


def hit_definition(defs: Sequence[Definition], start: int, end: int) -> Definition | None:
    """The definition a hit on lines start..end stands for: the one it overlaps most;
    on a tie the innermost (a chunk inside a method is that method, not its class)."""
    best: Definition | None = None
    best_key: tuple[int, int] = (0, 0)
    for d in defs:
        overlap = min(end, d.end) - max(start, d.start) + 1
        if overlap <= 0:
            continue
        key = (overlap, -(d.end - d.start))
        if best is None or key > best_key:
            best, best_key = d, key
    return best


def function_ranking(
    hits: Iterable[tuple[str, int, int]], defs_of: dict[str, Sequence[Definition]]
) -> list[str]:
    """Distinct definitions (``path::name``) in the order the hits name them; a hit in a
    file without definitions (or outside all of them) names none."""
    seen: dict[str, None] = {}
    for path, a, b in hits:
        defs = defs_of.get(path)
        if not defs:
            continue
        d = hit_definition(defs, a, b)
        if d is not None:
            seen.setdefault(function_id(path, d.name), None)
    return list(seen)


def accuracy_at(ranked: Sequence[str], labels: Iterable[str], k: int) -> float | None:
    """1.0 when every label is in the first k, else 0.0; None when there is no label."""
    want = set(labels)
    if not want:
        return None
    return 1.0 if want <= set(ranked[:k]) else 0.0


def reciprocal_rank(ranked: Sequence[str], labels: Iterable[str]) -> float | None:
    """1/rank of the first label found (0.0 when none is ranked); None without labels."""
    want = set(labels)
    if not want:
        return None
    for i, x in enumerate(ranked, 1):
        if x in want:
            return 1.0 / i
    return 0.0
