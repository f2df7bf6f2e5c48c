"""Per-language table for the tree-sitter chunker: one :class:`LangSpec` per language.

A spec names, for one grammar of tree-sitter-language-pack 0.13:

* ``defs``: node types that define something -> kind (``function`` becomes ``method``
  when its nearest enclosing definition is class-like); a callable refines the kind
  from the node (Go ``type_spec`` -> struct/interface/type) or returns None to skip;
* ``patterns``: extra query patterns capturing ``@def`` for definitions that a node
  type alone cannot tell (``const handler = () => {}``), their kinds in ``defs`` too;
* ``wrappers``: node types whose whole span belongs to the definition inside them
  (``export``, decorators, ``template <...>``, ``const x = ...``);
* ``comments`` and ``prefixes`` (attributes/decorators that are siblings of the
  definition they annotate): attached to the next definition when directly above it;
* ``transparent``: non-definition nodes whose children are laid out as top-level
  items (``#ifdef`` blocks, ``extern "C" {}``);
* ``unqualified``: definitions that do not prefix the qualified names of what they
  contain (C#/PHP namespaces, Kotlin companion objects);
* ``name``: how to read a definition's name (dotted for qualified names);
* ``refs``: query patterns capturing the references (calls, imports, bases, types,
  decorators), tags-style, and ``ref_groups``: those whose captures belong together
  (an import's name, module and alias), run on the ``@group`` nodes ``refs`` captures;
  :mod:`scrydb.chunk.refs` says what each capture name means and :mod:`.references`
  holds them.

Node types were read from real parse trees of this grammar version; ``tests/
test_chunk.py`` checks that every spec's query compiles.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tree_sitter import Node

Kind = str | Callable[[Node, bytes], str | None]
NameFn = Callable[[Node, bytes], str | None]

#: Kinds whose member functions are methods and whose bodies are split per member.
CLASS_KINDS = frozenset(
    {"class", "struct", "interface", "enum", "trait", "impl", "object", "union"}
)
#: Kinds laid out member by member when too big (class-like plus namespaces).
CONTAINER_KINDS = CLASS_KINDS | {"module", "namespace"}
#: Kinds recorded as symbols only: they never form a chunk of their own, nor a scope
#: (a method in ``const api = {...}`` is ``api.list``, named by its own rules).
#: Module- and class-level bindings: constants, variables, fields, exported values.
SYMBOL_ONLY_KINDS = frozenset({"constant", "variable"})


def text_of(node: Node | None, src: bytes) -> str:
    """The source text of ``node`` (empty for None)."""
    if node is None:
        return ""
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_SPACES = re.compile(r"\s+")


def clean_name(name: str) -> str:
    """Normalise a qualified name: ``::``/``\\``/``:``/``->`` become ``.``, generics
    and whitespace are dropped."""
    for _ in range(4):
        stripped = _TEMPLATE_ARGS.sub("", name)
        if stripped == name:
            break
        name = stripped
    name = _SPACES.sub("", name)
    for sep in ("::", "\\", "->", ":"):
        name = name.replace(sep, ".")
    return name.strip(".")


def field_name(fld: str = "name") -> NameFn:
    """Name from the child in field ``fld``."""

    def name(node: Node, src: bytes) -> str | None:
        return clean_name(text_of(node.child_by_field_name(fld), src)) or None

    return name


def first_child_name(*types: str) -> NameFn:
    """Name from the first named child of one of ``types`` (grammars without fields)."""

    def name(node: Node, src: bytes) -> str | None:
        for child in node.named_children:
            if child.type in types:
                return clean_name(text_of(child, src)) or None
        return None

    return name


def by_type(table: Mapping[str, NameFn], default: NameFn) -> NameFn:
    """Dispatch the name function on the node type."""

    def name(node: Node, src: bytes) -> str | None:
        return table.get(node.type, default)(node, src)

    return name


def own_text(node: Node, src: bytes) -> str | None:
    """Name from the node's own text (a captured identifier: a binding's target)."""
    return clean_name(text_of(node, src)) or None


def by_case(name: str) -> str:
    """The kind of a module- or class-level binding where the language has no
    ``const`` keyword to tell: ``constant`` for an UPPER_CASE name, else ``variable``."""
    return "constant" if name.isupper() else "variable"


@dataclass(frozen=True, slots=True)
class LangSpec:
    """How to find and name definitions in one tree-sitter grammar."""

    grammar: str
    defs: Mapping[str, Kind]
    comments: frozenset[str]
    name: NameFn = field(default_factory=field_name)
    patterns: str = ""
    pattern_types: frozenset[str] = frozenset()
    wrappers: frozenset[str] = frozenset()
    prefixes: frozenset[str] = frozenset()
    transparent: frozenset[str] = frozenset()
    unqualified: frozenset[str] = frozenset()
    #: C++-style ``Foo::bar`` definitions outside the class are methods of ``Foo``.
    scoped_methods: bool = False
    refs: str = ""
    ref_groups: str = ""

    def query_source(self) -> str:
        """The tree-sitter query capturing every definition as ``@def``, then the
        references (one query: one pass over the tree finds both)."""
        plain = sorted(t for t in self.defs if t not in self.pattern_types)
        alts = " ".join(f"({t})" for t in plain)
        return (f"[{alts}] @def\n" if plain else "") + self.patterns + "\n" + self.refs
