"""Specs of the scripting languages: Python (and Starlark), JavaScript, TypeScript, TSX,
Ruby, PHP, Bash, Lua, Elixir, Julia."""

from __future__ import annotations

from dataclasses import replace

from tree_sitter import Node

from scrydb.chunk.specs.base import (
    Kind,
    LangSpec,
    by_type,
    clean_name,
    const_name,
    field_name,
    text_of,
)

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
