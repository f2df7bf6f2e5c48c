"""Specs of the C family: C, C++ and CUDA (C++ with kernels), which share the naming of
declarators, tagged types and global variables."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tree_sitter import Node

from scrydb.chunk.specs.base import Kind, LangSpec, by_case, clean_name, text_of
from scrydb.chunk.specs.references import C_REFS, CPP_REFS

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


#: Declarators that wrap a variable's name (``*p``, ``a[3]``, ``x = 1``, ``&r``).
_C_VAR_WRAPPERS = frozenset(
    {
        "init_declarator",
        "pointer_declarator",
        "array_declarator",
        "reference_declarator",
        "parenthesized_declarator",
    }
)
#: Node types a top-level declaration's ``declarator`` can be (see _C_GLOBALS); C has
#: no references.
_CPP_VAR_DECLARATORS = _C_VAR_WRAPPERS | {"identifier", "function_declarator"}
_C_VAR_DECLARATORS = _CPP_VAR_DECLARATORS - {"reference_declarator"}


def _c_var_name(node: Node, src: bytes) -> str | None:
    """The name a global variable's declarator declares; None for a function prototype
    (``int f(void);``; a pointer to a function, ``int (*f)(int)``, is a variable)."""
    d: Node | None = node
    seen_wrapper = False
    for _ in range(16):
        if d is None:
            return None
        if d.type == "identifier":
            return clean_name(text_of(d, src)) or None
        if d.type == "function_declarator" and not seen_wrapper:
            inner = d.child_by_field_name("declarator")
            if inner is None or inner.type != "parenthesized_declarator":
                return None  # a prototype
        elif d.type not in _C_VAR_WRAPPERS and d.type != "function_declarator":
            return None  # ``Foo::x`` definitions and the like
        seen_wrapper = seen_wrapper or d.type == "parenthesized_declarator"
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            nxt = next((c for c in d.named_children if c.type in _CPP_VAR_DECLARATORS), None)
        d = nxt
    return None


def _c_var_kind(node: Node, src: bytes) -> str | None:
    """A global variable (``const``/``constexpr`` or an UPPER_CASE name: a constant), or
    None for a prototype."""
    name = _c_var_name(node, src)
    if not name:
        return None
    decl = node.parent
    quals = (c for c in decl.children if c.type == "type_qualifier") if decl is not None else ()
    if any(text_of(q, src) in ("const", "constexpr") for q in quals):
        return "constant"
    return by_case(name)


def _c_name(node: Node, src: bytes) -> str | None:
    t = node.type
    if t in _CPP_VAR_DECLARATORS:
        return _c_var_name(node, src)
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
#: Global variables: the declarators of declarations at file level, in a namespace or
#: ``extern "C" {}`` body (``declaration_list``), or under a top-level ``#if``/``#ifdef``
#: (an include guard) or its ``#else``.
_C_GLOBAL_IN = ("translation_unit", "declaration_list")
_C_GLOBALS = "\n".join(
    [f"({p} (declaration declarator: (_) @def))" for p in _C_GLOBAL_IN]
    + [
        f"(translation_unit ({t} {body}))"
        for t in ("preproc_if", "preproc_ifdef")
        for body in (
            "(declaration declarator: (_) @def)",
            "alternative: (preproc_else (declaration declarator: (_) @def))",
        )
    ]
)
_C_VAR_KINDS: dict[str, Kind] = {t: _c_var_kind for t in _C_VAR_DECLARATORS}
_CPP_VAR_KINDS: dict[str, Kind] = {t: _c_var_kind for t in _CPP_VAR_DECLARATORS}

C = LangSpec(
    grammar="c",
    defs=_C_DEFS | _C_VAR_KINDS,
    patterns=_C_GLOBALS,
    pattern_types=_C_VAR_DECLARATORS,
    name=_c_name,
    comments=frozenset({"comment"}),
    wrappers=frozenset({"declaration", "type_definition"}),
    transparent=_C_TRANSPARENT | {"declaration_list"},
    refs=C_REFS,
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
    defs=_CPP_DEFS | _CPP_VAR_KINDS,
    patterns=_C_GLOBALS,
    pattern_types=_CPP_VAR_DECLARATORS,
    name=_c_name,
    comments=frozenset({"comment"}),
    wrappers=frozenset(
        {"template_declaration", "declaration", "field_declaration", "type_definition"}
    ),
    transparent=_C_TRANSPARENT | {"declaration_list"},
    scoped_methods=True,
    refs=CPP_REFS,
)
#: CUDA is C++ with kernels: the same spec over the cuda grammar (derived, never copied).
CUDA = replace(CPP, grammar="cuda")
