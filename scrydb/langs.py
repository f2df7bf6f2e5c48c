"""Language detection: file name -> language id.

The ids are tree-sitter-language-pack names where a grammar exists (``python``,
``typescript``, ``csharp`` ...) and plain labels for the formats we chunk as text
(``markdown``, ``yaml``, ``toml``, ``json``, ``text``).
"""

from __future__ import annotations

from pathlib import PurePosixPath

#: Extension (lower case, with the dot) -> language id.
EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".ipp": "cpp",
    ".cu": "cuda",
    ".cuh": "cuda",
    ".cs": "csharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".php": "php",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
    ".sc": "scala",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".lua": "lua",
    ".dart": "dart",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml_interface",
    ".jl": "julia",
    ".r": "r",
    ".pl": "perl",
    ".pm": "perl",
    ".zig": "zig",
    ".nim": "nim",
    ".clj": "clojure",
    ".cljs": "clojure",
    ".groovy": "groovy",
    ".gradle": "groovy",
    ".m": "objc",
    ".mm": "objc",
    ".sql": "sql",
    ".proto": "proto",
    ".vue": "vue",
    ".svelte": "svelte",
    ".sol": "solidity",
    ".tf": "hcl",
    ".hcl": "hcl",
    ".ps1": "powershell",
    ".el": "elisp",
    ".fs": "fsharp",
    ".fsx": "fsharp",
    ".v": "v",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".json": "json",
    ".jsonc": "json",
    ".ini": "ini",
    ".cfg": "ini",
    ".xml": "xml",
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".scss": "scss",
    ".graphql": "graphql",
    ".gql": "graphql",
    ".cmake": "cmake",
    ".mk": "make",
}

#: Whole file names (case sensitive) -> language id.
FILENAMES: dict[str, str] = {
    "Makefile": "make",
    "GNUmakefile": "make",
    "makefile": "make",
    "Dockerfile": "dockerfile",
    "CMakeLists.txt": "cmake",
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    "BUILD": "starlark",
    "BUILD.bazel": "starlark",
    "WORKSPACE": "starlark",
    "Jenkinsfile": "groovy",
    "README": "text",
    "LICENSE": "text",
    "CHANGELOG": "text",
}

#: Interpreter names in a ``#!`` line -> language id.
SHEBANGS: dict[str, str] = {
    "python": "python",
    "python3": "python",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "node": "javascript",
    "ruby": "ruby",
    "perl": "perl",
    "lua": "lua",
}


def detect(path: str, head: bytes | None = None) -> str | None:
    """Return the language id of ``path`` (a relative POSIX path), or None if unknown.

    ``head`` is the first bytes of the file; it is used for ``#!`` lines of files
    without a known extension.
    """
    p = PurePosixPath(path)
    if p.name in FILENAMES:
        return FILENAMES[p.name]
    if p.name.startswith("Dockerfile"):
        return "dockerfile"
    suffix = p.suffix.lower()
    if suffix in EXTENSIONS:
        return EXTENSIONS[suffix]
    if head and head.startswith(b"#!"):
        first = head.split(b"\n", 1)[0].decode("latin-1").strip()
        parts = first[2:].split()
        if parts:
            interp = parts[0].rsplit("/", 1)[-1]
            if interp == "env" and len(parts) > 1:
                interp = parts[1]
            interp = interp.rstrip("0123456789.") or interp
            if interp in SHEBANGS:
                return SHEBANGS[interp]
            if interp.startswith("python"):
                return "python"
    return None
