"""The code graph: who calls a definition, what a definition calls, and every reference
to a name, resolved from the references the chunker stored (table ``refs``) to the
definitions of the symbol table, when asked.

Resolution never invents. A reference's name goes to a definition by scope, strongest
first, and the first rule that finds any candidate decides:

1. ``self.m()`` / ``this.m()``: a method ``m`` of the enclosing class, then of the
   classes it names as bases (confidence 1.0, then 0.9);
2. the same file (1.0);
3. what the file imports: an imported name, or a name reached through an imported
   module (``pkg.f()``), found in the files the import names (0.9);
4. Python: ``x.m()`` where the enclosing definition says what ``x`` is (``x = Foo()``,
   ``x: Foo``, ``with Foo() as x``, ``x = make()`` with ``make() -> Foo`` resolved by the
   rules above at 0.9 or more; ``self.x`` when every binding of it in the file says so):
   ``Foo``'s member or a base's (0.9); nothing when ``Foo`` is a builtin or a class the
   repository does not define;
5. a name with one definition in the repository (0.7);
6. otherwise every candidate, each with confidence 0.5 / n: shown as ambiguous.

Definitions and references are read fresh on every call, so an edit, a rename or a
deleted definition is seen at once: nothing is resolved ahead of time that could go stale.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from scrydb import tokens
from scrydb.chunk.specs import CLASS_KINDS, SYMBOL_ONLY_KINDS
from scrydb.errors import ScryError
from scrydb.paths import parse_target
from scrydb.search import rank
from scrydb.store import Store
from scrydb.store import files as indexed_files
from scrydb.store import graph as g

#: Confidence of each resolution rule (module docstring).
SAME_CLASS = 1.0
BASE_CLASS = 0.9
SAME_FILE = 1.0
IMPORTED = 0.9
UNIQUE = 0.7
TYPED = 0.9
AMBIGUOUS = 0.5
#: Definitions of one name read per lookup, and references of one name per query.
MAX_DEFINITIONS = 200
MAX_REFERENCES = 5000
#: Deepest ``--depth`` for callers and callees.
MAX_DEPTH = 5
#: Qualifiers that mean "this object": the method is the enclosing class's.
SELF_NAMES = frozenset({"self", "this", "cls", "super", "super()", "Self", "@"})
#: Reference kinds that name something called, and the definitions they may reach.
CALL_KINDS = ("call", "decorator")


@dataclass(frozen=True)
class Definition:
    """A definition of the symbol table."""

    path: str
    line: int
    symbol: str  #: qualified name (``Client.send``)
    kind: str
    chunk_id: int = field(default=0, compare=False)
    file_id: int = field(default=0, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form."""
        return {"path": self.path, "line": self.line, "symbol": self.symbol, "kind": self.kind}


@dataclass
class Reference:
    """One reference site: where it is, the definition around it (``symbol``), what it
    names, and what it resolves to (``target``, or ``candidates`` when ambiguous)."""

    path: str
    line: int
    column: int
    symbol: str | None  #: the enclosing definition (qualified), or None at module level
    name: str
    kind: str
    confidence: float
    depth: int = 1
    qualifier: str | None = None
    target: Definition | None = None
    candidates: list[Definition] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form (``path``, ``line``, ``symbol``, ``confidence`` always)."""
        d = asdict(self)
        d["confidence"] = round(self.confidence, 3)
        d["target"] = self.target.to_json() if self.target else None
        d["candidates"] = [c.to_json() for c in self.candidates]
        return d


@dataclass
class RefsResult:
    """``refs``: the definitions of a name and every reference to it."""

    name: str
    definitions: list[Definition]
    references: list[Reference]

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form."""
        return {
            "symbol": self.name,
            "definitions": [d.to_json() for d in self.definitions],
            "references": [r.to_json() for r in self.references],
        }


class UnknownSymbol(ScryError):
    """No definition has this name (or no definition is at that line)."""

    exit_code = 1

    def __init__(self, msg: str, suggestions: list[str]) -> None:
        super().__init__(msg)
        self.suggestions = suggestions


# -- the resolver ---------------------------------------------------------------------


def definition_of(row: g.DefRow) -> Definition:
    """A symbol-table row as a :class:`Definition`."""
    cid, fid, path, _name, qual, kind, line = row
    return Definition(path, line, qual, kind, cid, fid)


class Graph:
    """Resolves references over one store (one query's worth of caches). ``whole``: the
    caller resolves the whole repository (the map), so every indexed path is read once;
    otherwise an import reads only the paths that contain its module's name."""

    def __init__(self, store: Store, whole: bool = False) -> None:
        self.store = store
        self._defs: dict[str, list[Definition]] = {}
        self._imports: dict[int, list[tuple[str, str | None, str | None]]] = {}
        self._chunk_defs: dict[int, list[Definition]] = {}
        self._paths: dict[str, int] | None = None
        self._whole = whole
        self._paths_with: dict[str, dict[str, int]] = {}
        self._path_of: dict[int, str] = {}
        self._modules: dict[tuple[str, str], list[int]] = {}
        self._texts: dict[int, tuple[int, str] | None] = {}
        self._attrs: dict[tuple[int, str], str | None] = {}
        self._file_texts: dict[int, str] = {}
        self._chunk_refs: dict[int, list[g.RefRow]] = {}

    # lookups, cached for the query

    def definitions(self, name: str) -> list[Definition]:
        """Every definition whose normalised name is ``name``'s."""
        norm = tokens.normalise_name(name)
        if norm not in self._defs:
            rows = g.definitions_named(self.store, norm, MAX_DEFINITIONS)
            self._defs[norm] = [definition_of(r) for r in rows]
        return self._defs[norm]

    def chunk_definitions(self, chunk_id: int) -> list[Definition]:
        """The definitions a chunk holds, by line."""
        if chunk_id not in self._chunk_defs:
            rows = g.definitions_of_chunk(self.store, chunk_id)
            self._chunk_defs[chunk_id] = [definition_of(r) for r in rows]
        return self._chunk_defs[chunk_id]

    def enclosing(self, chunk_id: int, line: int) -> Definition | None:
        """The innermost callable or class definition of a chunk at or above ``line``."""
        best = None
        for d in self.chunk_definitions(chunk_id):
            if d.line <= line and d.kind not in SYMBOL_ONLY_KINDS:
                best = d
        return best

    def paths_with(self, text: str) -> dict[str, int]:
        """The indexed paths that contain ``text`` -> their file ids."""
        hit = self._paths_with.get(text)
        if hit is None:
            if self._whole and self._paths is None:
                self._paths = indexed_files.ids_by_path(self.store)
            if self._paths is not None:
                hit = {p: f for p, f in self._paths.items() if text in p}
            else:
                hit = indexed_files.ids_by_path_containing(self.store, text)
            self._paths_with[text] = hit
            self._path_of.update((f, p) for p, f in hit.items())
        return hit

    def module_files(self, module: str, importer: str) -> list[int]:
        """:func:`module_files` over the index, remembered per module and directory."""
        key = (module, posixpath.dirname(importer))
        if key not in self._modules:
            self._modules[key] = module_files(module, importer, self.paths_with)
        return self._modules[key]

    def imports(self, file_id: int) -> list[tuple[str, str | None, str | None]]:
        """(name, module, local alias) of a file's imports."""
        if file_id not in self._imports:
            self._imports[file_id] = g.imports_of_file(self.store, file_id)
        return self._imports[file_id]

    # resolution

    def resolve(self, ref: g.RefRow) -> list[tuple[Definition, float]]:
        """The definitions a reference may name, with the confidence of each (module
        docstring); [] when the name is defined nowhere in the repository."""
        cid, fid, path, name, kind, line, _col, qual, _module = ref
        if kind == "import":
            return []  # an import names a module's member: its uses are what resolve
        if qual is None:  # ``plus()`` after ``import {add as plus}`` names ``add``
            name = next((n for n, _m, a in self.imports(fid) if a == name and n != name), name)
        # The name as written (case and underscores matter: ``Case`` is not ``_case``),
        # one definition per place (overload stubs repeat a name in one file).
        defs = _distinct(
            d for d in self.definitions(name) if _fits(kind, d) and _last(d.symbol) == name
        )
        here = self.enclosing(cid, line)
        if qual is None:  # a bare call names a function or class, never a method
            defs = [d for d in defs if not _is_member(d) or _nested_in(d, here)]
        if not defs:
            return []
        if qual in SELF_NAMES and here is not None:
            found = self._in_class(defs, here, name, skip_own=qual.startswith("super"))
            if found:
                return found
        if qual is None or qual in SELF_NAMES:
            same = [d for d in defs if d.file_id == fid and _top_or_member(d, qual, here)]
            if same:
                return _spread(same, SAME_FILE)
        else:
            same = [d for d in defs if d.file_id == fid and d.symbol == f"{qual}.{name}"]
            if same:
                return _spread(same, SAME_FILE)
        imported = self._imported(defs, fid, path, name, qual)
        if imported:
            return _spread(imported, IMPORTED)
        if qual is not None and qual not in SELF_NAMES and path.endswith((".py", ".pyi")):
            typed = self._typed(defs, cid, fid, line, qual, here, name)
            if typed is not None:
                return typed
        if qual is not None and qual not in SELF_NAMES:
            # ``Foo.bar()`` / ``Foo::new()`` / ``Foo().bar()``: a member of a class named
            # like the qualifier. Any other receiver (``c.send()``, ``msg.encode()``) may
            # be of a type the repository does not define (``str.encode``): every method
            # of that name is a candidate, and the unknown type one more.
            owner = qual.split(".")[-1].removesuffix("()")
            owned = [d for d in defs if d.symbol.split(".")[-2:-1] == [owner]]
            if not owned:
                return [(d, AMBIGUOUS / (len(defs) + 1)) for d in defs]
            defs = owned
        if len(defs) == 1:
            return [(defs[0], UNIQUE)]
        return _spread(defs, AMBIGUOUS)

    def _typed(
        self,
        defs: list[Definition],
        chunk_id: int,
        fid: int,
        line: int,
        qual: str,
        here: Definition | None,
        name: str,
    ) -> list[tuple[Definition, float]] | None:
        """``x.name()`` where the lines of the enclosing definition before the call say
        what ``x`` is (``x = Foo(...)``, ``x: Foo``, ``with Foo() as x``; Python), or
        ``self.x.name()`` where every binding of ``self.x`` in the file says it: the
        member of class ``Foo`` or of its bases (at most TYPED); [] when ``Foo`` is a
        builtin or defined nowhere in the repository (the method is not the repository's);
        None when nothing is known (the other rules decide)."""
        attr = _SELF_ATTR.fullmatch(qual)
        if attr is not None:
            owner = self._attr_type(fid, attr.group(1))
        elif _IDENT.fullmatch(qual):
            got = self.chunk_text(chunk_id)
            if got is None:
                return None
            start, content = got
            first = max(here.line if here is not None else start, start)
            text = "\n".join(content.split("\n")[first - start : line - start])
            owner = local_type(text, qual)
            if owner is None:  # ``x = make()``: what ``make`` says it returns
                owner = self._result_type(chunk_id, first, local_call(text, qual))
        else:
            return None
        if owner is None:
            return None
        classes = [
            d
            for d in self.definitions(owner)
            if d.symbol == owner or d.symbol.endswith("." + owner)
        ]
        if not classes:
            return [] if owner[0].isupper() or owner in _BUILTIN_TYPES else None
        found = [
            (d, min(c, TYPED))
            for cls in classes
            if cls.kind in CLASS_KINDS
            for d, c in self._in_class(defs, cls, name)
        ]
        return found or None

    def _result_type(self, chunk_id: int, first: int, call: tuple[int, str] | None) -> str | None:
        """The class the function called at line ``first`` + ``call[0]`` of the chunk,
        named ``call[1]``, says it returns (``-> Foo``, ``-> "Foo"``, ``-> Optional[Foo]``;
        ``-> Self``: its own class), when the call resolves to it by scope (>= 0.9: the
        same file, an import, the class: a builtin ``open()`` is not the repository's)."""
        if call is None:
            return None
        line, fn = first + call[0], call[1]
        if chunk_id not in self._chunk_refs:
            self._chunk_refs[chunk_id] = g.refs_of_chunk(self.store, chunk_id)
        ref = next((r for r in self._chunk_refs[chunk_id] if r[3] == fn and r[5] == line), None)
        if ref is None or ref[4] not in CALL_KINDS:
            return None
        sure = [d for d, c in self.resolve(ref) if c >= IMPORTED]
        if len(sure) != 1 or sure[0].kind not in _CALLABLE:
            return None
        d = sure[0]
        got = self.chunk_text(d.chunk_id)
        if got is None:
            return None
        start, content = got
        head = "\n".join(content.split("\n")[d.line - start : d.line - start + 10])
        m = _RETURNS.search(head.split(":\n", 1)[0])
        if m is None:
            return None
        return (_class_of(d) or "").rsplit(".", 1)[-1] if m.group(1) == "Self" else m.group(1)

    def _attr_type(self, fid: int, attr: str) -> str | None:
        """The class every binding of ``self.attr`` in the file gives it."""
        key = (fid, attr)
        if key not in self._attrs:
            if fid not in self._file_texts:
                self._file_texts[fid] = "\n".join(g.chunk_texts_of_file(self.store, fid))
            self._attrs[key] = attr_type(self._file_texts[fid], attr)
        return self._attrs[key]

    def chunk_text(self, chunk_id: int) -> tuple[int, str] | None:
        """(start line, content) of a chunk, remembered for the query."""
        if chunk_id not in self._texts:
            self._texts[chunk_id] = g.chunk_text(self.store, chunk_id)
        return self._texts[chunk_id]

    def _in_class(
        self, defs: list[Definition], here: Definition, name: str, skip_own: bool = False
    ) -> list[tuple[Definition, float]]:
        """``self.name`` inside ``here``: the enclosing class's member, then a base's
        (``super().name``: a base's only)."""
        owner = _class_of(here)
        if owner is None:
            return []
        mine = [] if skip_own else [d for d in defs if d.symbol == f"{owner}.{name}"]
        if mine:
            return _spread(mine, SAME_CLASS)
        bases = set()
        for d in self.definitions(owner.split(".")[-1]):
            if d.symbol == owner and d.kind in CLASS_KINDS:
                bases.update(g.inherits_of_chunk(self.store, d.chunk_id))
        inherited = [d for d in defs if _class_of(d) and _class_of(d).split(".")[-1] in bases]  # type: ignore[union-attr]
        return _spread(inherited, BASE_CLASS) if inherited else []

    def _imported(
        self, defs: list[Definition], fid: int, path: str, name: str, qual: str | None
    ) -> list[Definition]:
        """Definitions of ``name`` in the files the file at ``path`` imports it from (or
        imports the module ``qual`` it is reached through from)."""
        head = (qual or "").split(".")[0] if qual and qual not in SELF_NAMES else None
        files: set[int] = set()
        for imp_name, module, alias in self.imports(fid):
            # A bare name is its own import; ``mod.f()`` goes through the import of ``mod``.
            if (alias or imp_name) == (head if head is not None else name):
                files.update(self.module_files(module or imp_name, path))
                if head is not None and imp_name == head and module:
                    # ``from pkg import mod`` then ``mod.f()``: f lives in pkg/mod
                    files.update(self.module_files(f"{module}.{imp_name}", path))
        found = [d for d in defs if d.file_id in files]
        if not found and files:  # a package re-exports it: ``from .mod import f`` there
            found = [d for d in defs if d.file_id in self._reexported(files, name)]
        return found

    def _reexported(self, files: set[int], name: str) -> set[int]:
        """The files that ``files`` import ``name`` from (one hop: a package's
        ``__init__`` or index module that re-exports what its modules define)."""
        out: set[int] = set()
        for fid in files:  # (every id in ``files`` came from paths_with)
            for imp_name, module, alias in self.imports(fid):
                if (alias or imp_name) == name or imp_name == "*":
                    out.update(self.module_files(module or imp_name, self._path_of.get(fid, "")))
        return out


_IDENT = re.compile(r"[A-Za-z_]\w*")
#: Builtin types: a method called on one is not the repository's.
_BUILTIN_TYPES = frozenset(
    {"str", "bytes", "int", "float", "bool", "list", "dict", "set", "tuple", "frozenset",
     "bytearray", "object", "type", "complex"}
)  # fmt: skip
#: ``x = Foo(`` / ``x = await mod.Foo(`` at a line's start (a class by Python's naming:
#: capitalised; a keyword argument ``f(x=Foo())`` binds nothing)
_ASSIGNED = r"(?m)^[ \t]*{v}\s*(?::[^=\n]*)?=\s*(?:await\s+)?(?:[A-Za-z_]\w*\.)*([A-Z]\w*)\s*\("
#: ``x: Foo`` / ``x: "Foo"`` / ``x: Optional[Foo]`` / ``x: mod.Foo`` (a parameter or a
#: variable; not ``lambda x:``)
_ANNOTATED = (
    r"(?<![\w.])(?<!lambda ){v}\s*:\s*[\"']?(?:Optional\[)?(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)"
    r"(?![\w.\[])"
)
#: any later binding (``x = other()``) forgets what ``x`` was
_REBOUND = r"(?m)^[ \t]*{v}\s*(?::[^=\n]*)?=(?!=)"
#: ``with Foo(...) as x`` / ``async with mod.Foo(...) as x``
_WITH = r"\bwith\s+(?:[A-Za-z_]\w*\.)*([A-Z]\w*)\s*\([^\n]*\)\s+as\s+{v}\b"


#: a function's return annotation (its signature up to the body's ``:``)
_RETURNS = re.compile(r"->\s*[\"']?(?:Optional\[)?(?:[A-Za-z_]\w*\.)*([A-Z]\w*)(?![\w.\[])")
_CALLABLE = frozenset({"function", "method"})
#: ``x = make(`` / ``x = await mod.make(`` / ``with mod.make(...) as x``: a function's result
_CALLED = r"(?m)^[ \t]*{v}\s*=\s*(?:await\s+)?(?:[A-Za-z_]\w*\.)*([a-z_]\w*)\s*\("
_WITH_CALLED = r"\bwith\s+(?:[A-Za-z_]\w*\.)*([a-z_]\w*)\s*\([^\n]*\)\s+as\s+{v}\b"


def local_call(text: str, var: str) -> tuple[int, str] | None:
    """(line within ``text``, 0-based; name) of the function whose result the last
    binding of ``var`` in ``text`` is (``x = make()``, ``with open_it() as x``); None
    when there is none or a later binding is something else."""
    v = re.escape(var)
    best: tuple[int, int] | None = None  # (match start, start of the name)
    for pattern in (_CALLED, _WITH_CALLED):
        for m in re.finditer(pattern.format(v=v), text):
            if best is None or m.start() > best[0]:
                best = (m.start(), m.start(1))
    if best is None:
        return None
    later = [m.start() for m in re.finditer(_REBOUND.format(v=v), text)]
    if later and later[-1] > best[0]:
        return None
    name = _IDENT.match(text, best[1])
    return (text.count("\n", 0, best[1]), name.group(0)) if name else None


def local_type(text: str, var: str, rebound: bool = True) -> str | None:
    """The class the last binding of ``var`` in ``text`` gives it (Python source): a
    capitalised constructor call assigned or opened with ``with ... as``, or an
    annotation (a builtin type's lower-case name too); None when there is none, or
    (``rebound``) when a later binding says something else."""
    v = re.escape(var)
    best: tuple[int, str] | None = None
    for pattern in (_ASSIGNED, _ANNOTATED, _WITH):
        for m in re.finditer(pattern.format(v=v), text):
            if best is None or m.start() > best[0]:
                best = (m.start(), m.group(1))
    if best is None:
        return None
    later = [m.start() for m in re.finditer(_REBOUND.format(v=v), text)]
    if rebound and later and later[-1] > best[0]:  # ``x = x.copy()`` after ``x = Foo()``
        return None
    owner = best[1]
    return owner if owner[0].isupper() or owner in _BUILTIN_TYPES else None


_SELF_ATTR = re.compile(r"self\.([A-Za-z_]\w*)")
#: every binding of ``self.x`` and what it is bound to
_SELF_BOUND = r"(?m)^[ \t]*self\.{v}\s*(?::[^=\n]*)?=(?!=)[ \t]*([^\n]*)"
_SELF_ANNOTATED = (
    r"\bself\.{v}\s*:\s*[\"']?(?:Optional\[)?(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)(?![\w.\[])"
)


def attr_type(text: str, attr: str) -> str | None:
    """The one class that every binding of ``self.attr`` in ``text`` (a Python file)
    gives it: a constructor call, an annotation, or a parameter annotated with it
    (``self.store = store`` after ``store: Store``); ``None`` bindings aside. None when
    a binding says nothing or two disagree."""
    v = re.escape(attr)
    owners = set(re.findall(_SELF_ANNOTATED.format(v=v), text))
    for rhs in re.findall(_SELF_BOUND.format(v=v), text):
        rhs = rhs.strip()
        if rhs.startswith("None"):
            continue
        if _IDENT.fullmatch(rhs):  # a parameter: its annotation
            owner = local_type(text, rhs, rebound=False)
        else:
            owner = local_type(f"{attr} = {rhs}", attr)
        if owner is None:
            return None
        owners.add(owner)
    if len(owners) != 1:
        return None
    (owner,) = owners
    return owner if owner[0].isupper() or owner in _BUILTIN_TYPES else None


def _last(symbol: str) -> str:
    return symbol.rsplit(".", 1)[-1]


def _distinct(defs: Iterable[Definition]) -> list[Definition]:
    """One definition per (file, qualified name): ``@overload`` stubs and TypeScript
    overload signatures are one function."""
    seen: dict[tuple[str, str], Definition] = {}
    for d in defs:
        seen.setdefault((d.path, d.symbol), d)
    return list(seen.values())


def _is_member(d: Definition) -> bool:
    """A definition inside a class-like container (a method, a nested class)."""
    return d.kind == "method" or ("." in d.symbol and d.kind not in CLASS_KINDS)


def _nested_in(d: Definition, here: Definition | None) -> bool:
    """A function defined inside the definition the call is in (a closure)."""
    return here is not None and d.symbol.startswith(here.symbol + ".") and d.kind != "method"


def _fits(kind: str, d: Definition) -> bool:
    """Whether a definition can be what a reference of ``kind`` names."""
    if kind in CALL_KINDS:
        return d.kind not in SYMBOL_ONLY_KINDS
    if kind == "inherit":
        return d.kind in CLASS_KINDS or d.kind in ("type", "protocol")
    return True


def _class_of(d: Definition) -> str | None:
    """The qualified class a member definition belongs to (``Client`` of ``Client.send``;
    a class's own name for a class)."""
    if d.kind in CLASS_KINDS:
        return d.symbol
    head, _, _ = d.symbol.rpartition(".")
    return head or None


def _top_or_member(d: Definition, qual: str | None, here: Definition | None) -> bool:
    """A bare call names a top-level function or class of the file (or a nested one of
    the enclosing definition); ``self.m()`` a member (handled before)."""
    if qual is not None:
        return False
    head = d.symbol.rpartition(".")[0]
    return not head or (here is not None and here.symbol.startswith(head))


def _spread(defs: list[Definition], confidence: float) -> list[tuple[Definition, float]]:
    """Candidates of one rule: the rule's confidence when one, shared when several."""
    if len(defs) == 1:
        return [(defs[0], confidence)]
    return [(d, min(confidence, AMBIGUOUS) / len(defs)) for d in defs]


_SOURCE_EXTS = (
    ".py", ".pyi", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".go", ".rs", ".java",
    ".kt", ".cs", ".rb", ".php", ".c", ".h", ".cc", ".cpp", ".hpp", ".hh", ".swift", ".scala",
)  # fmt: skip


def module_files(
    module: str,
    importer: str,
    paths: Mapping[str, int] | Callable[[str], Mapping[str, int]],
) -> list[int]:
    """The file ids an import's module names, read the ways languages write them: a
    relative path (``./util``, ``../x``, Python's ``.mod``), a dotted or ``::`` module
    (``pkg.sub``, ``crate::a::b``), a package path (``github.com/x/y``), a header
    (``x.h``); an exact file first, then a package's index/``__init__``/``mod`` file, then
    every file of a directory (Go packages). ``paths``: every indexed path -> its id, or
    a function giving the paths that contain a text (each match contains its stem)."""
    m = module.strip().strip("\"'<>")
    if not m:
        return []
    base = posixpath.dirname(importer)
    if m.startswith("."):
        if "/" in m:  # ./util, ../lib/x
            stems = [posixpath.normpath(posixpath.join(base, m))]
        else:  # Python: .mod, ..pkg.mod
            dots = len(m) - len(m.lstrip("."))
            up = base
            for _ in range(dots - 1):
                up = posixpath.dirname(up)
            rest = m[dots:].replace(".", "/")
            stems = [posixpath.join(up, rest) if rest else up]
    else:
        parts = m.replace("::", "/").replace("\\", "/")
        for prefix in ("crate/", "self/", "super/", "@/", "~/"):
            if parts.startswith(prefix):
                parts = parts[len(prefix) :]
        if "/" in parts:  # a package path from some root: its tails, longest first
            segs = parts.strip("/").split("/")
            stems = ["/".join(segs[i:]) for i in range(len(segs))]
        else:
            stems = [parts, parts.replace(".", "/")]
    for stem in dict.fromkeys(stems):
        stem = stem.strip("/")
        if not stem:
            continue
        probe = _probe(stem)
        near = paths(probe) if callable(paths) else paths
        hits = _files_for(stem, {p: f for p, f in near.items() if stem in p})
        if hits:
            return hits
    return []


def _probe(stem: str) -> str:
    """A part of ``stem`` that every path it names contains, shared by the stems of one
    module (``m`` of ``pkg.m`` and ``pkg/m``; ``server`` of each tail of a Go package
    path), so one scan of the paths serves them all."""
    last = re.split(r"[/.]", stem)[-1]
    if len(last) >= 3:
        return last
    return stem.rsplit("/", 1)[-1]


def _files_for(stem: str, paths: Mapping[str, int]) -> list[int]:
    """Indexed files a module stem names: ``stem`` itself or with a source extension,
    its package file, or the files of a directory of that name; matched as a path suffix
    (an import names a module from some root the index does not know)."""

    def ends(p: str, tail: str) -> bool:
        return p == tail or p.endswith("/" + tail)

    exact = [fid for p, fid in paths.items() if ends(p, stem)]
    if exact:
        return exact
    for ext in _SOURCE_EXTS:
        hit = [fid for p, fid in paths.items() if ends(p, stem + ext)]
        if hit:
            return hit
    for index in ("__init__.py", "index.ts", "index.tsx", "index.js", "mod.rs", "lib.rs"):
        hit = [fid for p, fid in paths.items() if ends(p, f"{stem}/{index}")]
        if hit:
            return hit
    return [
        fid
        for p, fid in paths.items()
        if ends(posixpath.dirname(p), stem) and p.endswith(_SOURCE_EXTS)
    ]


# -- the three questions -----------------------------------------------------------------


def find_definitions(store: Store, target: str) -> list[Definition]:
    """The definitions ``target`` names: ``NAME`` / ``Class.name`` / ``a::b`` (every
    definition of that name, narrowed by the qualifier when given), or ``FILE:LINE`` (the
    innermost definition around that line). An unknown one is :class:`UnknownSymbol`,
    with close names suggested."""
    gr = Graph(store)
    t = target.strip()
    if not t:
        raise ScryError("empty symbol: name a definition, e.g. scry callers parse_config")
    path, line, _end = parse_target(t)
    if line is not None and indexed_files.has(store, path):
        at = g.chunk_at(store, path, line)
        here = gr.enclosing(at[0], line) if at else None
        if here is None:
            raise UnknownSymbol(f"no definition at {path}:{line}", [])
        return [here]
    parts = [p for p in t.replace("::", ".").replace("#", ".").strip("()").split(".") if p]
    if not parts:
        raise ScryError(f"not a symbol: {target!r}")
    defs = gr.definitions(parts[-1])
    if len(parts) > 1:
        want = ".".join(parts)
        qualified = [d for d in defs if d.symbol == want or d.symbol.endswith("." + want)]
        defs = qualified or [d for d in defs if d.symbol.split(".")[-2:-1] == parts[-2:-1]]
    if not defs:
        raise UnknownSymbol(
            f"no definition named {target!r} in the index", _suggest(store, parts[-1])
        )
    return defs


def _suggest(store: Store, name: str) -> list[str]:
    from scrydb.search.query import analyse
    from scrydb.search.weak import suggest

    return suggest(store, analyse(name))


def callers(store: Store, target: str, depth: int = 1) -> tuple[list[Definition], list[Reference]]:
    """The definitions ``target`` names and the references that call them, nearest
    first (``depth`` > 1: the callers of those callers too, each row's ``depth`` says)."""
    _check_depth(depth)
    gr = Graph(store)
    roots = find_definitions(store, target)
    out: list[Reference] = []
    seen: set[tuple[str, int, int]] = set()
    frontier = roots
    for level in range(1, depth + 1):
        nxt: list[Definition] = []
        for d in frontier:
            for ref in _refs_to(store, d.symbol.split(".")[-1]):
                if ref[4] not in CALL_KINDS and ref[4] != "inherit":
                    continue
                res = gr.resolve(ref)
                conf = next((c for t, c in res if t == d), None)
                key = (ref[2], ref[5], ref[6])
                if conf is None or key in seen:
                    continue
                seen.add(key)
                row = _reference(gr, ref, level, res)
                row.confidence = conf  # of this definition (the others are candidates)
                out.append(row)
                here = gr.enclosing(ref[0], ref[5])
                if here is not None:
                    nxt.append(here)
        frontier = list(dict.fromkeys(nxt))
        if not frontier:
            break
    return roots, out


def callees(store: Store, target: str, depth: int = 1) -> tuple[list[Definition], list[Reference]]:
    """What the definitions ``target`` names call (references inside them, resolved;
    ``depth`` > 1: what those call too)."""
    _check_depth(depth)
    gr = Graph(store)
    roots = find_definitions(store, target)
    out: list[Reference] = []
    seen_defs: set[Definition] = set()
    frontier = roots
    for level in range(1, depth + 1):
        nxt: list[Definition] = []
        for d in frontier:
            if d in seen_defs:
                continue
            seen_defs.add(d)
            for ref in _refs_inside(gr, d):
                if ref[4] not in CALL_KINDS:
                    continue
                res = gr.resolve(ref)
                out.append(_reference(gr, ref, level, res))
                nxt.extend(t for t, c in res if c >= UNIQUE)
        frontier = list(dict.fromkeys(nxt))
        if not frontier:
            break
    return roots, out


def called_chunks(store: Store, chunk_ids: Iterable[int]) -> set[int]:
    """The chunks that the calls in ``chunk_ids`` resolve to (confidence >= UNIQUE; a
    chunk's calls into itself left out): what those chunks call, for the ranker."""
    gr = Graph(store)
    out: set[int] = set()
    for cid in chunk_ids:
        for ref in g.refs_of_chunk(store, cid):
            if ref[4] in CALL_KINDS:
                out.update(
                    t.chunk_id for t, c in gr.resolve(ref) if c >= UNIQUE and t.chunk_id != cid
                )
    return out


def connected_votes(store: Store, cands: dict[int, rank.Candidate]) -> None:
    """The ranker's graph vote (rank.CONNECTED_VOTE): candidates that a strong hit (both
    legs rank it in their top rank.STRONG_RANK) calls, by this module's resolution: the
    helper a matching function hands its work to often answers the question with it."""
    strong = [
        cid
        for cid, c in cands.items()
        if c.lex_rank is not None
        and c.lex_rank <= rank.STRONG_RANK
        and c.dense_rank is not None
        and c.dense_rank <= rank.STRONG_RANK
    ]
    if not strong:
        return
    for cid in called_chunks(store, strong):
        c = cands.get(cid)
        if c is not None:
            c.votes["connected"] = rank.CONNECTED_VOTE


def refs(store: Store, target: str) -> RefsResult:
    """The definitions ``target`` names and every reference resolved to one of them
    (calls, imports of the name, bases, type uses, decorators); a reference whose
    resolution is ambiguous is listed with its candidates and a lower confidence."""
    gr = Graph(store)
    defs = find_definitions(store, target)
    name = defs[0].symbol.split(".")[-1]
    out: list[Reference] = []
    for ref in _refs_to(store, name):
        if ref[4] == "import":
            mods = gr.module_files(ref[8] or ref[3], ref[2])
            if any(d.file_id in mods for d in defs):
                out.append(
                    _reference(gr, ref, 1, [(d, IMPORTED) for d in defs if d.file_id in mods])
                )
            continue
        res = gr.resolve(ref)
        if any(t in defs for t, _c in res):
            out.append(_reference(gr, ref, 1, res))
    return RefsResult(target, defs, out)


def _refs_to(store: Store, name: str) -> list[g.RefRow]:
    """The references that may name ``name``: by that name, and by the local alias of a
    file that imports it under another (``import {add as plus}``: that file's ``plus``)."""
    norm = tokens.normalise_name(name)
    out = list(g.refs_named(store, norm, MAX_REFERENCES))
    for fid, alias in g.aliases_of(store, name, norm):
        out += [
            r
            for r in g.refs_named(store, tokens.normalise_name(alias), MAX_REFERENCES)
            if r[1] == fid and r[4] != "import"
        ]
    return out


def _refs_inside(gr: Graph, d: Definition) -> list[g.RefRow]:
    """The references in a definition's own lines: from its line to the next definition
    of its chunk that is not nested in it (a chunk may hold several small ones)."""
    span = g.chunk_span(gr.store, d.chunk_id)
    if span is None:
        return []
    end = span[1]
    for other in gr.chunk_definitions(d.chunk_id):
        if other.line > d.line and not other.symbol.startswith(d.symbol + "."):
            if other.kind not in SYMBOL_ONLY_KINDS:
                end = other.line - 1
                break
    return [r for r in g.refs_of_chunk(gr.store, d.chunk_id) if d.line <= r[5] <= end]


def _reference(
    gr: Graph, ref: g.RefRow, depth: int, resolved: Iterable[tuple[Definition, float]]
) -> Reference:
    cid, _fid, path, name, kind, line, col, qual, _module = ref
    res = list(resolved)
    here = gr.enclosing(cid, line)
    row = Reference(
        path=path,
        line=line,
        column=col,
        symbol=here.symbol if here else None,
        name=name,
        kind=kind,
        confidence=max((c for _d, c in res), default=0.0),
        depth=depth,
        qualifier=qual,
    )
    if len(res) == 1 and res[0][1] >= UNIQUE:
        row.target = res[0][0]
    elif res:  # ambiguous, or a receiver whose type may not be in the repository
        row.candidates = [d for d, _c in res]
    return row


def _check_depth(depth: int) -> None:
    if isinstance(depth, bool) or not 1 <= int(depth) <= MAX_DEPTH:
        raise ScryError(f"depth must be 1 to {MAX_DEPTH}, not {depth!r}")
