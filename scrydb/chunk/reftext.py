"""The text of a reference as written (:mod:`scrydb.chunk.refs`): a qualified name
split into its qualifier and name, a qualifier tidied (line breaks, comments, string
contents and arguments dropped), an import's path split into module and name, and the
import trees of Rust ``use`` and Scala ``import`` read token by token. Pure functions
of the source bytes; reads at most ``READ_BYTES`` of any one node."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

#: Qualifiers and paths are read from at most this many bytes before the name (a
#: builder chain or a literal receiver can be kilobytes long).
READ_BYTES = 256
#: A qualifier longer than this keeps its tail, after an ellipsis.
MAX_QUALIFIER = 80


#: Source extensions dropped from the name of a path import (``./util.js`` -> ``util``).
_SOURCE_EXTENSIONS = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts", ".rb")

_NAME_AT_END = re.compile(rb"([A-Za-z_$\x80-\xff][\w$\x80-\xff]*[!?]?)\s*\Z")
#: A qualifier as plain as it gets (``self.client``, ``os.path``, ``$this->db``).
SIMPLE_PATH = re.compile(r"[\w$]+(?:(?:\.|::|->|\?\.)[\w$]+)*\Z")
#: A plain qualified name (``a.b.c``, ``a::b``, ``$this->x``): (qualifier, name).
SIMPLE_SPLIT = re.compile(
    r"(?:([\w$]+(?:(?:\.|::|->|\\)[\w$]+)*)(?:\.|::|->|\\))?([^\W\d][\w$]*[!?]?)\Z"
)
_SPACE = re.compile(r"\s+")
#: Spaces beside punctuation go (``a\n  .b`` -> ``a.b``); between words one stays
#: (``new Widget()``).
_PUNCT_SPACE = re.compile(r" (?=[^\w\s$])|(?<=[^\w\s$]) ")
#: A string literal: prefix, quote, contents (triple quotes first; escapes kept in).
_STRINGS = re.compile(r'([rbfuRBFU]{0,2})("""|\'\'\'|["\'`])(?:\\.|(?!\2)[^\\])*\2', re.DOTALL)
#: ``/* ... */`` and ``// ...`` to the end of a line (not ``//`` within one line: it
#: is Python's floor division as often as a comment).
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*\n", re.DOTALL)
_BRACES = re.compile(r"\{[^{}]*\}")
_LEADING_PART = re.compile(r"\A[\w$]*(?:\?\.|::|->|\.)?")
_PARENS = re.compile(r"\([^()]*\)")
_BRACKETS = re.compile(r"\[[^\[\]]*\]")
_GENERICS = re.compile(r"(?:::)?<[^<>]*>")
_TRAILING_SEP = re.compile(r"(?:\?\.|&\.|::|->|\.|\\)\Z")
_PATH_SPLIT = re.compile(r"\.|::|\\|/")
_GO_MAJOR = re.compile(r"v\d+\Z")
_GO_DOT_MAJOR = re.compile(r"\.v\d+\Z")
_QUOTES = "\"'`<>"


def tail_text(node: Node, src: bytes, limit: int = READ_BYTES) -> tuple[str, bool]:
    """The last ``limit`` bytes of ``node``'s text, and whether it was cut."""
    s, e = node.start_byte, node.end_byte
    cut = e - s > limit
    return src[e - limit if cut else s : e].decode("utf-8", "replace"), cut


def tidy(text: str, cut: bool) -> str | None:
    """A qualifier as written, without line breaks, comments, string contents, call
    arguments, subscripts and generic arguments (``a.b(x).c`` -> ``a.b().c``,
    ``"x".join`` -> ``""``); when it was cut (``cut``: only its tail was read) or
    holds an unmatched bracket, what follows the last one, after an ellipsis
    (``…().then``), and at most ``MAX_QUALIFIER`` characters of its tail."""
    if not cut and (text.isidentifier() or SIMPLE_PATH.match(text)):
        return text
    t = text.strip()
    if "'" in t or '"' in t or "`" in t:
        t = _STRINGS.sub(_empty_string, t)
    if "/" in t:
        t = _COMMENTS.sub(" ", t)
    if " " in t or "\n" in t or "\t" in t or "\r" in t:
        t = _PUNCT_SPACE.sub("", _SPACE.sub(" ", t)).strip()
    for _ in range(8):  # innermost groups first, each to one placeholder character
        before = t
        if "(" in t:
            t = _PARENS.sub("\x00", t)
        if "[" in t:
            t = _BRACKETS.sub("\x01", t)
        if "{" in t:
            t = _BRACES.sub("\x02", t)
        if "<" in t:
            t = _GENERICS.sub("", t)
        if t == before:
            break
    k = max(t.rfind(")"), t.rfind("]"), t.rfind("}"))
    if k >= 0:  # the rest of a call or literal whose start was not read
        t = "\x00" + t[k + 1 :] if t[k] == ")" else t[k + 1 :]
        cut = True
    elif cut:  # the tail began inside a name: from the next whole one
        t = _LEADING_PART.sub("", t)
    t = _TRAILING_SEP.sub("", t.replace("\x00", "()").replace("\x01", "[]"))
    t = t.replace("\x02", "{}")
    if cut and any(c in t for c in "'\"`\\"):
        return "…"  # the tail began inside a string: nothing reliable to keep
    if cut or len(t) > MAX_QUALIFIER:
        return "…" + t[-MAX_QUALIFIER:]
    return t or None


def _empty_string(m: re.Match[str]) -> str:
    """A string literal without its contents, its quotes and prefix kept."""
    q = m.group(2)
    return m.group(1) + q + q


def _strip_generic_tail(b: bytes) -> bytes:
    """``ns::f<int>`` -> ``ns::f``: drop balanced ``<...>`` groups at the end."""
    for _ in range(4):
        b = b.rstrip()
        if not b.endswith(b">"):
            return b
        depth = 0
        for i in range(len(b) - 1, -1, -1):
            c = b[i]
            if c == 0x3E:  # >
                depth += 1
            elif c == 0x3C:  # <
                depth -= 1
                if depth == 0:
                    b = b[:i].rstrip()
                    if b.endswith(b"::"):
                        b = b[:-2]
                    break
        else:
            return b
    return b


def split_path(node: Node, src: bytes) -> tuple[int, str, str | None] | None:
    """A qualified name: (start byte of its last component, that component, the rest
    tidied); None when the node does not end in a name."""
    s, e = node.start_byte, node.end_byte
    if e - s <= READ_BYTES:  # the common case: ``a.b``, ``ns::f``, ``a::b::f``
        text = src[s:e].decode("utf-8", "replace")
        m = SIMPLE_SPLIT.match(text)
        if m is not None:
            name = m.group(2)
            return e - len(name.encode("utf-8", "replace")), name, m.group(1)
    base = max(s, e - READ_BYTES)
    b = _strip_generic_tail(src[base:e])
    m2 = _NAME_AT_END.search(b)
    if m2 is None:
        return None
    name = m2.group(1).decode("utf-8", "replace")
    rest = b[: m2.start()].decode("utf-8", "replace")
    qualifier = tidy(rest, base > s) if rest.strip() else None
    return base + m2.start(), name, qualifier


def module_path(text: str) -> tuple[str, str]:
    """An import path as written -> (module, name): quotes dropped; a quoted path's
    last ``/`` element (``"github.com/x/y/v2"`` -> ``y``, ``"./util.js"`` -> ``util``),
    else the last dotted or ``::`` component."""
    text = text.strip()
    quoted = text[:1] in _QUOTES
    module = _SPACE.sub("", text.strip(_QUOTES))
    if quoted:
        parts = [p for p in module.split("/") if p]
        name = parts[-1] if parts else module
        if len(parts) > 1 and _GO_MAJOR.match(name):  # Go: ".../y/v2" is package y
            name = parts[-2]
        name = _GO_DOT_MAJOR.sub("", name)
        for ext in _SOURCE_EXTENSIONS:
            if name.endswith(ext) and len(name) > len(ext):
                name = name[: -len(ext)]
                break
    else:
        name = _PATH_SPLIT.split(module)[-1] or module
    return module, name


def member_path(text: str) -> tuple[str | None, str]:
    """``java.util.List`` -> (``java.util``, ``List``); ``a::b::c`` -> (``a::b``, ``c``)."""
    text = _SPACE.sub("", text)
    m = re.search(r"(?:\.|::|\\)([^.:\\]*)\Z", text)
    if m is None:
        return None, text
    return text[: m.start()] or None, m.group(1)


_USE_TOKEN = re.compile(r"\s*(::|=>|[{},;*.]|(?:r#)?[^\W\d]\w*|\S)")
#: Nesting of ``{}`` lists read in one import (real code nests two or three).
_MAX_USE_DEPTH = 16


@dataclass(frozen=True, slots=True)
class TreeSyntax:
    """How a language writes an import tree (``use a::{b, c as d}``)."""

    sep: str  #: between path segments
    renames: frozenset[str]  #: before an alias
    wildcards: frozenset[str]
    self_word: str | None  #: ``a::{self}`` imports ``a``


RUST_USE = TreeSyntax("::", frozenset({"as"}), frozenset({"*"}), "self")
SCALA_IMPORT = TreeSyntax(".", frozenset({"as", "=>"}), frozenset({"*", "_"}), None)
ImportRow = tuple[int, str, str | None, str | None]  # (start byte, name, module, alias)


def import_tree(node: Node, src: bytes, syntax: TreeSyntax) -> list[ImportRow]:
    """Every name an import tree imports (Rust ``use a::{b::{c, d as e}, f}``, Scala
    ``import a.b.{C, D => E}``): (start byte, name, module, alias), ``self`` and
    wildcards included; read from the declaration's text (one pass over a few tokens;
    walking the nodes costs more)."""
    arg = node.child_by_field_name("argument") if syntax is RUST_USE else node
    if arg is None:
        return []
    base = arg.start_byte
    text = src[base : arg.end_byte].decode("utf-8", "replace")
    ascii_text = text.isascii()
    tokens = [
        (m.group(1), base + (m.start(1) if ascii_text else len(text[: m.start(1)].encode())))
        for m in _USE_TOKEN.finditer(text)
    ]
    start = 1 if tokens and tokens[0][0] == "import" else 0
    out: list[ImportRow] = []
    _use_tree(tokens, start, [], out, 0, syntax)
    return out


def _use_tree(
    tokens: list[tuple[str, int]],
    i: int,
    prefix: list[str],
    out: list[ImportRow],
    depth: int,
    syntax: TreeSyntax,
) -> int:
    """Read one import tree from ``tokens[i]`` under the path ``prefix``; return the
    index after it."""
    n = len(tokens)
    sep = syntax.sep
    segs: list[tuple[str, int]] = []
    while i < n:
        tok, pos = tokens[i]
        if tok == "{":
            i += 1
            inner = prefix + [t for t, _ in segs]
            while i < n and tokens[i][0] != "}" and depth < _MAX_USE_DEPTH:
                i = _use_tree(tokens, i, inner, out, depth + 1, syntax)
                if i < n and tokens[i][0] == ",":
                    i += 1
            return i + 1
        if tok in syntax.wildcards:
            out.append((pos, "*", sep.join(prefix + [t for t, _ in segs]) or None, None))
            return i + 1
        if tok == sep and not segs:  # ``use ::serde``: the extern prelude
            i += 1
            continue
        if not (tok[0].isalpha() or tok[0] == "_"):
            return i + 1  # not an import tree (``}`` of a malformed list, ``;``)
        segs.append((tok, pos))
        i += 1
        if i < n and tokens[i][0] == sep:
            i += 1
            continue
        break
    if not segs:
        return i
    alias = None
    if i + 1 < n and tokens[i][0] in syntax.renames:
        alias = tokens[i + 1][0]
        i += 2
    path = prefix + [t for t, _ in segs]
    last, pos = segs[-1]
    if last == syntax.self_word and len(path) > 1:  # ``use a::b::{self}`` imports ``b``
        path.pop()
    out.append((pos, path[-1], sep.join(path[:-1]) or None, alias))
    return i


def compact(node: Node | None, src: bytes) -> str:
    """The text of ``node`` without whitespace (empty for None)."""
    if node is None:
        return ""
    return _SPACE.sub("", src[node.start_byte : node.end_byte].decode("utf-8", "replace"))
