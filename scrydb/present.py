"""Turning results into text for people and agents (JSON lives on the result types).

Text output is compact: one header line per hit (``path:start-end  kind symbol``) and the
snippet with line numbers, the anchor line marked with ``>``. Colour only on a TTY and
never with ``NO_COLOR``.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from scrydb.results import Hit, ReadResult, Results

#: Rough characters per token of code for ``--budget`` (the MiniLM/BERT tokenizer gives
#: about 3.2 on source code; budgeting with 3.0 errs on the small side).
CHARS_PER_TOKEN = 3.0
#: Fewest snippet lines a hit keeps when a budget shortens snippets.
MIN_SNIPPET_LINES = 3


def use_colour(stream: TextIO) -> bool:
    """Colour only for a terminal, and never when NO_COLOR is set."""
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def _c(text: str, code: str, colour: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text


#: How a truncated hit tells the reader to get the whole chunk (the MCP server passes
#: its own wording: the ``read`` tool instead of the CLI).
CLI_READ_HINT = "  … (scry read {path}:{start}-{end} for the whole chunk)"


def format_hit(
    hit: Hit,
    colour: bool = False,
    numbers: bool = True,
    explain: bool = False,
    read_hint: str = CLI_READ_HINT,
) -> str:
    """One hit as text; ``read_hint`` (with ``{path}``, ``{start}``, ``{end}``) ends a
    truncated one."""
    head = _c(f"{hit.path}:{hit.start_line}-{hit.end_line}", "35", colour)
    label = " ".join(x for x in (hit.kind, hit.symbol or "") if x)
    lines = [f"{head}  {_c(label, '1', colour)}".rstrip()]
    if explain and hit.explain:
        e = hit.explain
        parts = [
            f"score={e['score']}",
            f"lex={e['lexical_rank']}",
            f"bm25={e['bm25']}",
            f"dense={e['dense_rank']}",
            f"cos={e['cosine']}",
        ]
        parts += [f"+{k}={v}" for k, v in e["votes"].items()]
        if e.get("rerank") is not None:
            parts.append(f"rerank={e['rerank']}#{e['rerank_rank']}")
        parts += [f"*{k}={v}" for k, v in e["factors"].items()]
        lines.append("  " + _c(" ".join(parts), "2", colour))
    width = len(str(hit.snippet_start + hit.snippet.count("\n")))
    for i, text in enumerate(hit.snippet.split("\n")):
        n = hit.snippet_start + i
        if numbers:
            mark = ">" if n == hit.anchor_line else " "
            lines.append(f"{mark}{n:>{width}}  {text}".rstrip())
        else:
            lines.append(text.rstrip())
    if hit.truncated and read_hint:
        hint = read_hint.format(path=hit.path, start=hit.start_line, end=hit.end_line)
        lines.append(_c(hint, "2", colour))
    return "\n".join(lines)


def format_results(res: Results, colour: bool = False, explain: bool = False) -> str:
    """A result list as text (hits separated by blank lines)."""
    return "\n\n".join(format_hit(h, colour, explain=explain) for h in res)


def format_notes(res: Results) -> list[str]:
    """Lines for stderr: notes, weak-result warning, suggestions."""
    out = [f"note: {n}" for n in res.notes]
    if not res:
        out.append("no results")
    elif res.weak:
        out.append("note: weak match: nothing scored well; the answer may not be in the index")
    if res.suggestions:
        out.append("did you mean: " + ", ".join(res.suggestions))
    return out


def estimate_tokens(text: str) -> int:
    """Cheap token estimate for budgets (see CHARS_PER_TOKEN)."""
    return int(len(text) / CHARS_PER_TOKEN) + 1


def fit_budget(res: Results, budget: int, render: Any = None) -> Results:
    """Shorten snippets, then drop hits from the end, until the text fits ``budget`` tokens."""
    render = render or (lambda r: format_results(r))
    if estimate_tokens(render(res)) <= budget:
        return res
    # First shrink snippets around their anchors, then drop the tail.
    for radius in (8, 4, 2, 1):
        for h in res:
            _shrink(h, radius)
        if estimate_tokens(render(res)) <= budget:
            return res
    while len(res) > 1 and estimate_tokens(render(res)) > budget:
        res.pop()
    return res


def _shrink(h: Hit, radius: int) -> None:
    lines = h.snippet.split("\n")
    if len(lines) <= max(MIN_SNIPPET_LINES, 2 * radius + 1):
        return
    anchor = h.anchor_line - h.snippet_start
    lo = max(0, anchor - radius)
    hi = min(len(lines), lo + 2 * radius + 1)
    h.snippet = "\n".join(lines[lo:hi])
    h.snippet_start += lo
    h.truncated = True


def format_read(r: ReadResult, numbers: bool = True) -> str:
    """``scry read`` output."""
    if not numbers:
        return r.text
    width = len(str(r.end_line))
    return "\n".join(
        f"{r.start_line + i:>{width}}  {line}".rstrip() for i, line in enumerate(r.text.split("\n"))
    )


def format_locate(matches: list[dict[str, Any]], colour: bool = False) -> str:
    """``scry locate`` output: grep-like ``path:line:col: text``, with the chunk."""
    out = []
    for m in matches:
        where = _c(f"{m['path']}:{m['line']}:{m['column']}", "35", colour)
        sym = f"  [{m['kind']} {m['symbol']}]" if m.get("symbol") else ""
        out.append(f"{where}: {m['text'].strip()}{_c(sym, '2', colour)}")
    return "\n".join(out)


def err(msg: str) -> None:
    """A diagnostic line on stderr."""
    print(msg, file=sys.stderr, flush=True)
