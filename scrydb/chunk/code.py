"""Tree-sitter chunker: definitions become chunks, the rest is grouped code.

One parse per file, one query (run in C) that finds every definition and every
reference (:mod:`scrydb.chunk.refs`), then a walk over the statement-level nodes only (the root's children, and the bodies of
containers that are too big to keep whole) — never over the whole tree, so the
cost is about the parse plus O(definitions + top-level items).

Rules (see ``scrydb/chunk/__init__.py`` for the contract):

* a definition's chunk starts at the run of comments/attributes/decorators directly
  above it (no blank line in between) and ends at its last line;
* a definition up to ``MAX_CHUNK_BYTES`` stays whole, whatever it contains (nested
  definitions are listed in the chunk's ``defs``);
* a bigger class-like definition (class, struct, interface, impl, module, ...) is laid
  out member by member: a header (signature, docstring, fields) with the class's kind
  and symbol, one chunk per member definition, recursively;
* a bigger function is cut at statement boundaries into pieces of about
  ``TARGET_CHUNK_BYTES`` (shallowest statements first, nested definitions and blank
  lines preferred); every piece carries the function's kind and symbol;
* module-level statements between definitions are grouped into ``code`` chunks of
  at most ``TARGET_CHUNK_BYTES``; spans under ``MIN_CHUNK_LINES`` lines merge into a
  neighbour (see :func:`scrydb.chunk.assemble.assemble`).
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree
from tree_sitter_language_pack import get_language, get_parser

from scrydb.chunk import assemble as asm
from scrydb.chunk.assemble import Lines, Piece, assemble, pack
from scrydb.chunk.records import Chunk, SymbolDef, budget_clock
from scrydb.chunk.refs import attach_refs, find_refs
from scrydb.chunk.specs import CLASS_KINDS, CONTAINER_KINDS, SYMBOL_ONLY_KINDS, LangSpec

#: Parsing gets this much CPU time (records.budget_clock), plus PARSE_SECONDS_PER_MB per
#: megabyte, before it is cancelled (some grammars take tens of seconds on pathological
#: input); the caller then falls back to windows.
PARSE_SECONDS = 1.0
PARSE_SECONDS_PER_MB = 2.0
#: Nesting of containers laid out member by member; deeper ones are cut like
#: functions (keeps recursion bounded on absurd input).
MAX_LAYOUT_DEPTH = 40
#: Definitions nested deeper than this inside other definitions are not recorded.
MAX_DEF_NESTING = 64
#: ERROR nodes with more children than this are queried child by child.
BIG_ERROR_CHILDREN = 256
#: When cutting a big node, only descend into children at least this big.
DESCEND_BYTES = 256
_READ_BYTES = 1 << 16
_KIND_RANK = {k: 0 for k in CONTAINER_KINDS} | {"function": 1, "method": 1}

_local = threading.local()


class ParseCancelled(Exception):
    """Parsing or querying took longer than its budget."""


def _parser(grammar: str) -> Parser:
    """A parser per grammar and thread (parsers are not thread-safe)."""
    cache: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if cache is None:
        cache = _local.parsers = {}
    parser = cache.get(grammar)
    if parser is None:
        parser = cache[grammar] = get_parser(grammar)  # type: ignore[arg-type]
    return parser


#: grammar -> (language, query, group query); the language must outlive its queries.
_queries: dict[str, tuple[Language, Query, Query | None]] = {}
_queries_lock = threading.Lock()


def _compiled(spec: LangSpec) -> tuple[Language, Query, Query | None]:
    entry = _queries.get(spec.grammar)
    if entry is None:
        with _queries_lock:
            entry = _queries.get(spec.grammar)
            if entry is None:
                lang = get_language(spec.grammar)  # type: ignore[arg-type]
                groups = Query(lang, spec.ref_groups) if spec.ref_groups.strip() else None
                entry = _queries[spec.grammar] = (lang, Query(lang, spec.query_source()), groups)
    return entry


def compiled_query(spec: LangSpec) -> Query:
    """The query of ``spec``: its definitions and references (compiled once per
    process)."""
    return _compiled(spec)[1]


def group_query(spec: LangSpec) -> Query | None:
    """The query of ``spec``'s reference groups (:mod:`scrydb.chunk.refs`), if any."""
    return _compiled(spec)[2]


def parse(grammar: str, src: bytes) -> tuple[Tree, float]:
    """Parse ``src`` within the time budget (:class:`ParseCancelled` past it); return
    the tree and the deadline (:func:`~scrydb.chunk.records.budget_clock`) that the rest of the work keeps."""
    parser = _parser(grammar)
    n = len(src)
    deadline = budget_clock() + PARSE_SECONDS + PARSE_SECONDS_PER_MB * n / 1e6
    # py-tree-sitter (0.26) keeps a reference to every object the read callback returns:
    # a fresh slice per call would keep every parsed file in memory for good. One
    # buffer per thread, refilled on each call, is all it ever holds.
    buf: bytearray | None = getattr(_local, "read_buffer", None)
    if buf is None:
        buf = _local.read_buffer = bytearray()

    def read(offset: int, _point: object) -> bytearray | bytes:
        if offset >= n:
            return b""
        buf[:] = src[offset : offset + _READ_BYTES]
        return buf

    def progress(_offset: int, _has_error: bool) -> bool:
        return budget_clock() > deadline

    try:
        tree = parser.parse(read, progress_callback=progress)
    except ValueError as exc:  # cancelled
        parser.reset()
        raise ParseCancelled(str(exc)) from None
    if tree is None:
        parser.reset()
        raise ParseCancelled("no tree")
    return tree, deadline


def end_row(node: Node) -> int:
    """Last row holding text of ``node`` (a node ending at column 0 ends a row earlier)."""
    row = node.end_point.row
    if node.end_point.column == 0 and row > node.start_point.row:
        row -= 1
    return row


@dataclass(slots=True)
class Def:
    """A definition found in the tree."""

    node: Node
    kind: str
    name: str
    qual: str
    scope: str  #: prefix for the qualified names of what it contains
    row: int  #: 0-based row of its name


def _big_errors(root: Node, deadline: float) -> list[tuple[int, int]]:
    """Byte ranges of ERROR nodes with many children (a cursor walk, time-boxed)."""
    found: list[tuple[int, int]] = []
    cursor = root.walk()
    count = 0
    while True:
        node = cursor.node
        if node is not None and node.is_error and node.child_count > BIG_ERROR_CHILDREN:
            found.append((node.start_byte, node.end_byte))
        count += 1
        if count % 4096 == 0 and budget_clock() > deadline:
            raise ParseCancelled("walk")
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found


def query_captures(query: Query, root: Node, deadline: float) -> dict[str, list[Node]]:
    """The captures of ``query`` under ``root`` by capture name: ``def`` (definitions)
    and the references' (:mod:`scrydb.chunk.refs`), one pass over the tree.

    Query cursors take time quadratic in the size of some error-recovery shapes (an
    ERROR node holding thousands of unmatched brackets: minutes for 1 MB), and a
    progress callback on a query crashes py-tree-sitter 0.26. So a tree with
    errors is first walked for big ERROR nodes, and those (and their ancestors) are
    queried child by child, with the time budget checked in between.
    """
    if not root.has_error:
        return QueryCursor(query).captures(root)
    big = _big_errors(root, deadline)
    if not big:
        return QueryCursor(query).captures(root)
    big.sort()
    starts = [b[0] for b in big]
    out: dict[str, list[Node]] = {}
    stack = [root]
    calls = 0
    while stack:
        node = stack.pop()
        s, e = node.start_byte, node.end_byte
        i = bisect_left(starts, s)
        if i < len(big) and big[i][0] < e and big[i][1] <= e:  # holds a big ERROR
            stack.extend(node.children)
            continue
        for name, nodes in QueryCursor(query).captures(node).items():
            out.setdefault(name, []).extend(nodes)
        calls += 1
        if calls % 1024 == 0 and budget_clock() > deadline:
            raise ParseCancelled("query")
    return out


def find_defs(
    root: Node,
    spec: LangSpec,
    src: bytes,
    deadline: float,
    captures: dict[str, list[Node]] | None = None,
) -> list[Def]:
    """Every definition under ``root`` with its kind and qualified name, in order
    (``captures``: the spec's query already run over ``root``).

    Definitions nested deeper than ``MAX_DEF_NESTING`` inside other definitions are
    ignored (no real code does that; naming one may walk parents, O(depth) each).
    """
    if captures is None:
        captures = query_captures(compiled_query(spec), root, deadline)
    seen: set[tuple[int, int, str]] = set()
    raw: list[tuple[Node, str]] = []
    for node in captures.get("def", ()):
        key = (node.start_byte, node.end_byte, node.type)
        if key in seen:
            continue
        seen.add(key)
        kind = spec.defs.get(node.type)
        if kind is not None and not isinstance(kind, str):
            kind = kind(node, src)
        if kind:
            raw.append((node, kind))
    raw.sort(key=lambda t: (t[0].start_byte, -t[0].end_byte))

    defs: list[Def] = []
    scoped: list[tuple[Def, str]] = []
    stack: list[tuple[int, Def | None]] = []  # (end_byte, def or None if unnamed)
    for node, kind in raw:
        while stack and stack[-1][0] < node.end_byte:
            stack.pop()
        if len(stack) >= MAX_DEF_NESTING:
            continue
        parent = next((d for _, d in reversed(stack) if d is not None), None)
        dotted = spec.name(node, src)
        if not dotted:
            stack.append((node.end_byte, None))
            continue
        scope = parent.scope if parent is not None else ""
        if kind == "function" and parent is not None and parent.kind in CLASS_KINDS:
            kind = "method"
        qual = f"{scope}.{dotted}" if scope else dotted
        name_node = node.child_by_field_name("name")
        row = name_node.start_point.row if name_node is not None else node.start_point.row
        d = Def(node, kind, dotted.rsplit(".", 1)[-1], qual, qual, row)
        if node.type in spec.unqualified:
            d.scope = scope
        defs.append(d)
        # A binding (constant, variable) names no scope: what its value defines is
        # named by its own rules (``const api = {list() {}}`` -> ``api.list``).
        stack.append((node.end_byte, None if kind in SYMBOL_ONLY_KINDS else d))
        if spec.scoped_methods and kind == "function" and "." in dotted:
            scoped.append((d, dotted.rsplit(".", 2)[-2]))

    if scoped:  # C++ ``void Foo::bar() {}`` outside the class is a method of Foo
        classes = {d.name for d in defs if d.kind in CLASS_KINDS}
        for d, owner in scoped:
            if owner in classes or owner[:1].isupper():
                d.kind = "method"
    return defs


class Layout:
    """Turns the statement-level nodes of one tree into :class:`Piece` objects.

    A body item is a definition unit ("anchor") when it is a definition or a wrapper
    (``export``, decorators, ``template <>``) around one; this is found top-down from
    the item, never through ``Node.parent`` (which costs O(depth) in tree-sitter).
    """

    def __init__(self, lines: Lines, spec: LangSpec, defs: list[Def], deadline: float) -> None:
        self.lines = lines
        self.spec = spec
        self.deadline = deadline
        self.items = 0
        self.pieces: list[Piece] = []
        #: (start_byte, end_byte) -> definition, for definitions that form chunks.
        self.defs: dict[tuple[int, int], Def] = {}
        for d in defs:
            if d.kind in SYMBOL_ONLY_KINDS:
                continue
            key = (d.node.start_byte, d.node.end_byte)
            cur = self.defs.get(key)
            if cur is None or _KIND_RANK.get(d.kind, 2) < _KIND_RANK.get(cur.kind, 2):
                self.defs[key] = d
        self.ranges = sorted(self.defs)
        self.starts = [r[0] for r in self.ranges]
        self.container_ranges = sorted(r for r, d in self.defs.items() if d.kind in CONTAINER_KINDS)
        self.container_starts = [r[0] for r in self.container_ranges]
        self.attach = spec.comments | spec.prefixes
        #: Whether the pieces being made lie inside a class-like definition (laid out
        #: member by member): the merge rules keep them apart from free definitions.
        self.in_class = False

    # -- queries -------------------------------------------------------------

    def anchor(self, node: Node) -> Def | None:
        """The definition that ``node`` is, or wraps; None for other items."""
        d = self.defs.get((node.start_byte, node.end_byte))
        if d is not None or node.type not in self.spec.wrappers:
            return d
        found: list[Def] = []
        stack = [(node, 0)]
        while stack:
            n, level = stack.pop()
            for c in n.named_children:
                d = self.defs.get((c.start_byte, c.end_byte))
                if d is not None:
                    found.append(d)
                elif level < 3 and c.type in self.spec.wrappers:
                    stack.append((c, level + 1))
        if not found:
            return None
        return min(found, key=lambda d: (_KIND_RANK.get(d.kind, 2), d.node.start_byte))

    def has_anchor_inside(self, node: Node, containers: bool = False) -> bool:
        """Whether a definition (a class-like one if ``containers``) lies strictly
        inside ``node``."""
        starts = self.container_starts if containers else self.starts
        ranges = self.container_ranges if containers else self.ranges
        s, e = node.start_byte, node.end_byte
        i = bisect_left(starts, s)
        j = bisect_left(starts, e)
        return any(a_e <= e and (a_s, a_e) != (s, e) for a_s, a_e in ranges[i:j])

    def size(self, node: Node) -> int:
        return self.lines.size(node.start_point.row, end_row(node))

    # -- layout --------------------------------------------------------------

    def layout(
        self,
        node: Node,
        kind: str,
        symbol: str | None,
        open_: bool,
        depth: int,
        pending: list[Node] | None = None,
    ) -> None:
        """Lay out the children of ``node`` as items of a body (``pending``: comments
        just above ``node`` that may belong to its first definition)."""
        spec = self.spec
        children = node.children
        pending = list(pending or ())
        last_row = -1
        n = len(children)
        for i, child in enumerate(children):
            e_row = end_row(child)
            if e_row <= last_row:  # on rows already taken (a line holding many items)
                continue
            self.items += 1
            if self.items % 4096 == 0 and budget_clock() > self.deadline:
                raise ParseCancelled("layout")
            t = child.type
            s_row = child.start_point.row
            if t in self.attach:
                if s_row == last_row and t in spec.comments:  # trailing comment
                    self.filler(s_row, e_row, kind, symbol)
                    last_row = e_row
                else:
                    pending.append(child)
                continue
            d = self.anchor(child)
            if d is not None:
                start = self._attach(pending, s_row, kind, symbol)
                pending = []
                self.emit_def(child, d, start, depth, symbol)
                last_row = e_row
                continue
            if (
                depth < MAX_LAYOUT_DEPTH
                and (t in spec.transparent or open_ or self.size(child) > asm.MAX_CHUNK_BYTES)
                and self.has_anchor_inside(child)
            ):
                self.layout(child, kind, symbol, open_, depth + 1, pending)
                pending = []
                last_row = e_row
                continue
            self._flush(pending, kind, symbol)
            pending = []
            if i + 1 < n and (
                children[i + 1].type in spec.transparent or self.anchor(children[i + 1])
            ):
                trailing = self._trailing_comments(child)
                if trailing:
                    pending = trailing
                    e_row = max(s_row, trailing[0].start_point.row - 1)
            if self.lines.size(s_row, e_row) > asm.MAX_CHUNK_BYTES:
                self.split(child, s_row, e_row, kind, symbol, False)
            else:
                self.piece(s_row, e_row, kind, symbol, False, symbol)
            last_row = e_row
        self._flush(pending, kind, symbol)

    def emit_def(self, node: Node, d: Def, start: int, depth: int, group: str | None) -> None:
        """One definition unit (``node`` is the definition or its wrapper, ``start``
        its first row with attached comments): whole, member by member, or cut at
        statements."""
        end = end_row(node)
        inner = d.node
        # A namespace (or a module wrapping classes) is opened whatever its size, so
        # that what it holds, not the wrapper, becomes the chunks.
        wrapper = (d.kind == "namespace" and self.has_anchor_inside(inner)) or (
            d.kind == "module" and self.has_anchor_inside(inner, containers=True)
        )
        if not wrapper and self.lines.size(start, end) <= asm.MAX_CHUNK_BYTES:
            self.piece(start, end, d.kind, d.qual, True, group)
        elif (
            d.kind in CONTAINER_KINDS and depth < MAX_LAYOUT_DEPTH and self.has_anchor_inside(inner)
        ):
            # Comments, decorators, ``export``/``template <>`` before the definition
            # open the header; what the wrapper has after it closes the last member.
            first, last = inner.start_point.row, end_row(inner)
            outer = self.in_class
            self.in_class = outer or d.kind in CLASS_KINDS
            if start < first:
                self.filler(start, first - 1, d.kind, d.qual)
            self.layout(inner, d.kind, d.qual, True, depth + 1)
            if last < end:
                self.filler(last + 1, end, d.kind, d.qual)
            self.in_class = outer
        else:
            self.split(node, start, end, d.kind, d.qual, True)

    def split(
        self, node: Node, start: int, end: int, kind: str, symbol: str | None, unit: bool
    ) -> None:
        """Cut rows ``start..end`` (covering ``node``) at statement boundaries."""
        blank = self.lines.blank
        comments = self.spec.comments
        defs = self.defs
        cands: dict[int, float] = {}
        stack: list[tuple[Node, int]] = [(node, 0)]
        while stack:
            n, depth = stack.pop()
            prev: Node | None = None
            for c in n.children:
                r = c.start_point.row
                if (
                    c.is_named
                    and start < r <= end
                    and not (prev is not None and prev.type in comments and end_row(prev) == r - 1)
                ):
                    score = 2.0 * (depth + 1) - blank[r - 1]
                    if (c.start_byte, c.end_byte) in defs:
                        score -= 2
                    if score < cands.get(r, 1e9):
                        cands[r] = score
                if c.end_byte - c.start_byte > DESCEND_BYTES:
                    stack.append((c, depth + 1))
                prev = c
        for a, b in pack(self.lines, start, end, cands):
            self.piece(a, b, kind, symbol, unit, symbol)

    # -- helpers -------------------------------------------------------------

    def piece(
        self, start: int, end: int, kind: str, symbol: str | None, unit: bool, group: str | None
    ) -> None:
        """Add a piece of rows ``start..end`` (``group``: its enclosing container);
        whether it lies inside a class is the layout's state (``in_class``)."""
        self.pieces.append(
            Piece(start, end, kind, symbol, unit, group=group, in_class=self.in_class)
        )

    def _attach(self, pending: list[Node], row: int, kind: str, symbol: str | None) -> int:
        """Attach the comments/attributes directly above ``row``; flush the rest."""
        start = row
        k = len(pending)
        while k > 0 and start - end_row(pending[k - 1]) <= 1:
            k -= 1
            start = pending[k].start_point.row
        self._flush(pending[:k], kind, symbol)
        return start

    def _flush(self, pending: list[Node], kind: str, symbol: str | None) -> None:
        for c in pending:
            self.filler(c.start_point.row, end_row(c), kind, symbol)

    def filler(self, start: int, end: int, kind: str, symbol: str | None) -> None:
        """Rows that are not a definition (code, comments, a class header), cut by
        lines if they are too big to embed."""
        if self.lines.size(start, end) <= asm.MAX_CHUNK_BYTES:
            self.piece(start, end, kind, symbol, False, symbol)
            return
        for a, b in pack(self.lines, start, end, {}):
            self.piece(a, b, kind, symbol, False, symbol)

    def _trailing_comments(self, node: Node) -> list[Node]:
        """Comments a grammar tucked into the end of ``node`` (Kotlin imports do)."""
        comments = self.spec.comments
        n = node
        for _ in range(4):
            count = n.child_count
            if count == 0:
                return []
            j = count - 1
            found: list[Node] = []
            while j >= 0:
                c = n.child(j)
                if c is None or c.type not in comments:
                    break
                found.append(c)
                j -= 1
            if found:
                before = n.child(j) if j >= 0 else None
                if before is None:
                    return []
                found.reverse()
                if found[0].start_point.row > end_row(before):
                    return found
                return []
            last = n.child(count - 1)
            if last is None:
                return []
            n = last
        return []


def chunk_code(text: str, spec: LangSpec) -> list[Chunk]:
    """Chunk source ``text`` with the tree-sitter grammar of ``spec``."""
    src = text.encode("utf-8", "replace")
    tree, deadline = parse(spec.grammar, src)
    root = tree.root_node
    captures = query_captures(compiled_query(spec), root, deadline)
    defs = find_defs(root, spec, src, deadline, captures)
    lines = Lines(text)
    layout = Layout(lines, spec, defs, deadline)
    layout.layout(root, "code", None, False, 0)
    spans = assemble(lines, layout.pieces, "code")

    defs.sort(key=lambda d: d.row)
    rows = [d.row for d in defs]
    chunks: list[Chunk] = []
    for p in spans:
        i = bisect_left(rows, p.start)
        j = bisect_right(rows, p.end)
        chunk_defs = [SymbolDef(d.name, d.qual, d.kind, d.row + 1) for d in defs[i:j]]
        content = lines.content(p.start, p.end)
        peers = asm.peer_names(p)
        symbol = asm.label_text(peers) if peers else p.symbol
        chunks.append(Chunk(p.start + 1, p.end + 1, p.kind, symbol, content, chunk_defs, peers))
    refs = find_refs(captures, group_query(spec), src, deadline)
    attach_refs(chunks, refs, src, lines.lines)
    return chunks


__all__ = [
    "Def",
    "Layout",
    "ParseCancelled",
    "chunk_code",
    "compiled_query",
    "find_defs",
    "group_query",
    "parse",
    "query_captures",
]
