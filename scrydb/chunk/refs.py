"""Outgoing references of a file (:class:`~scrydb.chunk.records.Ref`), read from the
captures of the one tree-sitter query that also finds the definitions
(:func:`scrydb.chunk.code.chunk_code`), and handed to the chunks by line.

A spec's ``refs`` patterns (:mod:`scrydb.chunk.specs.references`) name what they
capture, tags-style:

* ``@call``, ``@import``, ``@inherit``, ``@type``, ``@decorator``: the name, a node
  whose text is the name (an identifier);
* the same with ``.q``: a name reached through the ``@qualifier`` node that ends just
  before its separator (``obj.m``, ``self->m``, ``pkg.Type``), paired by position;
* the same with ``.path``: a qualified name (``a::b::f``, ``pkg.Other``, ``ns::f<int>``)
  whose last component is the name and the rest its qualifier (generic arguments
  dropped); for an import, a module path (``a.b``, ``"github.com/x/y"``, ``<stdio.h>``)
  that is the module, its last element the name;
* ``@import.member``: an imported member's full path (``java.util.List``): the module is
  the path without its last component, the name that component;
* ``@import.default`` / ``@import.all``: the local name of a JS default import
  (name ``default``) / of a namespace import (name ``*``), recorded as the alias;
* ``@call.macro``: a macro's name (``println`` -> ``println!``);
* ``@import.rust_use`` / ``@import.scala``: a whole Rust ``use`` / Scala ``import``
  declaration, read by :func:`import_tree`;
* ``@skip`` / ``@skip.path``: a name that is no reference (a definition's own name, the
  package part of a qualified type);
* ``@group``: a node whose references need captures that belong together (an import's
  name, ``@module`` and ``@alias``; ``@fn``, the function a pattern needs to be called
  for it to count: ``require``, ``include``, ``derive``, since queries cannot test
  text). The spec's ``ref_groups`` query runs on each such node, match by match;
  on a ``@group.fn`` node only when its first bytes name such a function (most
  ``f("...")`` calls and ``#[attr(...)]`` attributes are not ``require``/``derive``).

Captures, not matches, for the bulk: a match costs Python objects per match, and
references are most of what a file's query finds. When one name is captured by
several patterns, the strongest kind wins (import, decorator, inherit, call, type),
and a capture with a qualifier or alias over one without.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import fields

from tree_sitter import Node, Query, QueryCursor

from scrydb.chunk.records import Chunk, Ref, budget_clock
from scrydb.chunk.reftext import (
    READ_BYTES,
    RUST_USE,
    SCALA_IMPORT,
    SIMPLE_PATH,
    SIMPLE_SPLIT,
    compact,
    import_tree,
    member_path,
    module_path,
    split_path,
    tail_text,
    tidy,
)

#: A generated file can hold hundreds of thousands of calls; a chunk keeps its first
#: this many references (what a caller graph can use of one chunk is far less).
MAX_REFS_PER_CHUNK = 2000
#: Which kind wins when two patterns capture the same name (lower wins).
_RANK = {"skip": 0, "import": 1, "decorator": 2, "inherit": 3, "call": 4, "type": 5}
#: Functions whose call is an import or an inheritance (``@fn`` of a pattern).
_FN_ALLOWED = {
    "import": frozenset({"require", "require_relative", "load", "autoload"}),
    "inherit": frozenset({"include", "extend", "prepend", "derive"}),
}
#: ``@group.fn`` nodes are queried only when their first bytes hold one of these.
_FN_HINTS = re.compile(b"|".join(sorted({n.encode() for ns in _FN_ALLOWED.values() for n in ns})))
_FN_HEAD = 4096
#: Builtin and primitive types that grammars write as plain identifiers (Python
#: annotations, Go, C typedefs): never references to the repository's code.
BUILTIN_TYPES = frozenset(
    """
    int str float bool bytes bytearray complex None object list dict set frozenset tuple
    type string number boolean any unknown never undefined null void symbol bigint
    byte rune error uint uint8 uint16 uint32 uint64 int8 int16 int32 int64 uintptr
    float32 float64 complex64 complex128 comparable Self _
    size_t ssize_t ptrdiff_t intptr_t uintptr_t int8_t int16_t int32_t int64_t
    uint8_t uint16_t uint32_t uint64_t char double long short unsigned signed
    String Int Long Short Byte Boolean Float Double Char Unit Any Nothing
    """.split()
)
# A record before it becomes a Ref: (rank, fields missing of qualifier and alias, row,
# byte column, name start byte, name, kind, qualifier, module, alias); at one position
# the lowest first two win.
_Raw = tuple[int, int, int, int, int, str, str, str | None, str | None, str | None]


#: Capture name -> (rank, kind, mode) for the captures that name a reference.
_KEYS = {
    f"{kind}{'.' + mode if mode else ''}": (rank, kind, mode)
    for kind, rank in _RANK.items()
    for mode in ("", "q", "path", "member", "macro", "default", "all", "rust_use", "scala")
}
#: Bytes between a qualifier and the name it qualifies: separators and spaces.
_SEPS = frozenset(b" \t\r\n.:->?&")
#: Names looked at between two looks at the clock.
_CLOCK_EVERY = 4096


def find_refs(
    caps: dict[str, list[Node]], groups: Query | None, src: bytes, deadline: float
) -> list[_Raw]:
    """The references among ``caps`` (the spec's query over one file, by capture
    name), ``@group`` nodes read with the ``groups`` query: one per name (the strongest
    kind), sorted by position; definitions' own names and builtin types left out. Stops
    early, keeping what it has, past ``deadline``."""
    best: dict[int, _Raw] = {}
    skips: set[int] = set()
    quals = caps.get("qualifier")
    qual_end = {n.end_byte: n for n in quals} if quals else {}
    for key, nodes in caps.items():
        if budget_clock() > deadline:
            break
        info = _KEYS.get(key)
        if info is not None:
            rank, kind, mode = info
            if kind == "skip" and not mode:
                skips.update(n.start_byte for n in nodes)
            elif mode in ("", "q"):
                _names(nodes, rank, kind, qual_end if mode else None, src, best, deadline)
            elif mode in ("path", "macro") and kind != "import" and kind != "skip":
                _paths(nodes, rank, kind, mode, src, best, deadline)
            else:
                for node in nodes:
                    _collect(kind, mode, node, {}, src, best, skips)
        elif key.startswith("group") and groups is not None:
            hinted = key == "group.fn"
            for count, node in enumerate(nodes):
                if count % 256 == 255 and budget_clock() > deadline:
                    break
                if hinted:  # only worth a query when it names one of the functions
                    s = node.start_byte
                    if _FN_HINTS.search(src, s, min(node.end_byte, s + _FN_HEAD)) is None:
                        continue
                for _, group in QueryCursor(groups).matches(node):
                    for gkey, gnodes in group.items():
                        ginfo = _KEYS.get(gkey)
                        if ginfo is not None:
                            _collect(ginfo[1], ginfo[2], gnodes[0], group, src, best, skips)
                            break
    for pos in skips:
        best.pop(pos, None)
    return [best[k] for k in sorted(best)]


def _names(
    nodes: list[Node],
    rank: int,
    kind: str,
    qual_end: dict[int, Node] | None,
    src: bytes,
    best: dict[int, _Raw],
    deadline: float,
) -> None:
    """The common case, one tight loop: plain names; with ``qual_end`` (qualifier nodes
    by end byte), each reached through the qualifier that ends just before its
    separator (``obj.m``, ``self->m``, ``a?.m``, a chain broken over lines)."""
    builtin = BUILTIN_TYPES if kind in ("type", "inherit") else None
    seps = _SEPS
    for block in range(0, len(nodes), _CLOCK_EVERY):
        if block and budget_clock() > deadline:
            return
        _names_block(
            nodes[block : block + _CLOCK_EVERY], rank, kind, qual_end, src, best, builtin, seps
        )


def _names_block(
    nodes: list[Node],
    rank: int,
    kind: str,
    qual_end: dict[int, Node] | None,
    src: bytes,
    best: dict[int, _Raw],
    builtin: frozenset[str] | None,
    seps: frozenset[int],
) -> None:
    for n in nodes:
        start = n.start_byte
        name = src[start : n.end_byte].decode("utf-8", "replace")
        if not name or (builtin is not None and name in builtin):
            continue  # a MISSING node of error recovery has no text
        qualifier = None
        missing = 2  # of qualifier and alias (never one outside imports)
        if qual_end is not None:
            # ``.`` then ``::``, ``->``, ``?.``, `` .``; else scan back over spaces
            qn = qual_end.get(start - 1) or qual_end.get(start - 2)
            if qn is None:
                j = start - 1
                while j >= 0 and src[j] in seps:
                    j -= 1
                qn = qual_end.get(j + 1)
            if qn is not None:
                qualifier = _qualifier(qn, src)
                missing = 1
        cur = best.get(start)
        if cur is None or rank < cur[0] or (rank == cur[0] and missing < cur[1]):
            row, col = n.start_point
            best[start] = (rank, missing, row, col, start, name, kind, qualifier, None, None)


def _paths(
    nodes: list[Node],
    rank: int,
    kind: str,
    mode: str,
    src: bytes,
    best: dict[int, _Raw],
    deadline: float,
) -> None:
    """Qualified names (``a::b::f``, ``pkg.Type``, a macro ``tokio::select``), the plain
    ones in one tight loop, the rest (generic arguments, line breaks, long paths)
    through :func:`_collect`."""
    builtin = BUILTIN_TYPES if kind in ("type", "inherit") else frozenset()
    suffix = "!" if mode == "macro" else ""
    simple = SIMPLE_SPLIT.match
    for count, n in enumerate(nodes):
        if count % _CLOCK_EVERY == _CLOCK_EVERY - 1 and budget_clock() > deadline:
            return
        s, e = n.start_byte, n.end_byte
        m = simple(src[s:e].decode("utf-8", "replace")) if e - s <= READ_BYTES else None
        if m is None:
            _collect(kind, mode, n, {}, src, best, set())
            continue
        name = m.group(2)
        if name in builtin:
            continue
        start = e - (len(name) if name.isascii() else len(name.encode("utf-8", "replace")))
        qualifier = m.group(1)
        missing = 2 if qualifier is None else 1
        cur = best.get(start)
        if cur is None or rank < cur[0] or (rank == cur[0] and missing < cur[1]):
            row, end_col = n.end_point  # a plain path is on one row
            best[start] = (
                rank, missing, row, end_col - (e - start), start, name + suffix, kind, qualifier,
                None, None,
            )  # fmt: skip


def _qualifier(node: Node, src: bytes) -> str | None:
    """The qualifier ``node`` as written, tidied (see :func:`tidy`)."""
    s, e = node.start_byte, node.end_byte
    if e - s > READ_BYTES:
        return tidy(*tail_text(node, src))
    text = src[s:e].decode("utf-8", "replace")
    if text.isidentifier() or SIMPLE_PATH.match(text):
        return text
    return tidy(text, False)


def _collect(
    kind: str,
    mode: str,
    node: Node,
    caps: dict[str, list[Node]],
    src: bytes,
    best: dict[int, _Raw],
    skips: set[int],
) -> None:
    """Record the reference of one capture (and of its group's ``caps``) in ``best``."""
    fn = caps.get("fn")
    fn_name = ""
    if fn is not None:
        allowed = _FN_ALLOWED.get(kind, frozenset())
        fn_name = src[fn[0].start_byte : fn[0].end_byte].decode("utf-8", "replace")
        if fn_name not in allowed:
            return
        skips.add(fn[0].start_byte)  # ``require(...)`` is the import, not a call too
    if kind == "skip":
        if mode == "path":
            split = split_path(node, src)
            if split is not None:
                skips.add(split[0])
        else:
            skips.add(node.start_byte)
        return
    if kind == "import":
        _collect_import(mode, node, caps, fn_name, src, best)
        return
    qualifier: str | None = None
    if mode in ("path", "macro"):
        split = split_path(node, src)
        if split is None:
            return
        start, name, qualifier = split
        if mode == "macro":
            name += "!"
    else:
        start = node.start_byte
        name = src[start : node.end_byte].decode("utf-8", "replace")
    if kind in ("type", "inherit") and name in BUILTIN_TYPES:
        return
    q = caps.get("qualifier")
    if q is not None:
        qualifier = _qualifier(q[0], src)
    _keep(best, node, src, start, name, kind, qualifier, None, None)


def _collect_import(
    mode: str,
    node: Node,
    caps: dict[str, list[Node]],
    fn_name: str,
    src: bytes,
    best: dict[int, _Raw],
) -> None:
    """An import: its name, module and alias by the capture's mode (module docstring).
    It sits at its name when the node's text ends with it (``java.util.List``, ``a.b``),
    else at the node (a quoted path)."""
    module: str | None = None
    alias: str | None = None
    if mode in ("rust_use", "scala"):
        syntax = RUST_USE if mode == "rust_use" else SCALA_IMPORT
        for start, name, module, alias in import_tree(node, src, syntax):
            _keep(best, node, src, start, name, "import", None, module, alias)
        return
    text = src[node.start_byte : node.end_byte].decode("utf-8", "replace")
    if mode == "path":
        module, name = module_path(text)
    elif mode == "member":
        module, name = member_path(text)
    elif mode in ("default", "all"):
        name, alias = ("default" if mode == "default" else "*"), text.strip()
    else:
        name = member_path(text)[1]
    mod = caps.get("module")
    if mod is not None:
        module = module_path(compact(mod[0], src))[0]
    if fn_name == "require_relative" and module and not module.startswith("."):
        module = "./" + module
    al = caps.get("alias")
    if al is not None:
        alias = compact(al[0], src) or None
    _keep_import(best, node, src, name, module, None if alias == name else alias)


def _keep_import(
    best: dict[int, _Raw],
    node: Node,
    src: bytes,
    name: str,
    module: str | None,
    alias: str | None,
) -> None:
    nb = name.encode("utf-8", "replace")
    e = node.end_byte
    start = e - len(nb) if src.endswith(nb, node.start_byte, e) else node.start_byte
    _keep(best, node, src, start, name, "import", None, module, alias)


def _keep(
    best: dict[int, _Raw],
    node: Node,
    src: bytes,
    start: int,
    name: str,
    kind: str,
    qualifier: str | None,
    module: str | None,
    alias: str | None,
) -> None:
    """Record a reference whose name starts at byte ``start`` inside ``node``, unless
    a stronger one holds that position."""
    if not name:
        return
    rank = _RANK[kind]
    missing = (qualifier is None) + (alias is None)
    cur = best.get(start)
    if cur is not None and (cur[0], cur[1]) <= (rank, missing):
        return
    e = node.end_byte
    if start == node.start_byte:
        row, col = node.start_point
    elif src.find(b"\n", start, e) < 0:  # on the node's last row
        row, end_col = node.end_point
        col = end_col - (e - start)
    else:
        row = node.start_point.row + src.count(b"\n", node.start_byte, start)
        col = start - (src.rfind(b"\n", 0, start) + 1)
    best[start] = (rank, missing, row, col, start, name, kind, qualifier, module, alias)


#: ``Ref(...)`` runs the frozen dataclass's ``__init__``, one ``object.__setattr__``
#: per field (about 1 µs); setting the slots directly (:func:`attach_refs`) makes the
#: same object in about half that, and a file can hold tens of thousands of references.
_REF_SLOTS = tuple(getattr(Ref, f.name).__set__ for f in fields(Ref))


def attach_refs(chunks: list[Chunk], raw: list[_Raw], src: bytes, lines: list[str]) -> None:
    """Give each chunk the references whose name lies in its lines (``raw`` sorted by
    position, ``lines`` the file's lines split on ``\\n``), at most
    ``MAX_REFS_PER_CHUNK`` each, with 1-based lines and character columns."""
    if not raw:
        return
    rows = [r[2] for r in raw]
    new = object.__new__
    s_name, s_kind, s_line, s_column, s_qualifier, s_module, s_alias = _REF_SLOTS
    for chunk in chunks:
        i = bisect_left(rows, chunk.start_line - 1)
        j = min(bisect_right(rows, chunk.end_line - 1), i + MAX_REFS_PER_CHUNK)
        if i >= j:
            continue
        out = chunk.refs
        line_row = -1
        ascii_row = True
        prev_start = prev_col = 0
        for _, _, row, col, start, name, kind, qualifier, module, alias in raw[i:j]:
            if row != line_row:
                line_row = row
                ascii_row = row < len(lines) and lines[row].isascii()
                prev_start, prev_col = start - col, 0
            if not ascii_row:  # count characters, from the previous reference on the row
                col = prev_col + len(src[prev_start:start].decode("utf-8", "replace"))
                prev_start, prev_col = start, col
            ref = new(Ref)  # Ref(name, kind, row + 1, col + 1, qualifier, module, alias)
            s_name(ref, name)
            s_kind(ref, kind)
            s_line(ref, row + 1)
            s_column(ref, col + 1)
            s_qualifier(ref, qualifier)
            s_module(ref, module)
            s_alias(ref, alias)
            out.append(ref)
