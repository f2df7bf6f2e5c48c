"""Specs of the compiled languages: Go, Rust, Java, C#, Kotlin, Swift, Scala, Haskell,
Solidity (C, C++ and CUDA are in :mod:`.cfamily`)."""

from __future__ import annotations

from tree_sitter import Node

from scrydb.chunk.specs.base import (
    LangSpec,
    by_case,
    by_type,
    clean_name,
    field_name,
    first_child_name,
    text_of,
)
from scrydb.chunk.specs.references import (
    CSHARP_GROUPS,
    CSHARP_REFS,
    GO_GROUPS,
    GO_REFS,
    JAVA_GROUPS,
    JAVA_REFS,
    KOTLIN_GROUPS,
    KOTLIN_REFS,
    RUST_GROUPS,
    RUST_REFS,
    SCALA_REFS,
    SWIFT_REFS,
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


def _go_binding_kind(node: Node, src: bytes) -> str | None:
    """A name in a top-level ``const``/``var`` spec (see GO's patterns); ``_`` is none."""
    parent = node.parent
    if parent is None or text_of(node, src) == "_":
        return None
    return "constant" if parent.type == "const_spec" else "variable"


def _go_name(node: Node, src: bytes) -> str | None:
    if node.type == "identifier":  # a name of a const/var spec
        return clean_name(text_of(node, src)) or None
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
        "identifier": _go_binding_kind,
    },
    # Every name of a top-level ``const``/``var``, grouped (``var ( ... )``) or not,
    # ``var a, b = 1, 2`` included; never one inside a function.
    patterns="""
(source_file (const_declaration (const_spec name: (identifier) @def)))
(source_file (var_declaration (var_spec name: (identifier) @def)))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @def))))
""",
    pattern_types=frozenset({"identifier"}),
    name=_go_name,
    comments=frozenset({"comment"}),
    wrappers=frozenset({"type_declaration"}),
    refs=GO_REFS,
    ref_groups=GO_GROUPS,
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
    refs=RUST_REFS,
    ref_groups=RUST_GROUPS,
)

# ---------------------------------------------------------------------------- Java


def _java_field_kind(node: Node, src: bytes) -> str:
    """A field's declarator: ``static final`` fields and interface constants are
    constants, other fields variables."""
    decl = node.parent
    if decl is None or decl.type == "constant_declaration":
        return "constant"
    mods = next((c for c in decl.children if c.type == "modifiers"), None)
    words = text_of(mods, src).split()
    return "constant" if "static" in words and "final" in words else "variable"


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
        "variable_declarator": _java_field_kind,
    },
    patterns="""
(field_declaration declarator: (variable_declarator) @def)
(constant_declaration declarator: (variable_declarator) @def)
""",
    pattern_types=frozenset({"variable_declarator"}),
    comments=frozenset({"line_comment", "block_comment"}),
    refs=JAVA_REFS,
    ref_groups=JAVA_GROUPS,
)

# ------------------------------------------------------------------------------ C#


def _cs_field_kind(node: Node, src: bytes) -> str:
    """A field's declarator: ``const`` and ``static readonly`` fields are constants."""
    var = node.parent
    field_decl = var.parent if var is not None else None
    mods = field_decl.children if field_decl is not None else []
    words = [text_of(c, src) for c in mods if c.type == "modifier"]
    if "const" in words or ("static" in words and "readonly" in words):
        return "constant"
    return "variable"


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
        "variable_declarator": _cs_field_kind,
    },
    patterns="(field_declaration (variable_declaration (variable_declarator) @def))",
    pattern_types=frozenset({"variable_declarator"}),
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
    refs=CSHARP_REFS,
    ref_groups=CSHARP_GROUPS,
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


def _kotlin_property_kind(node: Node, src: bytes) -> str:
    """``const val`` (or an UPPER_CASE ``val``) is a constant, other properties variables."""
    mods = next((c for c in node.named_children if c.type == "modifiers"), None)
    if "const" in text_of(mods, src).split():
        return "constant"
    var = next((c for c in node.named_children if c.type == "variable_declaration"), None)
    return by_case(text_of(var.named_children[0], src) if var and var.named_children else "")


def _kotlin_name(node: Node, src: bytes) -> str | None:
    t = node.type
    if t == "companion_object":
        return first_child_name("type_identifier")(node, src) or "Companion"
    if t == "secondary_constructor":
        return "constructor"
    if t == "property_declaration":  # ``val x = 1``; not ``val (a, b) = pair``
        var = next((c for c in node.named_children if c.type == "variable_declaration"), None)
        return first_child_name("simple_identifier")(var, src) if var is not None else None
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
        "property_declaration": _kotlin_property_kind,
    },
    # Top-level and class/object properties; never a local ``val`` in a function.
    patterns="""
(source_file (property_declaration) @def)
(class_body (property_declaration) @def)
""",
    pattern_types=frozenset({"property_declaration"}),
    name=_kotlin_name,
    comments=frozenset({"line_comment", "multiline_comment"}),
    unqualified=frozenset({"companion_object"}),
    refs=KOTLIN_REFS,
    ref_groups=KOTLIN_GROUPS,
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


def _swift_property_kind(node: Node, src: bytes) -> str | None:
    """``let`` is a constant, ``var`` a variable; a destructuring pattern is none."""
    pattern = node.child_by_field_name("name")
    if pattern is None or pattern.child_by_field_name("bound_identifier") is None:
        return None
    binding = next((c for c in node.named_children if c.type == "value_binding_pattern"), None)
    return "constant" if text_of(binding, src).startswith("let") else "variable"


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
        "property_declaration": _swift_property_kind,
    },
    # Top-level and type-level properties (``static let shared``); not locals.
    patterns="""
(source_file (property_declaration) @def)
(class_body (property_declaration) @def)
""",
    pattern_types=frozenset({"property_declaration"}),
    name=by_type(
        {
            "property_declaration": lambda n, s: (
                clean_name(text_of(n.child_by_field_name("name"), s)) or None
            ),
            "init_declaration": lambda n, s: "init",
            "deinit_declaration": lambda n, s: "deinit",
            "subscript_declaration": lambda n, s: "subscript",
        },
        field_name(),
    ),
    comments=frozenset({"comment", "multiline_comment"}),
    refs=SWIFT_REFS,
)

# --------------------------------------------------------------------------- Scala


def _scala_binding_kind(node: Node, src: bytes) -> str | None:
    """``val`` is a constant, ``var`` a variable; a tuple pattern is none."""
    pattern = node.child_by_field_name("pattern")
    if pattern is None or pattern.type != "identifier":
        return None
    return "constant" if node.type == "val_definition" else "variable"


SCALA = LangSpec(
    grammar="scala",
    # Top-level and class/object/trait-level ``val``/``var``; not locals in a block.
    patterns="""
(compilation_unit [(val_definition) (var_definition)] @def)
(template_body [(val_definition) (var_definition)] @def)
""",
    pattern_types=frozenset({"val_definition", "var_definition"}),
    name=by_type(
        {
            "val_definition": field_name("pattern"),
            "var_definition": field_name("pattern"),
        },
        field_name(),
    ),
    defs={
        "val_definition": _scala_binding_kind,
        "var_definition": _scala_binding_kind,
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
    refs=SCALA_REFS,
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
