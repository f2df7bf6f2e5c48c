"""Per-language chunking specs (tree-sitter-language-pack 0.13 grammars): what a
definition is in each grammar and how it is named. :mod:`.base` holds the spec type and
the naming helpers; :mod:`.scripts`, :mod:`.compiled` and :mod:`.cfamily` the languages."""

from __future__ import annotations

from scrydb.chunk.specs.base import (
    CLASS_KINDS,
    CONTAINER_KINDS,
    SYMBOL_ONLY_KINDS,
    Kind,
    LangSpec,
    NameFn,
    clean_name,
    text_of,
)
from scrydb.chunk.specs.cfamily import CPP, CUDA, C
from scrydb.chunk.specs.compiled import (
    CSHARP,
    GO,
    HASKELL,
    JAVA,
    KOTLIN,
    RUST,
    SCALA,
    SOLIDITY,
    SWIFT,
)
from scrydb.chunk.specs.scripts import (
    BASH,
    ELIXIR,
    JAVASCRIPT,
    JULIA,
    LUA,
    PHP,
    PYTHON,
    RUBY,
    TSX,
    TYPESCRIPT,
)

__all__ = [
    "CLASS_KINDS",
    "CONTAINER_KINDS",
    "SPECS",
    "SYMBOL_ONLY_KINDS",
    "Kind",
    "LangSpec",
    "NameFn",
    "clean_name",
    "text_of",
]

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
