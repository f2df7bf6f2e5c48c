"""Language detection: file name -> language id.

The ids are tree-sitter-language-pack names where a grammar exists (``python``,
``typescript``, ``csharp`` ...) and plain labels for the formats we chunk as text
(``markdown``, ``yaml``, ``toml``, ``json``, ``text``).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from scrydb.errors import ScryError

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


#: Names people type for a language -> its id (``--lang py``, ``lang="c++"``).
ALIASES: dict[str, str] = {
    "py": "python",
    "python3": "python",
    "js": "javascript",
    "node": "javascript",
    "jsx": "javascript",
    "mjs": "javascript",
    "ts": "typescript",
    "rs": "rust",
    "golang": "go",
    "md": "markdown",
    "yml": "yaml",
    "c++": "cpp",
    "cxx": "cpp",
    "cc": "cpp",
    "hpp": "cpp",
    "cs": "csharp",
    "c#": "csharp",
    "rb": "ruby",
    "kt": "kotlin",
    "kts": "kotlin",
    "sh": "bash",
    "shell": "bash",
    "zsh": "bash",
    "txt": "text",
    "plain": "text",
    "htm": "html",
    "objective-c": "objc",
    "objectivec": "objc",
    "docker": "dockerfile",
    "makefile": "make",
    "tf": "hcl",
    "terraform": "hcl",
    "ex": "elixir",
    "hs": "haskell",
    "jl": "julia",
    "pl": "perl",
    "ps1": "powershell",
    "proto3": "proto",
    "protobuf": "proto",
    "bazel": "starlark",
}


def known_ids() -> list[str]:
    """Every language id a file can get, sorted."""
    return sorted({*EXTENSIONS.values(), *FILENAMES.values(), *SHEBANGS.values()})


def parse_filter(spec: str | None) -> list[str]:
    """A ``lang`` filter (``"py"``, ``"ts,tsx"``, ``"C++"``) as language ids, aliases
    resolved; an unknown name is a ScryError that lists the known ids."""
    if not spec:
        return []
    known = set(known_ids())
    out: list[str] = []
    for raw in spec.split(","):
        name = raw.strip().lower()
        if not name:
            continue
        lang = ALIASES.get(name, name)
        if lang not in known:
            raise ScryError(
                f"unknown language {raw.strip()!r}; known: {', '.join(known_ids())} "
                f"(aliases such as {', '.join(sorted(ALIASES)[:12])}, ... also work)"
            )
        if lang not in out:
            out.append(lang)
    return out
