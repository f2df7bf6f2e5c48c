"""Specs of the scripting languages: Python (and Starlark), JavaScript, TypeScript, TSX,
Ruby, PHP, Bash, Lua, Elixir, Julia."""

from __future__ import annotations

from dataclasses import replace

from tree_sitter import Node

from scrydb.chunk.specs.base import (
    Kind,
    LangSpec,
    by_case,
    by_type,
    clean_name,
    field_name,
    own_text,
    text_of,
)
from scrydb.chunk.specs.references import (
    JAVASCRIPT_GROUPS,
    JAVASCRIPT_REFS,
    PHP_GROUPS,
    PHP_REFS,
    PYTHON_GROUPS,
    PYTHON_REFS,
    RUBY_GROUPS,
    RUBY_REFS,
    TYPESCRIPT_GROUPS,
    TYPESCRIPT_REFS,
)

# --------------------------------------------------------------------------- Python


def _py_binding_kind(node: Node, src: bytes) -> str | None:
    """A module- or class-level assignment target: ``constant`` or ``variable`` by its
    case; ``_`` and dunders (``__all__``, ``__slots__``: protocol, not names) are none."""
    name = text_of(node, src)
    if name == "_" or (name.startswith("__") and name.endswith("__")):
        return None
    return by_case(name)


#: The targets of an assignment that bind names: ``x = ``, ``x: int = ``, ``x: int``,
#: ``a, b = `` and ``(a, b) = `` (not ``obj.attr = `` or ``d[k] = ``).
_PY_TARGETS = (
    "[(identifier) @def (pattern_list (identifier) @def) (tuple_pattern (identifier) @def)]"
)
_PY_ASSIGN = f"(assignment left: {_PY_TARGETS})"
#: Module-level assignments, also under a module-level ``if``/``try`` (``if
#: TYPE_CHECKING:``, ``try: import x; HAS_X = True``), and class-level ones; never an
#: assignment inside a function.
_PY_PATTERNS = f"""
(module {_PY_ASSIGN})
(module (if_statement consequence: (block {_PY_ASSIGN})))
(module (if_statement alternative: (elif_clause consequence: (block {_PY_ASSIGN}))))
(module (if_statement alternative: (else_clause body: (block {_PY_ASSIGN}))))
(module (try_statement body: (block {_PY_ASSIGN})))
(module (try_statement (except_clause (block {_PY_ASSIGN}))))
(module (try_statement (else_clause body: (block {_PY_ASSIGN}))))
(class_definition body: (block {_PY_ASSIGN}))
"""

PYTHON = LangSpec(
    grammar="python",
    defs={
        "function_definition": "function",
        "class_definition": "class",
        "identifier": _py_binding_kind,
    },
    patterns=_PY_PATTERNS,
    pattern_types=frozenset({"identifier"}),
    name=by_type({"identifier": own_text}, field_name()),
    comments=frozenset({"comment"}),
    wrappers=frozenset({"decorated_definition"}),
    refs=PYTHON_REFS,
    ref_groups=PYTHON_GROUPS,
)

# ---------------------------------------------------------------- JavaScript / TS


def _js_member_name(node: Node | None, src: bytes) -> str | None:
    """``module.exports.x`` -> ``x``; ``Foo.prototype.bar`` -> ``Foo.bar``."""
    if node is None:
        return None
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
    if t == "field_definition":  # JS class field: ``count = 0``, ``static #n = 1``
        return clean_name(text_of(node.child_by_field_name("property"), src).lstrip("#")) or None
    if t == "public_field_definition":  # TS class field
        return clean_name(text_of(node.child_by_field_name("name"), src).lstrip("#")) or None
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
    """``const f = () => {}`` is a function; a top-level ``const LIMIT = 3`` a constant
    and ``let``/``var`` a variable (only top-level declarators reach here with another
    value, see _JS_PATTERNS); a destructuring pattern is none."""
    value = node.child_by_field_name("value")
    if value is not None and value.type in _JS_FUNCTIONS:
        return "function"
    name = node.child_by_field_name("name")
    if name is None or name.type != "identifier":
        return None
    decl = node.parent
    keyword = decl.child(0) if decl is not None else None
    return "constant" if keyword is not None and keyword.type == "const" else "variable"


#: The export objects an assignment to a member of defines an exported value.
_JS_EXPORTS = (b"exports.", b"module.exports.")


def _js_assignment_kind(node: Node, src: bytes) -> str | None:
    """``Foo.prototype.bar = function`` is a method, ``obj.run = () =>`` a function;
    ``exports.limit = 3`` (top level, see _JS_PATTERNS) an exported variable."""
    left = node.child_by_field_name("left")
    right = node.child_by_field_name("right")
    lhs = src[left.start_byte : left.end_byte] if left is not None else b""
    if right is not None and right.type not in _JS_FUNCTIONS:
        return "variable" if lhs.startswith(_JS_EXPORTS) else None
    if b".prototype." in lhs:
        return "method"
    return "function"


def _js_field_kind(node: Node, src: bytes) -> str:
    """A class field: ``static MAX = 3`` a constant by its case, else a variable."""
    name = node.child_by_field_name("property") or node.child_by_field_name("name")
    return by_case(text_of(name, src).lstrip("#"))


_JS_FUNC_VALUES = "[(arrow_function) (function_expression) (generator_function)]"
#: Top-level declarations (``const``, ``let``, ``var``, plain or exported) and
#: ``exports.x = ...``: module-level bindings; never one inside a function.
_JS_DECLARATIONS = """[
  (lexical_declaration (variable_declarator) @def)
  (variable_declaration (variable_declarator) @def)
]"""
_JS_PATTERNS = f"""
(variable_declarator value: {_JS_FUNC_VALUES}) @def
(program {_JS_DECLARATIONS})
(program (export_statement declaration: {_JS_DECLARATIONS}))
(assignment_expression left: (member_expression) right: {_JS_FUNC_VALUES}) @def
(program (expression_statement (assignment_expression left: (member_expression)) @def))
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
    defs={**_JS_DEFS, "field_definition": _js_field_kind},
    patterns=_JS_PATTERNS,
    pattern_types=_JS_PATTERN_TYPES,
    name=_js_name,
    comments=frozenset({"comment"}),
    wrappers=_JS_WRAPPERS,
    prefixes=frozenset({"decorator"}),
    refs=JAVASCRIPT_REFS,
    ref_groups=JAVASCRIPT_GROUPS,
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
    "public_field_definition": _js_field_kind,
}
TYPESCRIPT = LangSpec(
    grammar="typescript",
    defs=_TS_DEFS,
    # ``declare const VERSION: string``: a module-level binding too.
    patterns=_JS_PATTERNS + f"(program (ambient_declaration {_JS_DECLARATIONS}))\n",
    pattern_types=_JS_PATTERN_TYPES,
    name=_js_name,
    comments=frozenset({"comment"}),
    wrappers=_JS_WRAPPERS | {"ambient_declaration"},
    prefixes=frozenset({"decorator"}),
    refs=TYPESCRIPT_REFS,
    ref_groups=TYPESCRIPT_GROUPS,
)
#: TSX is TypeScript with JSX: the same spec over the tsx grammar (derived, never copied).
TSX = replace(TYPESCRIPT, grammar="tsx")

# ---------------------------------------------------------------------------- Ruby

RUBY = LangSpec(
    grammar="ruby",
    defs={
        "method": "function",
        "singleton_method": "function",
        "class": "class",
        "module": "module",
        "assignment": "constant",
    },
    # ``VERSION = "1"`` in a file, module or class (Ruby refuses one inside a method).
    patterns="(assignment left: (constant)) @def",
    pattern_types=frozenset({"assignment"}),
    name=by_type({"assignment": field_name("left")}, field_name()),
    comments=frozenset({"comment"}),
    refs=RUBY_REFS,
    ref_groups=RUBY_GROUPS,
)

# ----------------------------------------------------------------------------- PHP


def _php_name(node: Node, src: bytes) -> str | None:
    t = node.type
    if t == "const_element":  # ``const MAX = 3;`` (no name field)
        first = next((c for c in node.named_children if c.type == "name"), None)
        return clean_name(text_of(first, src)) or None
    if t == "property_element":  # ``public $name;``: named without the ``$``
        var = node.child_by_field_name("name")
        return clean_name(text_of(var, src).lstrip("$")) or None
    return clean_name(text_of(node.child_by_field_name("name"), src)) or None


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
        "const_element": "constant",  # file-level or class ``const``
        "property_element": "variable",  # class properties
    },
    name=_php_name,
    comments=frozenset({"comment"}),
    prefixes=frozenset({"attribute_list"}),
    unqualified=frozenset({"namespace_definition"}),
    refs=PHP_REFS,
    ref_groups=PHP_GROUPS,
)

# ---------------------------------------------------------------------------- Bash


def _bash_assignment_kind(node: Node, src: bytes) -> str:
    return by_case(text_of(node.child_by_field_name("name"), src))


BASH = LangSpec(
    grammar="bash",
    defs={"function_definition": "function", "variable_assignment": _bash_assignment_kind},
    # ``NAME=value``, ``export NAME=value``, ``readonly NAME=value`` at the top level.
    patterns="""
(program (variable_assignment) @def)
(program (declaration_command (variable_assignment) @def))
""",
    pattern_types=frozenset({"variable_assignment"}),
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
