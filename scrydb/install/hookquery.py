"""Which of an agent's literal searches scry can answer, and with what query.

The Claude Code hook (:mod:`scrydb.install.hook`) sees each Grep, Glob and Bash call
before it runs. :func:`lookup_for` turns one into a :class:`Lookup` (the words to search
for, a directory and a language to narrow to) or None: the call passes through untouched.
It passes through whenever the agent wants exact bytes or every match — a regular
expression beyond words and gaps, a count, a file list, inverted or whole-line matches,
a known file, a compound shell command — and whenever the pattern holds no word of three
letters or more. Pure functions: no file system access beyond asking whether a path is a
file, nothing imported that a hook cannot afford.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from scrydb import langs
from scrydb.errors import ScryError

#: Longer patterns are generated or pasted blobs, not a question: they pass through.
MAX_PATTERN = 200
#: A pattern must hold a word of at least this many letters or digits to be searched.
MIN_WORD = 3
#: Commands a grep's output may be piped into and still be a search for places.
PIPE_OK = frozenset({"head", "tail", "sort", "uniq", "less", "more", "cat"})
#: grep/rg flags that ask for exact or exhaustive output (counts, file lists, inverted,
#: whole-line or only-matching output, multiline, a pattern file): the call passes through.
EXACT_FLAGS = frozenset(
    {
        "-c", "--count", "--count-matches", "-l", "--files-with-matches", "-L",
        "--files-without-match", "-v", "--invert-match", "-o", "--only-matching", "-x",
        "--line-regexp", "-U", "--multiline", "-z", "--null-data", "-f", "--file", "--files",
        "--replace", "--json", "--vimgrep", "-q", "--quiet",
    }
)  # fmt: skip
#: Short flags whose value follows them (``-A 3``, ``-A3``), per program: the same letter
#: means different things to grep and rg (``-T``, ``-E``, ``-r``).
_VALUED_SHORT = {"grep": frozenset("ABCDdefm"), "rg": frozenset("ABCEMTdefgjmrt")}
#: Long options that take a value when not written ``--opt=value``.
_VALUED_LONG = frozenset(
    {
        "--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--max-count",
        "--after-context", "--before-context", "--context", "--include", "--exclude",
        "--exclude-dir", "--max-depth", "--max-columns", "--threads", "--type-add",
        "--color", "--colors", "--encoding", "--replace", "--sort", "--sortr", "--pre",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Lookup:
    """What scry searches for in place of (or beside) one literal search."""

    query: str  #: the words scry searches for
    pattern: str  #: the pattern as the agent wrote it (for the message)
    tool: str  #: what the agent called: Grep, Glob, grep, rg, find
    path: str | None = None  #: a directory to narrow to, absolute
    lang: str | None = None  #: a language id to narrow to
    redirectable: bool = True  #: a content search scry can answer instead (not a file-name one)


def lookup_for(tool_name: str, tool_input: Any, cwd: str) -> Lookup | None:
    """The lookup for one tool call, or None when it passes through untouched."""
    if not isinstance(tool_input, dict):
        return None
    if tool_name == "Grep":
        return _grep_tool(tool_input, cwd)
    if tool_name == "Glob":
        pattern = tool_input.get("pattern")
        if not isinstance(pattern, str):
            return None
        return _name_lookup(pattern, "Glob", _directory(tool_input.get("path"), cwd))
    if tool_name == "Bash":
        command = tool_input.get("command")
        return _bash(command, cwd) if isinstance(command, str) else None
    return None


def regex_words(pattern: str, fixed: bool = False) -> str | None:
    """The words a pattern looks for, or None when it is a regular expression that means
    more than words with gaps between them (classes, anchors, quantifiers, ``\\d``...).

    ``\\b`` and escaped punctuation are read as what they match; ``.*``, ``\\s+`` and an
    alternation of words (``foo|bar``) become spaces."""
    if not pattern or len(pattern) > MAX_PATTERN or "\n" in pattern:
        return None
    if fixed:
        return _words(pattern)
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                return None
            d = pattern[i + 1]
            if d in "bB<>":
                i += 2
            elif d == "s":
                out.append(" ")
                i += 2
                i += 1 if i < n and pattern[i] in "*+?" else 0
            elif d.isalnum():
                return None  # \d \w \S \1 ...: a real regular expression
            else:
                out.append(d)
                i += 2
        elif c == "." and i + 1 < n and pattern[i + 1] in "*+":
            out.append(" ")
            i += 2
            i += 1 if i < n and pattern[i] == "?" else 0
        elif c in "|)":
            out.append(" ")
            i += 1
        elif c == "(":
            if pattern.startswith("(?", i):
                return None  # lookaround, named or inline-flag group
            out.append(" ")
            i += 1
        elif c in "[]{}^$*+?":
            return None
        else:
            out.append(c)
            i += 1
    return _words("".join(out))


def _words(text: str) -> str | None:
    """``text`` with runs of spaces collapsed, when it holds a word of :data:`MIN_WORD`
    letters or digits; else None."""
    text = " ".join(text.split())
    if not any(len(w) >= MIN_WORD for w in re.findall(r"[^\W_]+", text)):
        return None
    return text


def _grep_tool(inp: dict[str, Any], cwd: str) -> Lookup | None:
    pattern = inp.get("pattern")
    if not isinstance(pattern, str):
        return None
    if inp.get("output_mode") == "count" or inp.get("multiline"):
        return None
    where = inp.get("path")
    if isinstance(where, str) and where and _is_file(where, cwd):
        return None  # a known file: grep it as asked
    query = regex_words(pattern)
    if query is None:
        return None
    lang = _lang_of_glob(inp.get("glob")) or _lang_of_type(inp.get("type"))
    return Lookup(query, pattern, "Grep", _directory(where, cwd), lang)


def _name_lookup(pattern: str, tool: str, path: str | None) -> Lookup | None:
    """A file-name glob (Glob, ``find -name``): its words, when it has a wildcard."""
    if len(pattern) > MAX_PATTERN or not any(ch in pattern for ch in "*?[{"):
        return None  # a concrete path: the agent knows the file
    name = PurePosixPath(pattern).name
    ext = re.search(r"\.[A-Za-z0-9+]+$", name)
    lang = langs.EXTENSIONS.get(ext.group().lower()) if ext else None
    stem = re.sub(r"\.[A-Za-z0-9+]+$", "", name) if lang else name
    words: list[str] = []
    for part in (stem, str(PurePosixPath(pattern).parent)):  # the name's words, else the dirs'
        text = re.sub(r"[*?{}\[\],/.]+", " ", part)
        words = [w for w in text.split() if len(w) >= MIN_WORD]
        if words:
            break
    if not words:
        return None
    return Lookup(" ".join(words), pattern, tool, path, lang, redirectable=False)


def _bash(command: str, cwd: str) -> Lookup | None:
    if len(command) > 4 * MAX_PATTERN or "\n" in command.strip():
        return None
    try:
        lex = shlex.shlex(command, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        tokens = list(lex)
    except ValueError:
        return None
    segments: list[list[str]] = [[]]
    for tok in tokens:
        if tok == "|":
            segments.append([])
        elif tok and all(ch in "();<>|&" for ch in tok):
            return None  # ;, &&, ||, redirection, a subshell: not a plain search
        else:
            segments[-1].append(tok)
    if any(not seg for seg in segments) or any(seg[0] not in PIPE_OK for seg in segments[1:]):
        return None
    argv = segments[0]
    if "$(" in command or "`" in command:
        return None
    prog = os.path.basename(argv[0])
    if prog == "git" and len(argv) > 1 and argv[1] == "grep":
        return _grep_argv(argv[2:], "grep", cwd)
    if prog in ("grep", "egrep", "fgrep"):
        return _grep_argv(argv[1:], "grep", cwd, fixed=prog == "fgrep")
    if prog == "rg":
        return _grep_argv(argv[1:], "rg", cwd)
    if prog == "find":
        return _find_argv(argv[1:], cwd)
    return None


def _grep_argv(args: list[str], prog: str, cwd: str, fixed: bool = False) -> Lookup | None:
    """``grep``/``rg`` arguments: the pattern, the paths, the flags."""
    pattern: str | None = None
    positional: list[str] = []
    lang: str | None = None
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            positional += args[i:]
            break
        if a.startswith("--"):
            name, eq, val = a.partition("=")
            if name in EXACT_FLAGS:
                return None
            if name == "--fixed-strings":
                fixed = True
            elif name in _VALUED_LONG and not eq:
                if i >= len(args):
                    return None
                val = args[i]
                i += 1
            if name == "--regexp":
                pattern = val
            elif name in ("--type", "--include", "--glob") and lang is None:
                lang = _lang_of_type(val) if name == "--type" else _lang_of_glob(val)
            continue
        if a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                f = a[j]
                if f"-{f}" in EXACT_FLAGS or (prog == "rg" and f == "r"):  # rg -r: replace
                    return None
                if f == "F":
                    fixed = True
                if f in _VALUED_SHORT[prog]:
                    val = a[j + 1 :]
                    if not val:
                        if i >= len(args):
                            return None
                        val = args[i]
                        i += 1
                    if f == "e":
                        pattern = val
                    elif f == "t" and prog == "rg":
                        lang = _lang_of_type(val)
                    elif f == "g" and prog == "rg":
                        lang = lang or _lang_of_glob(val)
                    break
                j += 1
            continue
        positional.append(a)
    if pattern is None:
        if not positional:
            return None
        pattern, positional = positional[0], positional[1:]
    if any(_is_file(p, cwd) for p in positional):
        return None  # a known file
    dirs = [p for p in positional if not any(ch in p for ch in "*?[")]
    query = regex_words(pattern, fixed)
    if query is None:
        return None
    path = _directory(dirs[0], cwd) if len(dirs) == 1 else None
    return Lookup(query, pattern, prog, path, lang)


def _find_argv(args: list[str], cwd: str) -> Lookup | None:
    """``find [DIR] -name GLOB``: a file-name search (never one that acts on files)."""
    if any(a in ("-exec", "-execdir", "-delete", "-ok", "-okdir", "-fprint") for a in args):
        return None
    dirs: list[str] = []
    name = None
    i = 0
    while i < len(args) and not args[i].startswith("-"):
        dirs.append(args[i])
        i += 1
    while i < len(args):
        if args[i] in ("-name", "-iname", "-path", "-ipath") and i + 1 < len(args):
            name = args[i + 1]
            i += 2
        else:
            i += 1
    if name is None:
        return None
    return _name_lookup(name, "find", _directory(dirs[0], cwd) if len(dirs) == 1 else None)


def _is_file(path: str, cwd: str) -> bool:
    try:
        return (Path(cwd) / path).expanduser().is_file()
    except (OSError, ValueError):
        return False


def _directory(path: Any, cwd: str) -> str | None:
    """An existing directory the search is narrowed to, absolute; None for none."""
    if not isinstance(path, str) or not path:
        return None
    try:
        p = (Path(cwd) / path).expanduser()
        return str(p.resolve()) if p.is_dir() else None
    except (OSError, ValueError):
        return None


def _lang_of_glob(glob: Any) -> str | None:
    """``*.py`` -> python (one extension only); else None."""
    if not isinstance(glob, str):
        return None
    m = re.fullmatch(r"(?:\*\*/)?\*(\.[A-Za-z0-9+]+)", glob.strip())
    return langs.EXTENSIONS.get(m.group(1).lower()) if m else None


def _lang_of_type(name: Any) -> str | None:
    """An rg ``--type`` (``py``, ``rust``) as a language id, when scry knows it."""
    if not isinstance(name, str) or not name:
        return None
    try:
        ids = langs.parse_filter(name)
    except ScryError:
        return None
    return ids[0] if len(ids) == 1 else None
