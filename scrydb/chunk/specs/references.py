"""Reference patterns per language: a spec's ``refs`` (tags-style tree-sitter query
patterns whose capture names :mod:`scrydb.chunk.refs` reads: ``@call``, ``@call.q``,
``@import.path``, ``@qualifier``, ``@group``, ...) and ``ref_groups`` (the patterns
run on each ``@group`` node, whose captures belong together). ``refs`` joins the
definitions query of its spec, so one pass over the tree finds both. Node types were
read from real parse trees of tree-sitter-language-pack 0.13; ``tests/test_refs.py``
holds a file per language with the exact references expected.

No text predicates (``#eq?``): py-tree-sitter 0.26 crashes evaluating them on trees
parsed from a read callback, so a pattern that needs a function's name (``require``,
``include``, ``derive``) captures it as ``@fn`` and the extractor checks it.
"""

from __future__ import annotations

# --------------------------------------------------------------------------- Python

PYTHON_REFS = """
(call function: (identifier) @call)
(call function: (attribute object: (_) @qualifier attribute: (identifier) @call.q))
(decorator (identifier) @decorator)
(decorator (attribute) @decorator.path)
(decorator (call function: (identifier) @decorator))
(decorator (call function: (attribute) @decorator.path))
(class_definition superclasses: (argument_list (identifier) @inherit))
(class_definition superclasses: (argument_list (attribute) @inherit.path))
(type (identifier) @type)
(type (attribute) @type.path)
(generic_type (identifier) @type)
(import_statement name: (dotted_name) @import.path)
(import_statement name: (aliased_import)) @group
(import_from_statement) @group
"""
PYTHON_GROUPS = """
(import_statement name: (aliased_import name: (dotted_name) @import.path alias: (_) @alias))
(import_from_statement module_name: (_) @module name: (dotted_name) @import)
(import_from_statement
  module_name: (_) @module name: (aliased_import name: (dotted_name) @import alias: (_) @alias))
(import_from_statement module_name: (_) @module (wildcard_import) @import)
"""

# ---------------------------------------------------------------- JavaScript / TS

#: Calls, ``new``, decorators and imports, common to JavaScript, TypeScript and TSX;
#: a call of a bare function with a string first (``require("./m")``) is a group.
_JS_REFS = """
(call_expression function: (identifier) @call)
(call_expression
  function: (member_expression object: (_) @qualifier property: (property_identifier) @call.q))
(new_expression constructor: (identifier) @call)
(new_expression
  constructor: (member_expression object: (_) @qualifier property: (property_identifier) @call.q))
(decorator (identifier) @decorator)
(decorator (member_expression) @decorator.path)
(decorator (call_expression function: (identifier) @decorator))
(decorator (call_expression function: (member_expression) @decorator.path))
(import_statement source: (_)) @group
(export_statement source: (_)) @group
(call_expression function: (import) arguments: (arguments . (string) @import.path))
(call_expression function: (identifier) arguments: (arguments . (string))) @group.fn
(variable_declarator
  value: (call_expression function: (identifier) arguments: (arguments . (string)))) @group.fn
"""
_JS_GROUPS = """
(import_statement (import_clause (identifier) @import.default) source: (string) @module)
(import_statement
  (import_clause (namespace_import (identifier) @import.all)) source: (string) @module)
(import_statement
  (import_clause (named_imports (import_specifier name: (_) @import alias: (_)? @alias)))
  source: (string) @module)
(export_statement
  (export_clause (export_specifier name: (_) @import alias: (_)? @alias)) source: (string) @module)
(call_expression function: (identifier) @fn arguments: (arguments . (string) @import.path))
(variable_declarator
  name: (identifier) @alias
  value: (call_expression function: (identifier) @fn arguments: (arguments . (string) @import.path)))
(variable_declarator
  name: (object_pattern [
    (shorthand_property_identifier_pattern) @import
    (pair_pattern key: (_) @import value: (identifier) @alias)])
  value: (call_expression function: (identifier) @fn arguments: (arguments . (string) @module)))
"""

JAVASCRIPT_REFS = (
    _JS_REFS
    + """
(class_heritage (identifier) @inherit)
(class_heritage (member_expression) @inherit.path)
"""
)
JAVASCRIPT_GROUPS = _JS_GROUPS

#: TypeScript adds ``extends``/``implements`` clauses and types: every
#: ``type_identifier`` but the names that definitions and type parameters declare.
TYPESCRIPT_REFS = (
    _JS_REFS
    + """
(extends_clause value: (identifier) @inherit)
(extends_clause value: (member_expression) @inherit.path)
(implements_clause (type_identifier) @inherit)
(implements_clause (nested_type_identifier) @inherit.path)
(implements_clause (generic_type name: (type_identifier) @inherit))
(implements_clause (generic_type name: (nested_type_identifier) @inherit.path))
(extends_type_clause type: (type_identifier) @inherit)
(extends_type_clause type: (nested_type_identifier) @inherit.path)
(extends_type_clause type: (generic_type name: (type_identifier) @inherit))
(import_require_clause) @group
(type_identifier) @type
(nested_type_identifier) @type.path
(class_declaration name: (_) @skip)
(abstract_class_declaration name: (_) @skip)
(interface_declaration name: (_) @skip)
(type_alias_declaration name: (_) @skip)
(type_parameter name: (_) @skip)
"""
)
TYPESCRIPT_GROUPS = (
    _JS_GROUPS + "(import_require_clause (identifier) @alias source: (string) @import.path)\n"
)

# ------------------------------------------------------------------------------ Go

GO_REFS = """
(call_expression function: (identifier) @call)
(call_expression
  function: (selector_expression operand: (_) @qualifier field: (field_identifier) @call.q))
(import_spec path: (_) @import.path)
(import_spec name: (_)) @group
(field_declaration !name type: (type_identifier) @inherit)
(field_declaration !name type: (qualified_type package: (_) @qualifier name: (_) @inherit.q))
(type_elem (type_identifier) @inherit)
(type_elem (qualified_type package: (_) @qualifier name: (_) @inherit.q))
(type_identifier) @type
(qualified_type package: (_) @qualifier name: (type_identifier) @type.q)
(type_spec name: (_) @skip)
(type_alias name: (_) @skip)
"""
GO_GROUPS = """
(import_spec name: (_) @alias path: (_) @import.path)
"""

# ---------------------------------------------------------------------------- Rust

RUST_REFS = """
(call_expression function: (identifier) @call)
(call_expression function: (scoped_identifier) @call.path)
(call_expression
  function: (field_expression value: (_) @qualifier field: (field_identifier) @call.q))
(call_expression function: (generic_function function: (identifier) @call))
(call_expression function: (generic_function function: (scoped_identifier) @call.path))
(call_expression
  function: (generic_function
    function: (field_expression value: (_) @qualifier field: (field_identifier) @call.q)))
(macro_invocation macro: (identifier) @call.macro)
(macro_invocation macro: (scoped_identifier) @call.macro)
(use_declaration) @import.rust_use
(extern_crate_declaration name: (identifier) @import)
(impl_item trait: (type_identifier) @inherit)
(impl_item trait: (scoped_type_identifier) @inherit.path)
(impl_item trait: (generic_type type: (type_identifier) @inherit))
(impl_item trait: (generic_type type: (scoped_type_identifier) @inherit.path))
(trait_item bounds: (trait_bounds (type_identifier) @inherit))
(trait_item bounds: (trait_bounds (scoped_type_identifier) @inherit.path))
(attribute_item (attribute . (identifier) @decorator))
(attribute_item (attribute . (scoped_identifier) @decorator.path))
(attribute_item (attribute . (identifier) arguments: (token_tree))) @group.fn
(type_identifier) @type
(scoped_type_identifier) @type.path
(struct_item name: (_) @skip)
(enum_item name: (_) @skip)
(union_item name: (_) @skip)
(trait_item name: (_) @skip)
(type_item name: (_) @skip)
(type_parameter name: (_) @skip)
(impl_item type: (type_identifier) @skip)
(impl_item type: (generic_type type: (type_identifier) @skip))
"""
#: ``#[derive(Debug, Clone)]``: the type implements those traits.
RUST_GROUPS = """
(attribute . (identifier) @fn arguments: (token_tree (identifier) @inherit))
"""

# ---------------------------------------------------------------------------- Java

#: A type as Java writes it where a name is expected: plain, qualified, generic.
_JAVA_TYPE = """[
  (type_identifier) @{kind}
  (scoped_type_identifier) @{kind}.path
  (generic_type [(type_identifier) @{kind} (scoped_type_identifier) @{kind}.path])]"""

JAVA_REFS = f"""
(method_invocation object: _ @qualifier name: (identifier) @call.q)
(method_invocation !object name: (identifier) @call)
(object_creation_expression type: {_JAVA_TYPE.format(kind="call")})
(import_declaration (scoped_identifier) @import.member .)
(import_declaration (asterisk)) @group
(marker_annotation name: (identifier) @decorator)
(marker_annotation name: (scoped_identifier) @decorator.path)
(annotation name: (identifier) @decorator)
(annotation name: (scoped_identifier) @decorator.path)
(superclass {_JAVA_TYPE.format(kind="inherit")})
(super_interfaces (type_list {_JAVA_TYPE.format(kind="inherit")}))
(extends_interfaces (type_list {_JAVA_TYPE.format(kind="inherit")}))
(type_identifier) @type
(scoped_type_identifier) @type.path
(scoped_type_identifier . (type_identifier) @skip)
(scoped_type_identifier (scoped_type_identifier) @skip.path)
(type_parameter . (type_identifier) @skip)
"""
JAVA_GROUPS = """
(import_declaration (scoped_identifier) @module (asterisk) @import)
"""

# ------------------------------------------------------------------------------ C#

#: A type as C# writes it where a name is expected: plain, qualified, generic.
_CS_TYPE = """[
  (identifier) @{kind}
  (qualified_name) @{kind}.path
  (generic_name . (identifier) @{kind})]"""

CSHARP_REFS = f"""
(invocation_expression function: (identifier) @call)
(invocation_expression function: (generic_name . (identifier) @call))
(invocation_expression
  function: (member_access_expression
    expression: _ @qualifier name: [(identifier) @call.q (generic_name . (identifier) @call.q)]))
(object_creation_expression type: {_CS_TYPE.format(kind="call")})
(using_directive !name [(identifier) (qualified_name)] @import.path)
(using_directive name: (_)) @group
(attribute name: (identifier) @decorator)
(attribute name: (qualified_name) @decorator.path)
(base_list {_CS_TYPE.format(kind="inherit")})
(parameter type: {_CS_TYPE.format(kind="type")})
(variable_declaration type: {_CS_TYPE.format(kind="type")})
(method_declaration returns: {_CS_TYPE.format(kind="type")})
(property_declaration type: {_CS_TYPE.format(kind="type")})
(type_argument_list {_CS_TYPE.format(kind="type")})
"""
CSHARP_GROUPS = """
(using_directive name: (identifier) @alias (qualified_name) @import.member)
"""

# ------------------------------------------------------------------------- C / C++

#: Types where a declaration names them: parameters, return types, fields, variables
#: (a C type is used in every cast and template argument too; those are left out).
_C_TYPED = ("parameter_declaration", "function_definition", "field_declaration", "declaration")
_C_TYPE = "(type_identifier) @type"
_CPP_TYPE = """[
  (type_identifier) @type
  (qualified_identifier) @type.path
  (template_type name: (type_identifier) @type)
  (struct_specifier name: (type_identifier) @type)]"""
_CPP_TYPED = (*_C_TYPED, "optional_parameter_declaration", "variadic_parameter_declaration")
#: A tag with a body defines its name (``struct S {...} s;``): no reference.
_C_TAGS = ("struct_specifier", "union_specifier", "enum_specifier")

C_REFS = "\n".join(
    [
        "(call_expression function: (identifier) @call)",
        "(call_expression function: (field_expression"
        " argument: (_) @qualifier field: (field_identifier) @call.q))",
        "(preproc_include path: (_) @import.path)",
        *(f"({t} type: [{_C_TYPE} (struct_specifier name: (_) @type)])" for t in _C_TYPED),
        "(type_definition type: (type_identifier) @type)",
        *(f"({t} name: (_) @skip body: (_))" for t in _C_TAGS),
    ]
)

CPP_REFS = "\n".join(
    [
        "(call_expression function: (identifier) @call)",
        "(call_expression function: (field_expression"
        " argument: (_) @qualifier field: (field_identifier) @call.q))",
        "(preproc_include path: (_) @import.path)",
        *(f"({t} type: {_CPP_TYPE})" for t in _CPP_TYPED),
        "(type_definition type: (type_identifier) @type)",
        *(f"({t} name: (_) @skip body: (_))" for t in (*_C_TAGS, "class_specifier")),
    ]
) + (
    """
(call_expression function: (qualified_identifier) @call.path)
(call_expression function: (template_function name: (identifier) @call))
(new_expression type: (type_identifier) @call)
(new_expression type: (qualified_identifier) @call.path)
(new_expression type: (template_type name: (type_identifier) @call))
(base_class_clause (type_identifier) @inherit)
(base_class_clause (qualified_identifier) @inherit.path)
(base_class_clause (template_type name: (type_identifier) @inherit))
(using_declaration (qualified_identifier) @import.member)
(using_declaration "namespace" [(identifier) (qualified_identifier)] @import.path)
"""
)

# ---------------------------------------------------------------------------- Ruby

#: A receiver-less call whose first argument is a string or a constant is a group:
#: ``require "x"``, ``require_relative "x"``, ``include Comparable``.
RUBY_REFS = """
(call receiver: (_) @qualifier method: (identifier) @call.q)
(call !receiver method: (identifier) @call)
(call !receiver method: (identifier)
  arguments: (argument_list . [(string) (constant) (scope_resolution)])) @group.fn
(superclass (constant) @inherit)
(superclass (scope_resolution) @inherit.path)
"""
RUBY_GROUPS = """
(call !receiver method: (identifier) @fn arguments: (argument_list . (string) @import.path))
(call !receiver method: (identifier) @fn arguments: (argument_list (constant) @inherit))
(call !receiver method: (identifier) @fn arguments: (argument_list (scope_resolution) @inherit.path))
"""

# ----------------------------------------------------------------------------- PHP

PHP_REFS = """
(function_call_expression function: (name) @call)
(function_call_expression function: (qualified_name) @call.path)
(member_call_expression object: (_) @qualifier name: (name) @call.q)
(nullsafe_member_call_expression object: (_) @qualifier name: (name) @call.q)
(scoped_call_expression scope: (_) @qualifier name: (name) @call.q)
(object_creation_expression (name) @call)
(object_creation_expression (qualified_name) @call.path)
(namespace_use_clause !alias (qualified_name) @import.member)
(namespace_use_clause !alias (name) @import)
(namespace_use_clause alias: (_)) @group
(attribute (name) @decorator)
(attribute (qualified_name) @decorator.path)
(base_clause (name) @inherit)
(base_clause (qualified_name) @inherit.path)
(class_interface_clause (name) @inherit)
(class_interface_clause (qualified_name) @inherit.path)
(named_type (name) @type)
(named_type (qualified_name) @type.path)
"""
PHP_GROUPS = """
(namespace_use_clause [(qualified_name) (name)] @import.member alias: (_) @alias)
"""

# -------------------------------------------------------------------------- Kotlin

#: A Kotlin ``user_type`` is a dotted path with generic arguments: read as a path.
KOTLIN_REFS = """
(call_expression . (simple_identifier) @call)
(call_expression
  . (navigation_expression (_) @qualifier (navigation_suffix (simple_identifier) @call.q)))
(import_header (identifier) @import.member .)
(import_header [(import_alias) (wildcard_import)]) @group
(annotation (user_type) @decorator.path)
(annotation (constructor_invocation (user_type) @decorator.path))
(delegation_specifier (user_type) @inherit.path)
(delegation_specifier (constructor_invocation (user_type) @inherit.path))
(user_type) @type.path
"""
KOTLIN_GROUPS = """
(import_header (identifier) @import.member (import_alias (type_identifier) @alias))
(import_header (identifier) @module (wildcard_import) @import)
"""

# --------------------------------------------------------------------------- Swift

SWIFT_REFS = """
(call_expression . (simple_identifier) @call)
(call_expression
  . (navigation_expression
    target: (_) @qualifier suffix: (navigation_suffix suffix: (simple_identifier) @call.q)))
(import_declaration (identifier) @import.path)
(attribute (user_type) @decorator.path)
(inheritance_specifier inherits_from: (user_type) @inherit.path)
(user_type) @type.path
"""

# --------------------------------------------------------------------------- Scala

SCALA_REFS = """
(call_expression function: (identifier) @call)
(call_expression function: (field_expression value: (_) @qualifier field: (identifier) @call.q))
(instance_expression (type_identifier) @call)
(instance_expression (generic_type type: (type_identifier) @call))
(import_declaration) @import.scala
(annotation name: (type_identifier) @decorator)
(extends_clause (type_identifier) @inherit)
(extends_clause (stable_type_identifier) @inherit.path)
(extends_clause (generic_type type: (type_identifier) @inherit))
(type_identifier) @type
(stable_type_identifier) @type.path
(class_definition name: (_) @skip)
(trait_definition name: (_) @skip)
(type_definition name: (_) @skip)
"""
