"""Turning results into text for people and agents (JSON lives on the result types).

Text output is compact: one header line per hit (``path:start-end  kind symbol``) and the
snippet with line numbers, the anchor line marked with ``>``. Colour only on a TTY and
never with ``NO_COLOR``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TextIO

from scrydb.errors import ScryError, shown
from scrydb.paths import split_target
from scrydb.results import READ_MAX_LINES, Hit, Match, ReadResult, Results

if TYPE_CHECKING:
    from scrydb.catalog import IndexedRepo
    from scrydb.index import Index
    from scrydb.status import Status
    from scrydb.sync import SyncReport

#: Rough characters per token of code for ``--budget`` (the MiniLM/BERT tokenizer gives
#: about 3.2 on source code; budgeting with 3.0 errs on the small side).
CHARS_PER_TOKEN = 3.0
#: Fewest snippet lines a hit keeps when a budget shortens snippets.
MIN_SNIPPET_LINES = 3


def use_colour(stream: TextIO) -> bool:
    """Colour only for a terminal, and never when NO_COLOR is set."""
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def show_name(name: str) -> str:
    """A file or symbol name as one printable line: control characters (a newline or an
    escape sequence in a file name) are shown escaped, as Python writes them."""
    return shown(name)


def _c(text: str, code: str, colour: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text


#: How a truncated hit tells the reader to get the whole chunk (the MCP server passes
#: its own wording: the ``read`` tool instead of the CLI).
CLI_READ_HINT = "  … (scry read {path}:{start}-{end} for the whole chunk)"
#: ... and a hit of a search over several repositories (its root is in the
#: "repositories:" line), in the CLI and the tools alike.
REPO_READ_HINT = "  … (the whole chunk: lines {start}-{end} of {path} in {repo})"


def format_hit(
    hit: Hit,
    colour: bool = False,
    numbers: bool = True,
    explain: bool = False,
    read_hint: str = CLI_READ_HINT,
) -> str:
    """One hit as text; ``read_hint`` (with ``{path}``, ``{start}``, ``{end}``) ends a
    truncated one."""
    where = f"{show_name(hit.path)}:{hit.start_line}-{hit.end_line}"
    head = _c(f"{show_name(hit.repo)}:{where}" if hit.repo else where, "35", colour)
    label = show_name(" ".join(x for x in (hit.kind, hit.symbol or "") if x))
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
        if e.get("report"):
            lines.append("  " + _c(_report_parts(e["report"]), "2", colour))
    width = len(str(hit.snippet_start + hit.snippet.count("\n")))
    for i, text in enumerate(hit.snippet.split("\n")):
        n = hit.snippet_start + i
        if numbers:
            mark = ">" if n == hit.anchor_line else " "
            lines.append(f"{mark}{n:>{width}}  {text}".rstrip())
        else:
            lines.append(text.rstrip())
    if hit.truncated and read_hint:
        template = REPO_READ_HINT if hit.repo else read_hint
        hint = template.format(
            path=show_name(hit.path), start=hit.start_line, end=hit.end_line, repo=hit.repo
        )
        lines.append(_c(hint, "2", colour))
    return "\n".join(lines)


def _report_parts(part: dict[str, Any]) -> str:
    """``--explain``'s line of the parts of a bug report a hit matched."""
    out = [f"frame {f}" for f in part.get("frames", ())]
    out += [f"message {m!r}" for m in part.get("messages", ())]
    if part.get("names"):
        out.append("names " + ", ".join(part["names"]))
    if part.get("segments"):
        out.append("segment cos " + " ".join(f"{c:.3f}" for c in part["segments"]))
    if part.get("file_rank"):
        out.append(f"file #{part['file_rank']} by summed evidence")
    return "report: " + ("; ".join(out) if out else "no frame, message or name")


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
    if res.repos:
        out.append("repositories: " + ", ".join(f"{n} ({r})" for n, r in res.repos.items()))
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
    if estimate_tokens(render(res)) > budget:  # one hit left: its best line alone
        for h in res:
            _shrink(h, 0, floor=1)
        need = estimate_tokens(render(res))
        if need > budget:
            res.notes.append(
                f"--budget {budget} is below the smallest answer (one hit with its best line, "
                f"about {need} tokens)"
            )
    return res


def _shrink(h: Hit, radius: int, floor: int = MIN_SNIPPET_LINES) -> None:
    """Cut ``h``'s snippet to ``radius`` lines either side of its anchor (never below
    ``floor`` lines)."""
    lines = h.snippet.split("\n")
    if len(lines) <= max(floor, 2 * radius + 1):
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


def read_more(r: ReadResult) -> str:
    """What to run for the lines after a capped ``scry read``."""
    return (
        f"capped at {READ_MAX_LINES} lines: `scry read {r.path}:{r.end_line + 1}-"
        f"{r.end_line + READ_MAX_LINES}` for the next ones"
    )


def format_locate(matches: list[Match], colour: bool = False) -> str:
    """``scry locate`` output: grep-like ``path:line:col: text``, with the chunk."""
    out = []
    for m in matches:
        where = _c(f"{show_name(m.path)}:{m.line}:{m.column}", "35", colour)
        sym = f"  [{m.kind} {show_name(m.symbol)}]" if m.symbol else ""
        out.append(f"{where}: {m.text.strip()}{_c(sym, '2', colour)}")
    return "\n".join(out)


def err(msg: str) -> None:
    """A diagnostic line on stderr."""
    print(msg, file=sys.stderr, flush=True)


# -- answers of the MCP tools ------------------------------------------------------------

#: Search output budget: about this many tokens per requested hit (10 hits ~ 1,500).
TOKENS_PER_HIT = 150
#: ... but never less than this (a 2-hit answer keeps readable snippets).
MIN_BUDGET = 600
#: Most characters one ``read`` returns (lines: ``results.READ_MAX_LINES``).
READ_MAX_CHARS = 40_000

TOOL_INSTRUCTIONS = (
    "scry: ranked code search over one repository ({root}). For any question about this "
    "code (where / how / what is X), call `search` first, then `read` a hit to see all of "
    "it; `locate` finds exact strings; `related` finds similar code; `status` says how "
    "fresh the index is; `map` shows the most central definitions (read it first in an "
    "unfamiliar repository); `callers`, `callees` and `refs` follow the code graph. Paths "
    "are relative to the repository root."
)

#: What each tool is for, in the words the agent reads (few words: they cost context in
#: every conversation).
TOOL_DESCRIPTIONS = {
    "search": (
        "Find code by meaning or by name: the best chunks of this repository, ranked "
        "(path:lines, kind, symbol, snippet). Use it first for any question about the code; "
        "then `read` a hit to see all of it. A whole issue, error message or traceback is "
        "welcome as the query: pass it as written."
    ),
    "read": (
        "Lines of an indexed file, served from the index. Give a hit's start_line for its "
        "whole chunk, start_line and end_line for a range, neither for the file's start "
        f"(at most {READ_MAX_LINES} lines per call)."
    ),
    "related": (
        "Code most similar to the chunk at file:line, other files first: sibling "
        "implementations, the same pattern elsewhere, likely tests."
    ),
    "locate": (
        "Exact occurrences of a literal string (no regex) in the indexed files, as "
        "path:line:col with the enclosing symbol. Use for known strings; for questions "
        "use `search`."
    ),
    "status": (
        "What is indexed and how fresh: files, chunks, pending embeddings, the background "
        "sync and the file watcher."
    ),
    "callers": (
        "Who calls a definition: symbol (`parse`, `Client.send`) or `path:line`. Each row "
        "is the call site and the definition around it, with the resolution's confidence "
        "(ambiguous calls list their candidates). Use instead of grepping for a name."
    ),
    "callees": (
        "What a definition calls (symbol or `path:line`), each call resolved to the "
        "definition it reaches, with a confidence."
    ),
    "refs": (
        "A symbol's definitions and every reference to it: calls, imports, base classes, "
        "type uses, decorators."
    ),
    "map": (
        "A map of the repository: its most central definitions (PageRank over the "
        "references) with their signatures, within a token budget; `path` or `symbols` "
        "focus it. Call it first in an unfamiliar repository."
    ),
}

#: The line under a cut snippet: how to get the whole chunk through the tools.
TOOL_READ_HINT = '  … read(file="{path}", start_line={start}) gives the whole chunk'


def format_tool_hits(res: list[Hit]) -> str:
    """Hits as the tools print them: ``path:start-end  kind symbol``, then the snippet
    with line numbers, the anchor line marked ``>`` (the CLI's format), and a read hint
    when the snippet was cut."""
    return "\n\n".join(format_hit(h, read_hint=TOOL_READ_HINT) for h in res)


def budget_for(limit: int) -> int:
    """Token budget of a search answer with ``limit`` hits."""
    return max(MIN_BUDGET, TOKENS_PER_HIT * limit)


def fit_tool_hits(res: Results, limit: int) -> Results:
    """Shorten snippets (then drop tail hits) until the text fits ``budget_for(limit)``."""
    return fit_budget(res, budget_for(limit), render=format_tool_hits)


def _notes(res: Results, embedding: bool) -> list[str]:
    """The notes of a tool answer; ``embedding``: the server is computing embeddings now
    (said only when some chunks of this answer wait for them)."""
    lines = format_notes(res)
    if embedding and res.pending:
        lines.append("note: scry serve is computing those embeddings now")
    return lines


def json_text(obj: Any) -> str:
    """The ``--json`` text of any answer (what ``--budget`` counts for JSON)."""
    return json.dumps(obj, indent=2, ensure_ascii=False)


def format_search(
    res: Results, limit: int, extra_notes: list[str] | None = None, embedding: bool = False
) -> str:
    """The ``search`` / ``related`` answer: hits fitted to the budget, then notes
    (``embedding``: the server is computing missing embeddings now)."""
    fit_tool_hits(res, limit)
    parts = [format_tool_hits(res)] if res else []
    notes = [*(extra_notes or []), *_notes(res, embedding)]
    if not res and res.query:
        notes = [n if n != "no results" else f"no results for {res.query!r}" for n in notes]
    if notes:
        parts.append("\n".join(notes))
    return "\n\n".join(parts)


def read_text(ix: Index, file: str, start: int | None, end: int | None) -> str:
    """The ``read`` tool's answer: ``path:A-B  (lang)`` then numbered lines, capped at
    READ_MAX_LINES / READ_MAX_CHARS with a hint for the next page."""
    path, start, end = split_target(file, start, end)
    r = ix.read(path, start, end, max_lines=READ_MAX_LINES)  # one line: its whole chunk
    if not r.chunks:
        raise ScryError(f"no indexed lines in {r.path} at {start or 1}-{end or start or 1}")
    body = format_read(r)
    truncated = r.truncated
    if len(body) > READ_MAX_CHARS:
        kept = body[:READ_MAX_CHARS].rsplit("\n", 1)[0]
        last = r.start_line + kept.count("\n")
        body, truncated = kept, True
        r = replace(r, end_line=last)
    head = f"{show_name(r.path)}:{r.start_line}-{r.end_line}" + (f"  ({r.lang})" if r.lang else "")
    out = [head, body]
    if truncated:
        out.append(
            f'… capped: read(file="{r.path}", start_line={r.end_line + 1}, '
            f"end_line={r.end_line + READ_MAX_LINES}) for more"
        )
    return "\n".join(out)


def locate_text(matches: list[Match], text: str, limit: int) -> str:
    """The ``locate`` tool's answer."""
    if not matches:
        return f"no matches for {text!r} in the indexed files"
    out = format_locate(matches)
    if len(matches) >= limit:
        out += f"\n… {limit} matches shown; more may exist (raise limit, or narrow with path/lang)"
    return out


# -- status ------------------------------------------------------------------------------


def duration(s: float) -> str:
    """Seconds as a short human duration (``40s``, ``3 min``, ``1.5 h``)."""
    if s < 1:
        return "1s"
    return f"{s:.0f}s" if s < 90 else f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h"


def repos_lines(entries: list[IndexedRepo]) -> list[str]:
    """``scry repos`` as text: per index its name, root, freshness, chunks and model
    (or why it could not be read), in aligned columns."""
    rows = []
    for e in entries:
        if e.error:
            rows.append((e.name, e.root or "?", f"unreadable: {e.error}", "", ""))
            continue
        fresh = (
            f"synced {duration(max(0.0, time.time() - e.last_sync))} ago"
            if e.last_sync
            else "first index not completed"
        )
        if not e.root_exists:
            fresh = f"root gone ({fresh})"
        rows.append(
            (e.name, e.root or "?", fresh, f"{e.chunks or 0} chunks", e.model or "no model yet")
        )
    widths = [max((len(show_name(r[i])) for r in rows), default=0) for i in range(4)]
    return [
        "  ".join(show_name(c).ljust(w) for c, w in zip(r, [*widths, 0], strict=True)).rstrip()
        for r in rows
    ]


def status_lines(st: Status, service: list[str] | None = None) -> list[str]:
    """``scry status`` and the MCP ``status`` tool as text, one fact per line;
    ``service`` adds the server's own lines (sync, watcher, model) after the counts."""
    fp = st.fingerprint
    return [
        f"root      {st.root}",
        f"index     {st.db} ({st.db_bytes / 1e6:.1f} MB)",
        f"files     {st.files}   chunks {st.chunks}   symbols {st.symbols}   {_vector_counts(st)}",
        f"search    {_search_state(st)}",
        *origin_lines(st),
        f"last sync {_last_sync(st)}",
        *(service or []),
        f"model     {fp['embedder']} ({fp['embed_dim'] or '?'}-d)   chunker {fp['chunker']}   "
        f"tokenizer {fp['tokenizer']}   schema {fp['schema']}   written by scrydb {fp['scrydb_version']}",
        *_work_lines(st),
        *_content_lines(st),
        *_freshness_lines(st),
    ]


def _last_sync(st: Status) -> str:
    """When the last complete sync was (and how long ago), and whether one runs now."""
    if st.last_sync:
        ago = max(0.0, time.time() - st.last_sync)
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.last_sync))
        when += f" ({duration(ago)} ago)"
    else:
        when = "never completed"
    if st.writer_active:
        when += "; a sync is running now"
    return when


def _vector_counts(st: Status) -> str:
    """``vectors N`` and the extra vectors beside the chunks' own."""
    vectors = f"vectors {st.vectors}"
    if st.header_vectors:
        vectors += f" (+{st.header_vectors} headers)"
    if st.window_vectors:
        vectors += f" (+{st.window_vectors} windows of long chunks)"
    if st.comment_vectors:
        vectors += f" (+{st.comment_vectors} comment views)"
    if st.orphan_vectors:
        vectors += f" (+{st.orphan_vectors} kept for reuse)"
    return vectors


def _search_state(st: Status) -> str:
    """How a search answers now: hybrid, hybrid with chunks still waiting, lexical."""
    if st.search == "hybrid":
        return "hybrid (lexical + dense): every chunk has its vector"
    if st.search == "hybrid-partial":
        return (
            f"hybrid, but {st.pending} chunks ({st.pending_texts} texts) still wait for "
            "embeddings: found lexically only (`scry index` embeds them)"
        )
    if st.search == "lexical":
        return "lexical only: no embeddings yet (`scry index` computes them)"
    return "nothing indexed"


def _work_lines(st: Status) -> list[str]:
    """Work under way: a background indexer, a re-embed for a new model."""
    lines = []
    if st.background:
        b = st.background
        lines.append(f"background an indexer is embedding now (pid {b['pid']}, log {b['log']})")
    if st.reembed:
        r = st.reembed
        lines.append(
            f"re-embed  {r['done']} of {r['total']} texts for {r['model']}; searches use the "
            "previous model's vectors until it completes (`scry index`)"
        )
    return lines


def _content_lines(st: Status) -> list[str]:
    """What the index holds and how it was read: parse fallbacks, codings other than
    UTF-8, languages, skipped files."""
    lines = []
    if st.parse_fallbacks:
        lines.append(
            f"fallback  {len(st.parse_fallbacks)} files chunked as plain windows after a failed "
            "parse: " + ", ".join(show_name(p) for p in st.parse_fallbacks[:5])
        )
    if st.codings:
        lines.append(
            f"encoding  {len(st.codings)} files not UTF-8, read in their declared coding or "
            "a fallback: "
            + ", ".join(f"{show_name(p)} ({c})" for p, c in list(st.codings.items())[:5])
        )
    if st.langs:
        lines.append("languages " + ", ".join(f"{k} {v}" for k, v in list(st.langs.items())[:10]))
    if st.skipped:
        lines.append("skipped   " + ", ".join(f"{k} {v}" for k, v in st.skipped.items()))
    return lines


def _freshness_lines(st: Status) -> list[str]:
    """Whether the index matches the working tree, a rebuild due, files git tracks that
    are not indexed."""
    lines = []
    if st.stale is not None:
        s = st.stale
        if not any(s.values()):
            lines.append("fresh     yes: the index matches the working tree")
        else:
            lines.append(
                f"stale     {s['added']} new, {s['changed']} changed, {s['deleted']} deleted files "
                f"(run `scry index`): " + ", ".join(st.stale_paths[:5])
            )
    if st.rebuild:
        lines.append("rebuild   the next sync rebuilds: " + "; ".join(st.rebuild))
    if st.git_tracked_skipped:
        lines.append(
            "git       tracked but not indexed: "
            + ", ".join(f"{k} {v}" for k, v in st.git_tracked_skipped.items())
        )
    return lines


def origin_lines(st: Status) -> list[str]:
    """Where the vectors in use came from: the model here, the shared vector cache, a
    seed index (nothing when the index has no vectors)."""
    o = st.vector_origins
    if not any(o.values()):
        return []
    parts = [
        f"{o.get('model', 0)} computed here by the model",
        f"{o.get('cache', 0)} from the shared vector cache",
    ]
    if o.get("seed"):
        parts.append(f"{o['seed']} from a seed index")
    lines = ["origin    vectors: " + ", ".join(parts)]
    c = st.shared_cache
    if c:
        lines.append(
            f"cache     {c['path']}: {c['vectors']} vectors, {c['bytes'] / 2**20:.1f} MB "
            f"(bound {c['bound_bytes'] / 2**20:.0f} MB; shared by every checkout on this machine)"
        )
    return lines


def index_summary(root: object, rep: SyncReport) -> str:
    """``scry index``'s summary line, whose numbers add up: the files the walk listed are
    new, changed, unchanged or skipped by their content (binary, generated, secret,
    unreadable); the paths the walk left out by name or ignore rules come apart."""
    by_content = max(0, rep.files_seen - rep.files_added - rep.files_changed - rep.files_unchanged)
    by_rules = max(0, sum(rep.skipped.values()) - by_content)
    return (
        f"indexed {root}: {rep.files_seen} files ({rep.files_added} new, "
        f"{rep.files_changed} changed, {rep.files_unchanged} unchanged, {by_content} skipped "
        f"by content), {rep.files_deleted} deleted; {by_rules} paths left out by name or "
        f"ignore rules; {rep.chunks_written} chunks written, {rep.texts_embedded} embedded"
        + (f" (+{rep.headers_embedded} headers)" if rep.headers_embedded else "")
        + (f" (+{rep.windows_embedded} windows and comment views)" if rep.windows_embedded else "")
        + reuse_summary(rep)
        + f", {rep.seconds:.1f}s"
    )


def reuse_summary(rep: SyncReport) -> str:
    """What the shared cache and a seed saved a sync ("" when they saved nothing)."""
    parts = []
    if rep.vectors_from_cache:
        parts.append(f"{rep.vectors_from_cache} vectors from the shared cache")
    if rep.vectors_from_seed:
        parts.append(f"{rep.vectors_from_seed} from the seed index")
    if not parts:
        return ""
    saved = (
        f", about {duration(rep.seconds_saved)} of model time saved" if rep.seconds_saved else ""
    )
    return "; " + " and ".join(parts) + saved


# -- the code graph ----------------------------------------------------------------------


def _def_text(d: Any) -> str:
    return f"{show_name(d.path)}:{d.line} {d.kind} {d.symbol}"


def _ref_line(r: Any, what: str) -> str:
    """One reference row: the site and its definition, then what it resolves to."""
    site = f"{show_name(r.path)}:{r.line}  {r.symbol or '(module level)'}"
    named = f"{r.qualifier}.{r.name}" if r.qualifier else r.name
    indent = "  " * (r.depth - 1)
    if r.target is not None:
        to = _def_text(r.target) if what != "callers" else r.target.symbol
        tail = f"{r.kind} {named} -> {to}  ({r.confidence:.2f})"
    elif r.candidates:
        alts = ", ".join(_def_text(c) for c in r.candidates[:4])
        more = f" +{len(r.candidates) - 4} more" if len(r.candidates) > 4 else ""
        tail = f"{r.kind} {named} -> ambiguous ({r.confidence:.2f} each): {alts}{more}"
    else:
        tail = f"{r.kind} {named} -> not defined in the index"
    return f"{indent}{site}  {tail}"


def format_graph(what: str, defs: list[Any], rows: list[Any], colour: bool = False) -> str:
    """``scry callers`` / ``scry callees`` as text: the definitions asked about, then one
    line per reference (indented by depth)."""
    head = f"{what} of " + "; ".join(_def_text(d) for d in defs)
    if not rows:
        return head + f"\n  (no {what} found in the index)"
    return "\n".join([head, *(_ref_line(r, what) for r in rows)])


def format_refs(result: Any, colour: bool = False) -> str:
    """``scry refs`` as text: the definitions, then every reference."""
    lines = ["definitions:", *(f"  {_def_text(d)}" for d in result.definitions)]
    lines.append(f"references ({len(result.references)}):")
    lines += [f"  {_ref_line(r, 'refs')}" for r in result.references]
    return "\n".join(lines)
