"""A bug report read into its parts: traceback frames, error messages, identifiers, prose.

A coding agent often passes a whole issue to search: a title, paragraphs, a code sample, a
traceback, an error message. :func:`analyse_report` reads such a text once into a
:class:`Report` that the search pipeline weighs part by part, strongest first:

1. traceback frames (``traceformats.py`` reads eight formats, ``traces.py`` groups them
   into tracebacks; ``framepath.map_frame_path`` maps their paths to indexed files);
2. error types and messages, each also as literal fragments (:func:`message_pattern`);
3. identifiers in backticks, the names that code blocks call or use (the code in a report
   is usage), and ``file.py:LINE`` / ``path/to/file.ts`` mentions;
4. the prose, code and tracebacks removed, in segments that fit the embedding model's
   window.

A short ordinary query (one line under :data:`SHORT_QUERY_CHARS` characters without a
traceback) is not a report: None. Pure (no SQL, no index), linear in the text (every
pattern starts only where its run starts), and it never raises.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scrydb.langs import EXTENSIONS
from scrydb.search.errormessages import ErrorMessage, message_pattern, parse_error
from scrydb.search.traceformats import FORMATS, split_inline
from scrydb.search.traces import Frame, scan

__all__ = [
    "FORMATS",
    "ErrorMessage",
    "Frame",
    "Mention",
    "Report",
    "analyse_report",
    "message_pattern",
]

#: Below this many characters a one-line query without a traceback is a plain query.
SHORT_QUERY_CHARS = 300
#: Only the first this many characters are read (a report is at most tens of KB; the rest
#: of a pasted log adds nothing the first part lacks and would only cost time).
MAX_REPORT_CHARS = 200_000
#: A prose segment's size: the dense model reads 256 word pieces, about 3.5 characters
#: each in English prose.
SEGMENT_CHARS = 900
#: At most this many identifiers, code names and mentions each (a pasted file could
#: otherwise list thousands).
MAX_NAMES = 200

#: Names a code block uses that are the language's, never a repository's.
_KEYWORDS = frozenset(
    """
    if elif else for while switch case return catch except try finally raise throw with
    assert yield await async lambda def class function fn func new typeof sizeof instanceof
    and or not in is print println printf len range str int float bool list dict set tuple
    isinstance issubclass super type repr object self this cls super require import from
    """.split()
)


@dataclass(frozen=True)
class Mention:
    """A file named in the report's text: ``app/x.py:12``, ``path/to/file.ts``."""

    path: str  #: as written (a GitHub blob URL gives its repository path)
    line: int | None  #: the line it names, None when it names none


@dataclass(frozen=True)
class Report:
    """A bug report's parts, strongest evidence first (every field is a tuple, maybe empty)."""

    #: Traceback frames; each traceback outermost first, so ``frames[-1]`` is the innermost
    #: frame of the last traceback; :attr:`Frame.trace` and :attr:`Frame.depth` say which
    #: traceback and how far from its innermost frame.
    frames: tuple[Frame, ...]
    #: Error types and messages (tracebacks' and stand-alone ones), each once.
    errors: tuple[ErrorMessage, ...]
    #: Identifiers in backticks in the prose (``Foo.bar``, ``parse_ast``), as written.
    identifiers: tuple[str, ...]
    #: Names the report's code calls or uses (``np.array``, ``Schema``), imports included;
    #: names the code itself defines are left out.
    code_names: tuple[str, ...]
    #: Files named in the prose and code (not in tracebacks).
    mentions: tuple[Mention, ...]
    #: The code blocks' text (fenced or indented), traceback lines removed.
    code: tuple[str, ...]
    #: The prose, code and tracebacks removed, in segments of at most
    #: :data:`SEGMENT_CHARS` characters on paragraph or sentence boundaries.
    segments: tuple[str, ...]


# -- reading the lines ------------------------------------------------------------------

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})(.*)$")
_QUOTE = re.compile(r"^\s*(?:>[ \t]?)+")
#: CI log lines: ``2024-10-24T16:40:49.8236249Z `` (GitHub Actions) before each line.
_TIMESTAMP = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z? ")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|[0-9]{1,3}[.)])\s")

_PROSE, _CODE, _MARK = 0, 1, 2


def _drop_comments(text: str) -> str:
    """Without ``<!-- ... -->`` (issue templates' instructions), in one pass."""
    if "<!--" not in text:
        return text
    out: list[str] = []
    pos = 0
    while True:
        a = text.find("<!--", pos)
        if a < 0:
            out.append(text[pos:])
            break
        b = text.find("-->", a + 4)
        out.append(text[pos:a])
        if b < 0:
            break
        out.append("\n" * text.count("\n", a, b))  # keep the line structure around it
        pos = b + 3
    return "".join(out)


def _read_lines(text: str) -> list[str]:
    text = _drop_comments(text[:MAX_REPORT_CHARS])
    out: list[str] = []
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = _TIMESTAMP.sub("", raw.rstrip())
        if line.lstrip().startswith(">") and not line.lstrip().startswith(">>>"):
            line = _QUOTE.sub("", line)
        out.extend(piece.rstrip() for piece in split_inline(line))
    return out


def _kinds(lines: Sequence[str]) -> tuple[list[int], list[int]]:
    """Each line's kind (prose, code, fence mark) and code block number (-1 for prose):
    fenced blocks, and indented ones (four spaces or a tab after a blank line, not under
    a list item, whose continuation lines are indented too)."""
    kinds = [_PROSE] * len(lines)
    blocks = [-1] * len(lines)
    fence: str | None = None
    block = -1
    prev_blank = True  # the previous line was blank (or this is the first)
    indented_open = False  # an indented block is open (blank lines do not end it)
    in_list = False  # the last prose line was a list item
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if fence is not None:
            g = m.group(1) if m else ""
            if m and g[0] == fence[0] and len(g) >= len(fence) and not m.group(2).strip():
                fence = None
                kinds[i] = _MARK
            else:
                kinds[i], blocks[i] = _CODE, block
            continue
        if m:
            fence = m.group(1)
            block += 1
            kinds[i] = _MARK
            prev_blank = indented_open = False
            continue
        if not line.strip():
            prev_blank = True
            continue
        if line.startswith(("    ", "\t")) and not in_list and (prev_blank or indented_open):
            if not indented_open:
                block += 1
                indented_open = True
            kinds[i], blocks[i] = _CODE, block
        elif not line.startswith((" ", "\t")):
            indented_open = False
            in_list = bool(_LIST_ITEM.match(line))
        prev_blank = False
    return kinds, blocks


# -- identifiers, code names, mentions ------------------------------------------------------

_SPAN = re.compile(r"`([^`\n]+)`")
_IDENT = re.compile(r"^@?[A-Za-z_$][\w$]*(?:(?:\.|::|->|#)[A-Za-z_$][\w$]*)*(?:\(\))?$")
_CALL = re.compile(
    r"(?<![\w$.])([A-Za-z_$][\w$]*(?:\s*(?:\.|::|->|\?\.)\s*[A-Za-z_$][\w$]*)*)\s*\("
)
_METHOD = re.compile(r"\)\s*\.\s*([A-Za-z_$][\w$]*)\s*\(")
_DOTTED = re.compile(r"(?<![\w$.])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_DEFINED = re.compile(
    r"\b(?:def|class|function|fn|func|interface|struct|enum|trait|type)\s+([A-Za-z_$][\w$]*)"
)
_BASES = re.compile(r"\bclass\s+[A-Za-z_$][\w$]*\s*\(([^()\n]*)\)")
_EXTENDS = re.compile(r"\b(?:extends|implements)\s+([A-Za-z_$][\w$.]*)")
_PY_FROM = re.compile(r"^\s*from\s+([\w.]+)\s+import\s+\(?([\w\s,*]+)\)?", re.M)
_PY_IMPORT = re.compile(r"^\s*import\s+([\w.]+(?:\s*,\s*[\w.]+)*)\s*$", re.M)
_JS_IMPORT = re.compile(r"^\s*import\s+\{([^{}\n]*)\}\s*from", re.M)
_JVM_IMPORT = re.compile(r"^\s*import\s+(?:static\s+)?([\w.]+?)(?:\.\*)?;?\s*$", re.M)
_PROMPT = re.compile(r"^(?:>>>|\.\.\.|\$|>|In \[[0-9]+\]:) ?", re.M)
_MENTION = re.compile(
    r"(?<![\w/.\\-])((?:[\w.-]+/)*[\w-][\w.-]*\.([A-Za-z][A-Za-z0-9+]{0,9}))"
    r"(?::([0-9]{1,9})(?:-[0-9]{1,9})?)?(?![\w/])"
)
_BLOB = re.compile(r"github\.com/[\w.-]+/[\w.-]+/blob/[^/\s]+/([^\s#?)\]>]+)(?:#L([0-9]{1,9}))?")


def _add(out: dict[str, None], name: str) -> None:
    if len(out) < MAX_NAMES and name and name not in _KEYWORDS:
        out.setdefault(name, None)


def _squash(name: str) -> str:
    return re.sub(r"\s+", "", name)


def _code_names(code: str, out: dict[str, None]) -> None:
    """Names the code calls or uses, in order: calls, methods after ``)``, imports, base
    classes, dotted uses; names it defines itself left out."""
    code = _PROMPT.sub("", code)
    defined = set(_DEFINED.findall(code))
    found: dict[str, None] = {}
    for m in _CALL.finditer(code):
        found.setdefault(_squash(m.group(1)), None)
    for m in _METHOD.finditer(code):
        found.setdefault(m.group(1), None)
    for m in _PY_FROM.finditer(code):
        found.setdefault(m.group(1), None)
        for name in m.group(2).replace("\n", ",").split(","):
            name = name.strip().split(" as ")[0].strip()
            if name and name != "*":
                found.setdefault(name, None)
    for pattern in (_PY_IMPORT, _JVM_IMPORT):
        for m in pattern.finditer(code):
            for name in m.group(1).split(","):
                found.setdefault(name.strip(), None)
    for m in _JS_IMPORT.finditer(code):
        for name in m.group(1).split(","):
            found.setdefault(name.strip().split(" as ")[0].strip(), None)
    for m in _BASES.finditer(code):
        for name in m.group(1).split(","):
            found.setdefault(name.strip().split("=")[0].strip(), None)
    for m in _EXTENDS.finditer(code):
        found.setdefault(m.group(1), None)
    for m in _DOTTED.finditer(code):
        name = m.group(0)
        if "." + name.rsplit(".", 1)[1].lower() not in EXTENSIONS:  # setup.py is a file
            found.setdefault(name, None)
    for name in found:
        if name not in defined and _IDENT.match(name):
            _add(out, name)


def _mentions(text: str, out: dict[tuple[str, int | None], None]) -> None:
    for m in _BLOB.finditer(text):
        if len(out) < MAX_NAMES:
            out.setdefault((m.group(1), _line(m.group(2))), None)
    for m in _MENTION.finditer(text):
        if len(out) < MAX_NAMES and "." + m.group(2).lower() in EXTENSIONS:
            if "/" in m.group(1) or m.group(3) or not m.group(1)[:1].isdigit():
                out.setdefault((m.group(1), _line(m.group(3))), None)


def _line(text: str | None) -> int | None:
    n = int(text) if text else 0
    return n if n > 0 else None


# -- prose segments ---------------------------------------------------------------------

_CLEAN = (
    (re.compile(r"!\[[^\[\]\n]*\]\([^()\s]*\)"), ""),  # images
    (re.compile(r"\[([^\[\]\n]*)\]\([^()\s]*\)"), r"\1"),  # links: their text
    (re.compile(r"(?<![\w+.-])[A-Za-z][\w+.-]*://\S*"), ""),  # bare URLs
    (re.compile(r"</?[A-Za-z][^<>\n]*>"), ""),  # HTML tags (<details>, <br>)
    (re.compile(r"^\s{0,3}#{1,6}\s+"), ""),  # heading marks
    (re.compile(r"^\s*(?:[-*+]|[0-9]{1,3}[.)])\s+(?:\[[ xX]\]\s+)?"), ""),  # list marks
    (re.compile(r"\*\*|__|`"), ""),  # emphasis, code spans (their text stays)
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[^\W\d_]{2}")


def _clean(line: str) -> str:
    for pattern, repl in _CLEAN:
        line = pattern.sub(repl, line)
    return " ".join(line.split())


def _paragraphs(lines: Sequence[str], prose: Iterable[int]) -> list[str]:
    """Prose lines joined into paragraphs: a blank line, code or a traceback ends one."""
    paras: list[str] = []
    cur: list[str] = []
    last = -2
    for i in prose:
        text = _clean(lines[i])
        heading = bool(_HEADING.match(lines[i]))
        if i != last + 1 or not text or heading:
            if cur:
                paras.append(" ".join(cur))
            cur = []
        if text:
            cur.append(text)
        if heading:  # a heading is a paragraph of its own
            paras.extend(cur)
            cur = []
        last = i
    if cur:
        paras.append(" ".join(cur))
    return paras


def _pieces(paragraph: str, limit: int) -> list[str]:
    """A paragraph as pieces of at most ``limit`` characters: itself, its sentences, or
    (a sentence longer than the window) cuts at the last space before the limit."""
    if len(paragraph) <= limit:
        return [paragraph]
    out: list[str] = []
    for sentence in _SENTENCE_END.split(paragraph):
        while len(sentence) > limit:
            cut = sentence.rfind(" ", 0, limit + 1)
            cut = cut if cut > limit // 2 else limit
            out.append(sentence[:cut].strip())
            sentence = sentence[cut:].strip()
        if sentence:
            out.append(sentence)
    return out


def segments(paragraphs: Iterable[str], limit: int = SEGMENT_CHARS) -> list[str]:
    """Paragraphs packed into segments of at most ``limit`` characters, in order, on
    paragraph (else sentence) boundaries; segments without a word are dropped."""
    out: list[str] = []
    cur = ""
    for para in paragraphs:
        for piece in _pieces(para, limit):
            if cur and len(cur) + 1 + len(piece) > limit:
                out.append(cur)
                cur = piece
            else:
                cur = f"{cur}\n{piece}" if cur else piece
    if cur:
        out.append(cur)
    return [s for s in out if _WORD.search(s)]


# -- the report ---------------------------------------------------------------------------


def analyse_report(text: str) -> Report | None:
    """``text`` read as a bug report (see :class:`Report`), or None for a short ordinary
    query: one line under :data:`SHORT_QUERY_CHARS` characters without a traceback frame.
    Reads at most :data:`MAX_REPORT_CHARS` characters; never raises."""
    stripped = text.strip()
    if not stripped:
        return None
    short = len(stripped) < SHORT_QUERY_CHARS and "\n" not in stripped and "\r" not in stripped
    lines = _read_lines(stripped)
    found = scan(lines)
    if short and not found.frames:
        return None
    kinds, blocks = _kinds(lines)
    trace = found.trace_lines

    errors: dict[tuple[str, str], ErrorMessage] = {}
    for err in found.errors:
        key = (err.type, err.message)
        if key not in errors or (errors[key].trace is None and err.trace is not None):
            errors[key] = err

    identifiers: dict[str, None] = {}
    mentions: dict[tuple[str, int | None], None] = {}
    prose = [i for i, k in enumerate(kinds) if k == _PROSE and i not in trace]
    for i in prose:
        line = lines[i]
        if "`" in line:
            for m in _SPAN.finditer(line):
                span = m.group(1).strip()
                if _IDENT.match(span):
                    _add(identifiers, span.lstrip("@").removesuffix("()"))
                elif "(" in span:
                    _code_names(span, identifiers)
                stated = parse_error(span)
                if stated is not None:
                    errors.setdefault((stated.type, stated.message), stated)
        _mentions(line, mentions)

    code_lines: dict[int, list[str]] = {}
    for i, k in enumerate(kinds):
        if k == _CODE and i not in trace:
            code_lines.setdefault(blocks[i], []).append(lines[i])
    blocks_text = (textwrap.dedent("\n".join(b)).strip("\n") for b in code_lines.values())
    code = tuple(t for t in blocks_text if t.strip())
    code_names: dict[str, None] = {}
    for block in code:
        _code_names(block, code_names)
        _mentions(block, mentions)

    return Report(
        frames=tuple(found.frames),
        errors=tuple(errors.values()),
        identifiers=tuple(identifiers),
        code_names=tuple(code_names),
        mentions=tuple(Mention(p, n) for p, n in mentions),
        code=code,
        segments=tuple(segments(_paragraphs(lines, prose))),
    )
