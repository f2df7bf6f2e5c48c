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
* ``name``: how to read a definition's name (dotted for qualified names).

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
#: Kinds recorded as symbols only: they never form a chunk of their own.
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


def const_name(fn: NameFn) -> NameFn:
    """Keep only UPPER_CASE names (module-level constants)."""

    def name(node: Node, src: bytes) -> str | None:
        n = fn(node, src)
        return n if n and n.isupper() and n.replace("_", "").isalnum() else None

    return name


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

    def query_source(self) -> str:
        """The tree-sitter query capturing every definition as ``@def``."""
        plain = sorted(t for t in self.defs if t not in self.pattern_types)
        alts = " ".join(f"({t})" for t in plain)
        return (f"[{alts}] @def\n" if plain else "") + self.patterns


# --------------------------------------------------------------------------- Python

PYTHON = LangSpec(
    grammar="python",
    defs={
        "function_definition": "function",
        "class_definition": "class",
        "assignment": "constant",
    },
    patterns="(module (assignment left: (identifier)) @def)",
    pattern_types=frozenset({"assignment"}),
    name=by_type({"assignment": const_name(field_name("left"))}, field_name()),
    comments=frozenset({"comment"}),
    wrappers=frozenset({"decorated_definition"}),
)

# ---------------------------------------------------------------- JavaScript / TS


def _js_member_name(node: Node, src: bytes) -> str | None:
    """``module.exports.x`` -> ``x``; ``Foo.prototype.bar`` -> ``Foo.bar``."""
    parts = clean_name(text_of(node, src)).split(".")
    drop = {"module", "exports", "prototype", "this", "window", "self", "globalThis"}
    kept = [p for p in parts if p not in drop]
    return ".".join(kept) or None


def _js_object_owner(node: Node, src: bytes) -> str:
    """For a method in an object literal: the name the object is bound to, if any."""
    obj = node.parent
    names: list[str] = []
    for _ in range(8):
        if obj is None or obj.type != "object":
            break
        owner = obj.parent
        if owner is None:
            break
        if owner.type == "variable_declarator":
            names.append(text_of(owner.child_by_field_name("name"), src))
            break
        if owner.type == "pair":
            names.append(text_of(owner.child_by_field_name("key"), src))
            obj = owner.parent
            continue
        if owner.type == "assignment_expression":
            names.append(_js_member_name(owner.child_by_field_name("left"), src) or "")
        break
    return ".".join(clean_name(n.strip("'\"")) for n in reversed(names) if n)


def _js_name(node: Node, src: bytes) -> str | None:
    t = node.type
    if t == "variable_declarator" and _js_declarator_kind(node, src) == "constant":
        return const_name(field_name())(node, src)
    if t == "assignment_expression":
        return _js_member_name(node.child_by_field_name("left"), src)
    if t == "pair":
        key = clean_name(text_of(node.child_by_field_name("key"), src).strip("'\"[]"))
        owner = _js_object_owner(node, src)
        return f"{owner}.{key}" if owner and key else key or None
    name = node.child_by_field_name("name")
    if t == "method_definition" and node.parent is not None and node.parent.type == "object":
        owner = _js_object_owner(node, src)
        base = clean_name(text_of(name, src))
        return f"{owner}.{base}" if owner and base else base or None
    if name is None:
        parent = node.parent
        return "default" if parent is not None and parent.type == "export_statement" else None
    return clean_name(text_of(name, src).strip("'\"")) or None


_JS_FUNCTIONS = frozenset({"arrow_function", "function_expression", "generator_function"})


def _js_declarator_kind(node: Node, src: bytes) -> str | None:
    """``const f = () => {}`` is a function; a top-level ``const LIMIT = 3`` a constant."""
    value = node.child_by_field_name("value")
    if value is not None and value.type in _JS_FUNCTIONS:
        return "function"
    name = node.child_by_field_name("name")
    if value is not None and name is not None and name.type == "identifier":
        return "constant"  # only top-level declarations reach here, see _JS_PATTERNS
    return None


def _js_assignment_kind(node: Node, src: bytes) -> str:
    left = node.child_by_field_name("left")
    if left is not None and b".prototype." in src[left.start_byte : left.end_byte]:
        return "method"
    return "function"


_JS_FUNC_VALUES = "[(arrow_function) (function_expression) (generator_function)]"
_JS_PATTERNS = f"""
(variable_declarator value: {_JS_FUNC_VALUES}) @def
(program (lexical_declaration "const" (variable_declarator) @def))
(program (export_statement (lexical_declaration "const" (variable_declarator) @def)))
(assignment_expression left: (member_expression) right: {_JS_FUNC_VALUES}) @def
(pair value: {_JS_FUNC_VALUES}) @def
(export_statement value: [(function_expression) (arrow_function) (class)] @def)
"""
_JS_DEFS: dict[str, Kind] = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "method_definition": "method",
    "variable_declarator": _js_declarator_kind,
    "assignment_expression": _js_assignment_kind,
    "pair": "method",
    "function_expression": "function",
    "arrow_function": "function",
    "class": "class",
}
_JS_PATTERN_TYPES = frozenset(
    {
        "variable_declarator",
        "assignment_expression",
        "pair",
        "function_expression",
        "arrow_function",
        "class",
    }
)
_JS_WRAPPERS = frozenset(
    {"export_statement", "lexical_declaration", "variable_declaration", "expression_statement"}
)

JAVASCRIPT = LangSpec(
    grammar="javascript",
    defs=_JS_DEFS,
    patterns=_JS_PATTERNS,
    pattern_types=_JS_PATTERN_TYPES,
    name=_js_name,
    comments=frozenset({"comment"}),
    wrappers=_JS_WRAPPERS,
    prefixes=frozenset({"decorator"}),
)

_TS_DEFS: dict[str, Kind] = {
    **_JS_DEFS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
    "module": "module",
    "function_signature": "function",
    "method_signature": "method",
    "abstract_method_signature": "method",
}
TYPESCRIPT = LangSpec(
    grammar="typescript",
    defs=_TS_DEFS,
    patterns=_JS_PATTERNS,
    pattern_types=_JS_PATTERN_TYPES,
    name=_js_name,
    comments=frozenset({"comment"}),
    wrappers=_JS_WRAPPERS | {"ambient_declaration"},
    prefixes=frozenset({"decorator"}),
)
TSX = LangSpec(
    grammar="tsx",
    defs=_TS_DEFS,
    patterns=_JS_PATTERNS,
    pattern_types=_JS_PATTERN_TYPES,
    name=_js_name,
    comments=frozenset({"comment"}),
    wrappers=_JS_WRAPPERS | {"ambient_declaration"},
    prefixes=frozenset({"decorator"}),
)

# ------------------------------------------------------------------------------ Go


def _go_type_kind(node: Node, src: bytes) -> str:
    t = node.child_by_field_name("type")
    if t is not None and t.type == "struct_type":
        return "struct"
    if t is not None and t.type == "interface_type":
        return "interface"
    return "type"


def _go_receiver_type(node: Node, src: bytes) -> str:
    recv = node.child_by_field_name("receiver")
    if recv is None:
        return ""
    for param in recv.named_children:
        if param.type == "parameter_declaration":
            t = text_of(param.child_by_field_name("type"), src)
            t = t.lstrip("*").split("[", 1)[0]
            return clean_name(t)
    return ""


def _go_name(node: Node, src: bytes) -> str | None:
    name = clean_name(text_of(node.child_by_field_name("name"), src))
    if not name:
        return None
    if node.type == "method_declaration":
        recv = _go_receiver_type(node, src)
        return f"{recv}.{name}" if recv else name
    return name


GO = LangSpec(
    grammar="go",
    defs={
        "function_declaration": "function",
        "method_declaration": "method",
        "type_spec": _go_type_kind,
        "type_alias": "type",
        "const_spec": "constant",
        "var_spec": "variable",
    },
    patterns="""
(source_file (const_declaration (const_spec) @def))
(source_file (var_declaration (var_spec) @def))
""",
    pattern_types=frozenset({"const_spec", "var_spec"}),
    name=_go_name,
    comments=frozenset({"comment"}),
    wrappers=frozenset({"type_declaration"}),
)

# ---------------------------------------------------------------------------- Rust


def _rust_type_name(node: Node | None, src: bytes) -> str:
    for _ in range(6):
        if node is None:
            return ""
        if node.type in ("generic_type", "reference_type", "pointer_type"):
            node = node.child_by_field_name("type")
            continue
        if node.type == "scoped_type_identifier":
            node = node.child_by_field_name("name")
            continue
        return clean_name(text_of(node, src))
    return ""


def _rust_name(node: Node, src: bytes) -> str | None:
    if node.type == "impl_item":
        return _rust_type_name(node.child_by_field_name("type"), src) or None
    return clean_name(text_of(node.child_by_field_name("name"), src)) or None


RUST = LangSpec(
    grammar="rust",
    defs={
        "function_item": "function",
        "function_signature_item": "function",
        "struct_item": "struct",
        "union_item": "struct",
        "enum_item": "enum",
        "trait_item": "trait",
        "impl_item": "impl",
        "mod_item": "module",
        "macro_definition": "macro",
        "type_item": "type",
        "const_item": "constant",
        "static_item": "constant",
    },
    name=_rust_name,
    comments=frozenset({"line_comment", "block_comment"}),
    prefixes=frozenset({"attribute_item"}),
)

# ---------------------------------------------------------------------------- Java

JAVA = LangSpec(
    grammar="java",
    defs={
        "class_declaration": "class",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "record_declaration": "class",
        "annotation_type_declaration": "interface",
        "method_declaration": "function",
        "constructor_declaration": "method",
        "compact_constructor_declaration": "method",
    },
    comments=frozenset({"line_comment", "block_comment"}),
)

# ------------------------------------------------------------------------ C / C++

_C_NAME_LEAVES = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "qualified_identifier",
        "operator_name",
        "destructor_name",
        "template_function",
        "primitive_type",
    }
)


def _c_declarator_name(node: Node, src: bytes) -> str | None:
    d: Node | None = node.child_by_field_name("declarator")
    for _ in range(16):
        if d is None:
            return None
        if d.type in _C_NAME_LEAVES:
            return clean_name(text_of(d, src)) or None
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            nxt = next(
                (
                    c
                    for c in d.named_children
                    if c.type.endswith("declarator") or c.type in _C_NAME_LEAVES
                ),
                None,
            )
        d = nxt
    return None


def _c_tag_name(node: Node, src: bytes) -> str | None:
    """``struct S {}``; an anonymous one takes its typedef's name."""
    name = node.child_by_field_name("name")
    if name is not None:
        return clean_name(text_of(name, src)) or None
    parent = node.parent
    if parent is not None and parent.type == "type_definition":
        return _c_declarator_name(parent, src)
    return None


def _c_tag_kind(kind: str) -> Callable[[Node, bytes], str | None]:
    """Only tags with a body define something (``struct S;`` does not)."""

    def k(node: Node, src: bytes) -> str | None:
        return kind if node.child_by_field_name("body") is not None else None

    return k


def _c_typedef_kind(node: Node, src: bytes) -> str | None:
    t = node.child_by_field_name("type")
    if t is not None and t.child_by_field_name("body") is not None:
        return None  # the struct/enum itself is the definition
    return "type"


def _c_name(node: Node, src: bytes) -> str | None:
    t = node.type
    if t in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier"):
        return _c_tag_name(node, src)
    if t in ("function_definition", "type_definition"):
        return _c_declarator_name(node, src)
    return clean_name(text_of(node.child_by_field_name("name"), src)) or None


_C_DEFS: dict[str, Kind] = {
    "function_definition": "function",
    "struct_specifier": _c_tag_kind("struct"),
    "union_specifier": _c_tag_kind("union"),
    "enum_specifier": _c_tag_kind("enum"),
    "type_definition": _c_typedef_kind,
    "preproc_def": "macro",
    "preproc_function_def": "macro",
}
_C_TRANSPARENT = frozenset(
    {"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "linkage_specification"}
)

C = LangSpec(
    grammar="c",
    defs=_C_DEFS,
    name=_c_name,
    comments=frozenset({"comment"}),
    wrappers=frozenset({"declaration", "type_definition"}),
    transparent=_C_TRANSPARENT | {"declaration_list"},
)

_CPP_DEFS: dict[str, Kind] = {
    **_C_DEFS,
    "class_specifier": _c_tag_kind("class"),
    "namespace_definition": "namespace",
    "alias_declaration": "type",
    "concept_definition": "type",
}
CPP = LangSpec(
    grammar="cpp",
    defs=_CPP_DEFS,
    name=_c_name,
    comments=frozenset({"comment"}),
    wrappers=frozenset(
        {"template_declaration", "declaration", "field_declaration", "type_definition"}
    ),
    transparent=_C_TRANSPARENT | {"declaration_list"},
    scoped_methods=True,
)
CUDA = LangSpec(
    grammar="cuda",
    defs=_CPP_DEFS,
    name=_c_name,
    comments=frozenset({"comment"}),
    wrappers=frozenset(
        {"template_declaration", "declaration", "field_declaration", "type_definition"}
    ),
    transparent=_C_TRANSPARENT | {"declaration_list"},
    scoped_methods=True,
)

# ------------------------------------------------------------------------------ C#

CSHARP = LangSpec(
    grammar="csharp",
    defs={
        "class_declaration": "class",
        "struct_declaration": "struct",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "record_declaration": "class",
        "delegate_declaration": "type",
        "method_declaration": "function",
        "constructor_declaration": "method",
        "destructor_declaration": "method",
        "operator_declaration": "method",
        "property_declaration": "property",
        "indexer_declaration": "property",
        "event_declaration": "property",
        "local_function_statement": "function",
        "namespace_declaration": "namespace",
        "file_scoped_namespace_declaration": "namespace",
    },
    name=by_type(
        {
            "indexer_declaration": lambda n, s: "this",
            "operator_declaration": lambda n, s: (
                "operator" + text_of(n.child_by_field_name("operator"), s)
            ),
            "destructor_declaration": lambda n, s: "~" + text_of(n.child_by_field_name("name"), s),
        },
        field_name(),
    ),
    comments=frozenset({"comment"}),
    unqualified=frozenset({"namespace_declaration", "file_scoped_namespace_declaration"}),
    transparent=frozenset({"preproc_if", "preproc_region"}),
)

# ---------------------------------------------------------------------------- Ruby

RUBY = LangSpec(
    grammar="ruby",
    defs={
        "method": "function",
        "singleton_method": "function",
        "class": "class",
        "module": "module",
    },
    comments=frozenset({"comment"}),
)

# ----------------------------------------------------------------------------- PHP

PHP = LangSpec(
    grammar="php",
    defs={
        "function_definition": "function",
        "method_declaration": "function",
        "class_declaration": "class",
        "interface_declaration": "interface",
        "trait_declaration": "trait",
        "enum_declaration": "enum",
        "namespace_definition": "namespace",
    },
    comments=frozenset({"comment"}),
    prefixes=frozenset({"attribute_list"}),
    unqualified=frozenset({"namespace_definition"}),
)

# -------------------------------------------------------------------------- Kotlin


def _kotlin_class_kind(node: Node, src: bytes) -> str:
    for child in node.children:
        if child.type == "interface":
            return "interface"
        if child.type == "enum":
            return "enum"
        if child.type in ("type_identifier", "class_body"):
            break
    return "class"


def _kotlin_name(node: Node, src: bytes) -> str | None:
    t = node.type
    if t == "companion_object":
        return first_child_name("type_identifier")(node, src) or "Companion"
    if t == "secondary_constructor":
        return "constructor"
    if t == "function_declaration":
        base = first_child_name("simple_identifier")(node, src)
        recv = node.child_by_field_name("receiver")
        if base and recv is not None:
            return f"{clean_name(text_of(recv, src))}.{base}"
        return base
    return first_child_name("type_identifier", "simple_identifier")(node, src)


KOTLIN = LangSpec(
    grammar="kotlin",
    defs={
        "class_declaration": _kotlin_class_kind,
        "object_declaration": "object",
        "companion_object": "object",
        "function_declaration": "function",
        "secondary_constructor": "method",
        "type_alias": "type",
    },
    name=_kotlin_name,
    comments=frozenset({"line_comment", "multiline_comment"}),
    unqualified=frozenset({"companion_object"}),
)

# --------------------------------------------------------------------------- Swift

_SWIFT_DECL_KINDS = {
    "class": "class",
    "struct": "struct",
    "enum": "enum",
    "extension": "impl",
    "actor": "class",
}


def _swift_class_kind(node: Node, src: bytes) -> str:
    k = node.child_by_field_name("declaration_kind")
    return _SWIFT_DECL_KINDS.get(k.type if k is not None else "", "class")


SWIFT = LangSpec(
    grammar="swift",
    defs={
        "class_declaration": _swift_class_kind,
        "protocol_declaration": "interface",
        "function_declaration": "function",
        "protocol_function_declaration": "method",
        "init_declaration": "method",
        "deinit_declaration": "method",
        "subscript_declaration": "method",
        "typealias_declaration": "type",
    },
    name=by_type(
        {
            "init_declaration": lambda n, s: "init",
            "deinit_declaration": lambda n, s: "deinit",
            "subscript_declaration": lambda n, s: "subscript",
        },
        field_name(),
    ),
    comments=frozenset({"comment", "multiline_comment"}),
)

# --------------------------------------------------------------------------- Scala

SCALA = LangSpec(
    grammar="scala",
    defs={
        "class_definition": "class",
        "object_definition": "object",
        "trait_definition": "trait",
        "enum_definition": "enum",
        "function_definition": "function",
        "function_declaration": "function",
        "type_definition": "type",
        "given_definition": "constant",
    },
    comments=frozenset({"comment", "block_comment"}),
)

# ---------------------------------------------------------------------------- Bash

BASH = LangSpec(
    grammar="bash",
    defs={"function_definition": "function"},
    comments=frozenset({"comment"}),
)

# ----------------------------------------------------------------------------- Lua


def _lua_kind(node: Node, src: bytes) -> str:
    name = node.child_by_field_name("name")
    return "method" if name is not None and name.type == "method_index_expression" else "function"


def _lua_name(node: Node, src: bytes) -> str | None:
    if node.type == "assignment_statement":
        targets = node.named_children[0] if node.named_children else None
        first = (
            targets.named_children[0] if targets is not None and targets.named_children else None
        )
        return clean_name(text_of(first, src)) or None
    return clean_name(text_of(node.child_by_field_name("name"), src)) or None


LUA = LangSpec(
    grammar="lua",
    defs={"function_declaration": _lua_kind, "assignment_statement": "function"},
    patterns="""
(assignment_statement (variable_list . (_)) (expression_list . (function_definition))) @def
""",
    pattern_types=frozenset({"assignment_statement"}),
    name=_lua_name,
    comments=frozenset({"comment"}),
    wrappers=frozenset({"variable_declaration"}),
)

# -------------------------------------------------------------------------- Elixir

_EX_FUNCS = ("def", "defp", "defmacro", "defmacrop", "defguard", "defguardp", "defdelegate")
_EX_MODULES = ("defmodule", "defprotocol", "defimpl")


def _ex_kind(node: Node, src: bytes) -> str | None:
    target = text_of(node.child_by_field_name("target"), src)
    if target in _EX_FUNCS:
        return "macro" if target.startswith("defmacro") else "function"
    return "module" if target in _EX_MODULES else None


def _ex_name(node: Node, src: bytes) -> str | None:
    args = next((c for c in node.named_children if c.type == "arguments"), None)
    head = args.named_children[0] if args is not None and args.named_children else None
    for _ in range(4):  # def f(x) when g(x) -> f; def f(x) -> f; def f -> f
        if head is None:
            return None
        if head.type == "binary_operator":
            head = head.child_by_field_name("left")
        elif head.type == "call":
            head = head.child_by_field_name("target")
        else:
            return clean_name(text_of(head, src)) or None
    return None


# No text predicates (#any-of?) in queries: trees parsed from a read callback (for the
# time budget) keep no source, and py-tree-sitter 0.26 crashes evaluating them; the
# kind function filters the calls instead.
ELIXIR = LangSpec(
    grammar="elixir",
    defs={"call": _ex_kind},
    patterns="(call target: (identifier) (arguments)) @def",
    pattern_types=frozenset({"call"}),
    name=_ex_name,
    comments=frozenset({"comment"}),
    prefixes=frozenset({"unary_operator"}),  # @doc, @spec, @impl
)

# ------------------------------------------------------------------------- Haskell

HASKELL = LangSpec(
    grammar="haskell",
    defs={
        "function": "function",
        "bind": "function",
        "data_type": "type",
        "newtype": "type",
        "type_synomym": "type",
        "type_family": "type",
        "class": "interface",
        "instance": "impl",
    },
    comments=frozenset({"comment", "haddock"}),
    prefixes=frozenset({"signature", "pragma"}),
    transparent=frozenset({"declarations"}),
)

# --------------------------------------------------------------------------- Julia


_JULIA_WRAPPED_NAMES = frozenset(
    {
        "call_expression",
        "where_expression",
        "typed_expression",
        "binary_expression",
        "parametrized_type_expression",
    }
)


def _julia_name(node: Node, src: bytes) -> str | None:
    head: Node | None
    if node.type in ("function_definition", "macro_definition"):
        sig = next((c for c in node.named_children if c.type == "signature"), None)
        head = sig.named_children[0] if sig is not None and sig.named_children else None
    elif node.type == "assignment":
        head = node.named_children[0] if node.named_children else None
    elif node.type in ("struct_definition", "abstract_definition"):
        th = next((c for c in node.named_children if c.type == "type_head"), None)
        head = th.named_children[0] if th is not None and th.named_children else None
    else:
        return clean_name(text_of(node.child_by_field_name("name"), src)) or None
    for _ in range(4):
        if head is None:
            return None
        if head.type in _JULIA_WRAPPED_NAMES:  # f(x), f(x) where T, f(x)::T, P <: Q, P{T}
            head = head.named_children[0] if head.named_children else None
        else:
            return clean_name(text_of(head, src)) or None
    return None


JULIA = LangSpec(
    grammar="julia",
    defs={
        "function_definition": "function",
        "assignment": "function",
        "macro_definition": "macro",
        "struct_definition": "struct",
        "abstract_definition": "type",
        "module_definition": "module",
    },
    patterns="(assignment . (call_expression)) @def",
    pattern_types=frozenset({"assignment"}),
    name=_julia_name,
    comments=frozenset({"line_comment", "block_comment"}),
    prefixes=frozenset({"string_literal"}),  # docstrings sit right above
)

# ------------------------------------------------------------------------ Solidity

SOLIDITY = LangSpec(
    grammar="solidity",
    defs={
        "contract_declaration": "class",
        "interface_declaration": "interface",
        "library_declaration": "class",
        "struct_declaration": "struct",
        "enum_declaration": "enum",
        "function_definition": "function",
        "modifier_definition": "function",
        "constructor_definition": "method",
        "fallback_receive_definition": "method",
        "error_declaration": "type",
        "event_definition": "type",
    },
    name=by_type(
        {
            "constructor_definition": lambda n, s: "constructor",
            "fallback_receive_definition": lambda n, s: (
                "receive" if b"receive" in s[n.start_byte : n.end_byte][:40] else "fallback"
            ),
        },
        field_name(),
    ),
    comments=frozenset({"comment"}),
)

#: Language id (see :mod:`scrydb.langs`) -> spec.
SPECS: dict[str, LangSpec] = {
    "python": PYTHON,
    "javascript": JAVASCRIPT,
    "typescript": TYPESCRIPT,
    "tsx": TSX,
    "go": GO,
    "rust": RUST,
    "java": JAVA,
    "c": C,
    "cpp": CPP,
    "cuda": CUDA,
    "csharp": CSHARP,
    "ruby": RUBY,
    "php": PHP,
    "kotlin": KOTLIN,
    "swift": SWIFT,
    "scala": SCALA,
    "bash": BASH,
    "lua": LUA,
    "starlark": PYTHON,  # BUILD/WORKSPACE files: Python syntax
    "elixir": ELIXIR,
    "haskell": HASKELL,
    "julia": JULIA,
    "solidity": SOLIDITY,
}
