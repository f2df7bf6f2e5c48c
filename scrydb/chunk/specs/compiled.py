"""Specs of the compiled languages: Go, Rust, Java, C, C++, CUDA, C#, Kotlin, Swift,
Scala, Haskell, Solidity."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tree_sitter import Node

from scrydb.chunk.specs.base import (
    Kind,
    LangSpec,
    by_type,
    clean_name,
    field_name,
    first_child_name,
    text_of,
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
#: CUDA is C++ with kernels: the same spec over the cuda grammar (derived, never copied).
CUDA = replace(CPP, grammar="cuda")

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
