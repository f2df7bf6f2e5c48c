"""A chunk's header: a short, natural-language-shaped text embedded beside its body.

A question such as "how is the wait between attempts computed" reads like a docstring,
not like a function body. The body vector mixes the question's words with every line of
code; a second vector over a few words that *describe* the chunk matches such questions
better, and the dense leg scores a chunk by both cosines (``search.rank.with_header``).

The header holds, in this order: the chunk's qualified name in words, its first
docstring or leading-comment sentence, and the words of its path. Everything is taken
from the chunk's own text, so a header changes exactly when its chunk does.

Measured with ``evals/explore_headers.py`` on the golden sets' dev halves (dense leg
alone, packaged MiniLM): body only MRR@10 0.459; scored 0.75 body + 0.25 header 0.497
with this recipe, 0.493 with the signature added (and a longer text to embed). A header
costs about a tenth of a body to embed (it is a tenth as long).
"""

from __future__ import annotations

import re

from scrydb.tokens import split_identifier

#: Bump when the header text changes: an index with another version re-derives its headers
#: and re-embeds them (the body vectors stay).
HEADER_VERSION = "1"
#: The parts of :func:`header_parts` that make the embedded header, in order.
HEADER_PARTS = ("name", "doc", "path")

#: Longest docstring sentence and signature kept, in characters.
DOC_CHARS = 200
SIGNATURE_CHARS = 160
#: Lines read from the top of a chunk looking for its signature and docstring.
SCAN_LINES = 40
#: Longest text of a chunk's inner comments (:func:`inner_comments`), in characters.
COMMENT_CHARS = 300

_COMMENT_START = re.compile(
    r"^\s*(///?!?|/\*\*?!?|\*/?|#(?![!\[]|include|define|pragma|if|endif|else)|--|;;+|%)\s?"
)
_DOCSTRING = re.compile(r'^\s*[rRbBuU]?("""|\'\'\')')
_DECORATOR = re.compile(r"^\s*(@|#\[)")
_TAG_LINE = re.compile(r"^\s*[@\\](?!brief\b)\w+")
_BRIEF = re.compile(r"^\s*[@\\]brief\s+")
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)`'\"])[.!?](\s|$)")
_NOISE = re.compile(r"^[\s\-=*/#~_+]*$")
_PATH_PART = re.compile(r"[/\\.\-\s]+")
#: Comments that talk to tools, not to readers.
_PRAGMA = re.compile(
    r"^(istanbul|eslint|prettier|noqa|type:|pylint|nolint|clang-format|@ts-|jshint|"
    r"fmt:|pragma|c8 |tslint|coverage|skipcq|nosec|region|endregion|-\*-)",
    re.IGNORECASE,
)
#: Two words in a row (the first of three letters or more): a comment line without them is
#: commented-out code (``x = f(y)``, ``return err``) or a stray token, not prose.
_PROSE = re.compile(r"[A-Za-z]{3,}\s+[A-Za-z]{2,}")
_LICENCE = re.compile(r"copyright|licen[cs]e|SPDX|all rights reserved", re.IGNORECASE)
_HEADING = re.compile(r"^\s*(#{1,6}\s|=+\s*$|-+\s*$|```|~~~|\[.*\]\s*$)")


def header(path: str, symbol: str | None, kind: str, content: str) -> tuple[str, str] | None:
    """(key, text) of a chunk's header, or None when it would say nothing the body's vector
    does not (a window with neither a name nor a comment). The text is what is embedded;
    the key, the text without its path words, identifies the vector: like a body's vector
    (keyed by the chunk's content, though its embedded text names the path), a header
    vector is reused when its chunk moves to another file."""
    parts = header_parts(path, symbol, kind, content)
    if not parts["name"] and not parts["doc"]:
        return None
    key = "\n".join(parts[k] for k in HEADER_PARTS if k != "path" and parts[k])
    return key, "\n".join(parts[k] for k in HEADER_PARTS if parts[k])


def header_text(path: str, symbol: str | None, kind: str, content: str) -> str | None:
    """The header embedded beside a chunk, or None when it has none (see :func:`header`)."""
    h = header(path, symbol, kind, content)
    return h[1] if h else None


def header_parts(path: str, symbol: str | None, kind: str, content: str) -> dict[str, str]:
    """The pieces of a header, in order: name (words), doc, signature, path (words)."""
    lines = content.splitlines()[:SCAN_LINES]
    if kind == "section":  # prose: the heading is the symbol, the first sentence the doc
        signature = ""
        doc = _first_sentence([ln for ln in lines if not _HEADING.match(ln)])
    else:
        at = _definition_line(lines, symbol)
        doc_before, sig_at = _leading_comment(lines[at:] if at is None else _above(lines, at))
        if at is not None:
            sig_at = at
        signature, after = _signature(lines, sig_at)
        doc = doc_before or _docstring(lines, after)
    return {
        "name": _name_words(symbol) if symbol else "",
        "doc": doc,
        "signature": signature,
        "path": path_words(path),
    }


def inner_comments(content: str) -> str:
    """The chunk's own comments as one short text: the first sentence of each comment
    block after its leading doc comment, in order, "; "-joined, up to COMMENT_CHARS (whole
    sentences). Licence lines, tool pragmas, commented-out code and one-word remarks are
    left out; "" when nothing is left.

    Authors comment the steps of a function in the words a question uses ("skip flags and
    their values", "hold the partial line until the rest arrives"); embedded apart from
    the code around them (``chunk.windows.view_texts``) they match such questions where the
    body's vector does not. Measured on the golden sets' dev halves (scry-code-minilm,
    learned fusion, MRR@10): fused 0.739 -> 0.752, dense 0.559 -> 0.596; 200 characters
    0.742, 500 0.750 (evals/RESULTS.md).
    """
    lines = content.splitlines()
    lead = _leading_comment(lines)[0]
    seen = {lead} if lead else set()
    text = ""
    i = 0
    while i < len(lines):
        if not _is_comment(lines[i]):
            i += 1
            continue
        block, j = _comment_lines(lines, i, above=False)
        i = max(j, i + 1)
        sentence = _first_sentence([t for t in block if _PROSE.search(t)])
        if (
            len(sentence) < 9
            or sentence in seen
            or not _PROSE.search(sentence)
            or _LICENCE.search(sentence)
        ):
            continue
        seen.add(sentence)
        if len(text) + len(sentence) + 2 > COMMENT_CHARS:
            break
        text = f"{text}; {sentence}" if text else sentence
    return text


def path_words(path: str) -> str:
    """The words of a path, extension dropped: ``src/http_client/RetryPolicy.ts`` ->
    ``src http client retry policy``."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    out: list[str] = []
    for piece in _PATH_PART.split(stem):
        out.extend(split_identifier(piece))
    return " ".join(out)


def _name_words(symbol: str) -> str:
    out: list[str] = []
    for name in symbol.split(","):
        words: list[str] = []
        for piece in re.split(r"[.:#<>()\s]+", name):
            words.extend(split_identifier(piece))
        if words:
            out.append(" ".join(words))
    return ", ".join(out)


def _strip_comment(line: str) -> str:
    text = _COMMENT_START.sub("", line, count=1).strip()
    text = text.removesuffix("*/").strip()
    return text


def _is_comment(line: str) -> bool:
    s = line.lstrip()
    if not s:
        return False
    return bool(_COMMENT_START.match(line)) and not s.startswith(("#include", "#define"))


def _definition_line(lines: list[str], symbol: str | None) -> int | None:
    """Index of the first code line that names the chunk's (first) symbol, when it is not
    the chunk's first code line (a chunk can open with imports or a merged neighbour)."""
    if not symbol:
        return None
    bare = re.split(r"[.:#]+", symbol.split(",")[0].strip())[-1]
    if not bare:
        return None
    pat = re.compile(rf"(?<![A-Za-z0-9_$]){re.escape(bare)}(?![A-Za-z0-9_$])")
    for i, line in enumerate(lines):
        if line.strip() and not _is_comment(line) and pat.search(line):
            return i
    return None


def _above(lines: list[str], at: int) -> list[str]:
    """The comment and decorator lines directly above line ``at`` (and the line itself)."""
    i = at
    while i > 0:
        prev = lines[i - 1]
        if _is_comment(prev) or _DECORATOR.match(prev):
            i -= 1
            continue
        break
    return lines[i : at + 1]


def _comment_lines(lines: list[str], i: int, *, above: bool) -> tuple[list[str], int]:
    """The comment lines from line ``i`` on (markers stripped) and the index after them.
    ``above``: the block above a definition, where blank lines and decorators may sit
    between comment and code; otherwise the run ends at the first non-comment line."""
    texts: list[str] = []
    in_block = False
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if above and not s:
            if texts:
                in_block = False
            i += 1
            continue
        if in_block or _is_comment(line):
            if s.startswith("/*") and "*/" not in s[2:]:
                in_block = True
            elif in_block and "*/" in s:
                in_block = False
            texts.append(_strip_comment(line))
            i += 1
            continue
        if above and _DECORATOR.match(line):
            i += 1
            continue
        break
    return texts, i


def _leading_comment(lines: list[str]) -> tuple[str, int]:
    """(first sentence of the comment block above the code, index of the first code line)."""
    texts, i = _comment_lines(lines, 0, above=True)
    return _first_sentence(texts), i


def _signature(lines: list[str], at: int) -> tuple[str, int]:
    """(the code line at ``at``, continued while brackets are open; next line's index)."""
    if at >= len(lines):
        return "", at
    out: list[str] = []
    depth = 0
    i = at
    while i < len(lines) and i < at + 6:
        s = lines[i].strip()
        out.append(s)
        depth += s.count("(") + s.count("[") - s.count(")") - s.count("]")
        i += 1
        if depth <= 0:
            break
    sig = " ".join(out)
    sig = re.sub(r"\s+", " ", sig).rstrip("{").strip()
    if len(sig) > SIGNATURE_CHARS:
        sig = sig[:SIGNATURE_CHARS].rsplit(" ", 1)[0]
    return sig, i


def _docstring(lines: list[str], at: int) -> str:
    """First sentence of a docstring or comment opening the body at ``at``."""
    i = at
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        return ""
    m = _DOCSTRING.match(lines[i])
    if m:
        quote = m.group(1)
        first = lines[i][m.end() :]
        texts = []
        if quote in first:
            return _first_sentence([first.split(quote, 1)[0]])
        texts.append(first)
        for line in lines[i + 1 :]:
            if quote in line:
                texts.append(line.split(quote, 1)[0])
                break
            texts.append(line)
        return _first_sentence(texts)
    return _first_sentence(_comment_lines(lines, i, above=False)[0])


def _first_sentence(texts: list[str]) -> str:
    """The first sentence of a comment's lines: tag lines (``@param``) and rules dropped,
    a Doxygen ``\\brief`` unwrapped, cut at the first sentence end or blank line."""
    words: list[str] = []
    for t in texts:
        t = t.strip()
        if _BRIEF.match(t):
            t = _BRIEF.sub("", t)
        elif _TAG_LINE.match(t):
            if words:
                break
            continue
        if _NOISE.match(t) or _PRAGMA.match(t):
            if words:
                break
            continue
        words.append(t)
        joined = " ".join(words)
        m = _SENTENCE_END.search(joined)
        if m:
            return joined[: m.start() + 1][:DOC_CHARS]
        if len(joined) >= DOC_CHARS:
            break
    text = " ".join(words).strip()
    if len(text) > DOC_CHARS:
        text = text[:DOC_CHARS].rsplit(" ", 1)[0]
    return text
