"""Chunking: a file's text -> a list of :class:`Chunk` (function/class-level where a
tree-sitter grammar exists, headings for Markdown, blank-line-snapped windows elsewhere).

Contract (relied on by the store, search, ``read`` and ``related``):

* chunks are sorted, do not overlap, and every non-blank line of the file lies in
  exactly one chunk;
* ``start_line``/``end_line`` are 1-based and inclusive; ``content`` is exactly those
  lines of the file joined by ``\\n`` (no trailing newline; a ``\\r`` before it stays);
* ``chunk_file`` never raises on any input text: a parse failure (or a parse past its
  time budget) falls back to windows.

Layout of the package: this module is the contract (and re-exports what callers use);
:mod:`~scrydb.chunk.records` the :class:`Chunk`, :class:`SymbolDef` and :class:`Ref`
records; :mod:`~scrydb.chunk.refs` the references read from the same query as the
definitions, :mod:`~scrydb.chunk.reftext` how their text reads (qualifiers, paths);
:mod:`~scrydb.chunk.dispatch` :func:`chunk_file`, which picks a chunker per language;
:mod:`~scrydb.chunk.specs` the per-language table (definition node types, names,
comments); :mod:`~scrydb.chunk.code` the tree-sitter chunker;
:mod:`~scrydb.chunk.text` Markdown/reST/TOML/YAML and windows;
:mod:`~scrydb.chunk.assemble` sizes, cutting and the merge rules, with the limits
``MAX_CHUNK_BYTES`` (a definition up to this stays whole), ``TARGET_CHUNK_BYTES`` (size
aimed at when cutting) and ``MIN_CHUNK_LINES`` (shorter spans join a neighbour).

Rules worth knowing when reading results:

* comments, docstrings, decorators and attributes directly above a definition (no
  blank line in between) belong to its chunk;
* a big class-like definition becomes a header chunk (kind of the class, e.g.
  ``class``) plus one chunk per member; a big function is cut at statements, every
  piece keeping the function's kind and symbol;
* ``Chunk.kind`` is one of function, method, class, struct, interface, enum, trait,
  impl, object, union, module, namespace, type, macro, property (definitions), code
  (module-level statements), section (Markdown/reST), block (windows, TOML, YAML);
  ``SymbolDef.kind`` uses the same words plus constant and variable (module- and
  class-level bindings: assignments, ``const``/``let``/``var``, fields, exported values;
  recorded as symbols only, never a local of a function);
* ``SymbolDef.line`` is the line of the definition's name (after its decorators);
  every definition, nested or not, is in the ``defs`` of the chunk holding that line.
* a chunk into which small neighbours were merged is named by all the definitions it
  holds side by side (``symbol`` ``"ConsoleError, MarkupError"``, ``kind`` the biggest
  one's); members under their class's header leave the class's name alone. A search
  whose query names one of them shows that one (``scrydb.search.engine``);
* a class (or any part of one) and a function outside every class never share a
  chunk: a small function appended after a class stands alone or joins a free
  neighbour (``scrydb.chunk.assemble.can_merge``).

References (``Chunk.refs``) are read for Python, JavaScript, TypeScript/TSX, Go, Rust,
Java, C#, C, C++ (and CUDA), Ruby, PHP, Kotlin, Swift and Scala; chunks of the other
grammars (Bash, Lua, Elixir, Haskell, Julia, Solidity) and text chunks have none:

* a :class:`Ref` is a name the chunk refers to, as written and unresolved: ``name``
  (the last component: ``send`` of ``self.client.send()``), ``kind`` (one of
  ``REF_KINDS``: call, import, inherit, type, decorator), ``line`` and ``column``
  (1-based, the column in characters, at the name), ``qualifier`` (what the name was
  reached through: ``self``, ``self.client``, ``os.path``, ``Foo`` of ``Foo::new()``,
  ``a.b()`` of ``a.b().c()``; None for a bare name), and for an import ``module``
  (``a.b``, ``..pkg``, ``./util``, ``github.com/x/y``, ``std::fmt``) and ``alias``
  (the local name when it differs: the file uses an import as ``alias or name``);
* a chunk holds the references whose name lies in its lines, in source order: a
  call in a nested function belongs to the chunk holding that line, module-level
  code's to the ``code`` chunk around it; at most ``MAX_REFS_PER_CHUNK``
  (:mod:`scrydb.chunk.refs`) each;
* definitions' own names are no references, nor are builtin types (``int``, ``str``,
  ``string``, ``i32``: :data:`scrydb.chunk.refs.BUILTIN_TYPES` and the grammars'
  primitive types); where a name is captured twice the stronger kind wins
  (import, decorator, inherit, call, type);
* types are read where the grammar marks a type: annotations, parameters, return
  types, fields (C#, C, C++: not a cast or a template argument), every type name
  elsewhere; calls include ``new Foo()`` (name ``Foo``) and Rust macros
  (``println!``); Go embedded fields, ``impl Trait for``, Ruby ``include`` and Rust
  ``#[derive(...)]`` are ``inherit``;
* extraction that runs past the parse's time budget stops, and the chunks keep the
  references found so far (never a fallback to windows for it).
"""

from scrydb.chunk.dispatch import CHUNKER_VERSION, chunk_file, looks_like_cpp
from scrydb.chunk.records import REF_KINDS, Chunk, Ref, SymbolDef

__all__ = [
    "CHUNKER_VERSION",
    "REF_KINDS",
    "Chunk",
    "Ref",
    "SymbolDef",
    "chunk_file",
    "looks_like_cpp",
]
