"""The records the chunkers produce: a :class:`Chunk` (a retrievable unit of a file), the
:class:`SymbolDef` definitions it holds and the :class:`Ref` references it makes. The
rules they keep are the package's contract (:mod:`scrydb.chunk`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from scrydb.chunk.specs.base import SYMBOL_ONLY_KINDS


@dataclass(slots=True)
class SymbolDef:
    """A definition found by the parser (goes into the ``symbols`` table)."""

    name: str  #: bare name, e.g. ``send``
    qualname: str  #: qualified name, e.g. ``Client.send``
    kind: str  #: function, method, class, struct, interface, enum, trait, type, ...
    line: int  #: 1-based line of the definition (of its name)


#: What a :class:`Ref` can be: a call (``f()``, ``obj.m()``, ``new Foo()``,
#: ``println!``), an imported name, a base class or implemented interface (``extends``,
#: ``implements``, ``impl Trait for``, a Go embedded field, a Ruby ``include``), a type
#: used in an annotation or declaration (primitive types are left out), a decorator,
#: annotation or attribute.
REF_KINDS = ("call", "import", "inherit", "type", "decorator")


@dataclass(frozen=True, slots=True)
class Ref:
    """A reference a chunk makes to a name defined elsewhere (or in the same file),
    as written: nothing here is resolved (see :mod:`scrydb.chunk` for the rules)."""

    #: the referenced name, last component: ``send`` of ``self.client.send(...)``,
    #: ``Path`` of ``pathlib.Path``, ``println!`` of a Rust macro; for an import the
    #: imported name (``c`` of ``from a.b import c as d``, ``default`` of a JS default
    #: import, ``*`` of a wildcard or namespace import)
    name: str
    kind: str  #: one of :data:`REF_KINDS`
    line: int  #: 1-based line of the name
    column: int  #: 1-based column of the name, in characters
    #: what the name was reached through, as written (line breaks, comments, string
    #: contents, call arguments, subscripts and generic arguments dropped): ``self``,
    #: ``this``, ``client``, ``self.client``, ``os.path``, ``Foo`` (``Foo::new``),
    #: ``a.b()`` (``a.b().c()``), ``""`` (``", ".join``); ``…`` starts one whose
    #: beginning was not read (a long receiver); None for a bare name
    qualifier: str | None = None
    #: for an import: the module or path imported from (``pkg.sub``, ``..pkg``,
    #: ``./util``, ``github.com/x/y``, ``std::fmt``, ``java.util``, ``x/y.h``), else None
    module: str | None = None
    #: for an import: the local name it is bound to when that differs from ``name``
    #: (``d`` of ``import c as d``, ``x`` of ``import x from``, a Go package alias), else
    #: None; the file calls the import by ``alias or name``
    alias: str | None = None


@dataclass(slots=True)
class Chunk:
    """A retrievable unit of a file."""

    start_line: int
    end_line: int
    kind: str  #: function, method, class, ..., section (markdown), block (window), code
    #: qualified symbol of the chunk's main definition, if any; ``"A, B"`` when small
    #: peer definitions were merged into one chunk (``kind`` is then the biggest one's)
    symbol: str | None
    content: str
    defs: list[SymbolDef] = field(default_factory=list)
    #: the definitions ``symbol`` names when it names several (``["A", "B"]``), else []
    peers: list[str] = field(default_factory=list)
    #: the references whose name lies in the chunk's lines, in source order (at most
    #: ``MAX_REFS_PER_CHUNK`` of :mod:`scrydb.chunk.refs`); tree-sitter chunks only
    refs: list[Ref] = field(default_factory=list)

    def index_names(self) -> list[str]:
        """The chunk's symbols for the lexical index: the one or several its label
        names, then every other definition it holds, except a class's fields and
        constants (``TRPCError.code``): they are symbols (identifier queries find them
        through the symbol table) but not what the class's chunk is about, and in the
        BM25 symbol column they lifted class chunks over the functions a question asked
        for (`scry eval`, all sets, fused MRR@10: with them 0.742, without 0.744)."""
        named = self.peers or ([self.symbol] if self.symbol else [])
        return named + [
            d.qualname for d in self.defs if d.qualname not in named and not _member_binding(d)
        ]


def _member_binding(d: SymbolDef) -> bool:
    """A constant or variable defined inside a class-like container (a field)."""
    return d.kind in SYMBOL_ONLY_KINDS and "." in d.qualname


def budget_clock() -> float:
    """The clock of the chunker's time budgets (parse, queries, references): the calling
    thread's CPU seconds, not the wall clock. The budgets guard against input a grammar
    takes seconds of work on; measured on the wall clock, a busy machine (a starved
    process) tripped them too, so the same file chunked two ways (found by
    tests/fuzz/chunk.py at nice 19 on a loaded machine, issue 46)."""
    return time.thread_time()
