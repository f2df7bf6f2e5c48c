"""The ``scry`` command line: a thin layer over :mod:`scrydb.index`.

Results go to stdout, progress and diagnostics to stderr. Exit codes: 0 results,
1 no results, 2 errors (one clean line, never a traceback; ``SCRY_DEBUG=1`` shows it).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from scrydb.errors import ScryError

EXIT_NO_RESULTS = 1
EXIT_ERROR = 2

#: ``scry search`` embeds pending chunks itself when there are at most this many
#: (an edit or two); more are left to ``scry index`` / ``scry watch``.
AUTO_EMBED_MAX = 64


#: Commands that live in their own modules, imported only when used (the MCP SDK,
#: watchdog and HTTP clients must not slow down ``scry search``): name -> module:attr.
LAZY_COMMANDS = {
    "serve": "scrydb.mcp_server:serve_cmd",
    "watch": "scrydb.watch:watch_cmd",
    "check": "scrydb.check:check_cmd",
}


class DefaultGroup(click.Group):
    """A group whose unknown first word means ``search``: ``scry "QUERY" [PATH]``.

    Commands in LAZY_COMMANDS are imported on first use.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands:
            return self.commands[name]
        target = LAZY_COMMANDS.get(name)
        if target is None:
            return None
        import importlib

        module, _, attr = target.partition(":")
        try:
            cmd = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            return None  # not built yet
        self.commands[name] = cmd
        return cmd

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        known = {*self.commands, *LAZY_COMMANDS}
        if args and args[0] not in known and args[0] not in ("--help", "-h", "--version"):
            args = ["search", *args]
        return super().parse_args(ctx, args)


def _db_option(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option(
        "--config",
        "config",
        type=click.Path(dir_okay=False),
        default=None,
        help="Config file (default: ROOT/.scry.toml).",
    )(f)
    return click.option(
        "--db",
        "db",
        type=click.Path(dir_okay=False),
        default=None,
        envvar="SCRY_DB",
        help="Index file (default: per-user cache; env SCRY_DB).",
    )(f)


def _json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON on stdout.")(
        f
    )


def _open(
    root: str | None,
    db: str | None,
    config: str | None,
    readonly: bool = False,
    recover: bool = False,
) -> Any:
    from scrydb.index import Index, find_root

    if root is None and db and Path(db).is_file():
        owner = _db_root(Path(db))
        if owner is not None:
            root = str(owner)  # --db names an existing index: search the tree it indexes
    r = find_root(root) if root is None else Path(root)
    if root is not None:
        if not r.exists():
            raise ScryError(f"no such directory: {root}")
        if not r.is_dir():
            raise ScryError(f"not a directory: {root}")
    return Index(r, db=db, config=config, readonly=readonly, recover=recover)


def _db_root(db: Path) -> Path | None:
    """The root recorded in an existing index file, if it is readable and still exists."""
    from scrydb.store import Store

    try:
        st = Store(db, readonly=True)
    except ScryError:
        return None
    try:
        owner = st.meta("root")
    finally:
        st.close()
    return Path(owner) if owner and Path(owner).is_dir() else None


@contextlib.contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A rich progress bar on stderr (only on a TTY)."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True, no_color="NO_COLOR" in os.environ)
    with Progress(
        TextColumn("{task.description:>8}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}
        labels = {"chunk": "chunk", "embed": "embed"}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(labels.get(phase, phase), total=total)
            bar.update(tasks[phase], completed=done, total=total)

        yield update


def _warn(msg: str) -> None:
    click.echo(f"scry: warning: {msg}", err=True)


def _emit_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, ensure_ascii=False))


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="scrydb", prog_name="scry")
def cli() -> None:
    """Local code search: ask a question about a repository, get the ranked code chunks.

    \b
    Example:
      scry index                       # index the repository you are in
      scry "where is the retry backoff computed"
      scry search UserRepository --json
    """


@cli.command("index")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--full", is_flag=True, help="Rebuild from nothing instead of syncing.")
@click.option("--no-embed", is_flag=True, help="Lexical phase only (embed later).")
@click.option("--yes", "-y", is_flag=True, help="Don't ask before a large first index.")
@click.option("--no-wait", is_flag=True, help="Fail at once if another scry process is indexing.")
@click.option("--quiet", "-q", is_flag=True, help="No estimate or summary line.")
@_json_option
@_db_option
def index_cmd(
    path: str | None,
    full: bool,
    no_embed: bool,
    yes: bool,
    no_wait: bool,
    quiet: bool,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    """Index (or incrementally sync) a repository.

    Only changed files are re-read, only new chunk texts are embedded. The lexical index
    is written first, so search works while embeddings are computed; an interrupted run
    keeps what it committed and the next run resumes. Before a first (or --full) index
    it prints an estimate, and asks on a terminal when it is large.

    \b
    Example:
      scry index                 # the repository containing the current directory
      scry index ~/src/project --full
      scry index --no-embed      # lexical search now, embeddings later
    """
    # --full is the documented way out of a damaged index: it may move the file aside.
    with _open(path, db, config, recover=full) as ix:
        first = ix.store.scalar("SELECT count(*) FROM files") == 0
        # (No estimate while another process indexes: it is that one's first index.)
        if (first or full) and not (quiet or as_json or ix.store.writer_active()):
            _confirm_first_index(ix, ask=not yes and not no_embed, embed=not no_embed)
        try:
            with _progress(not quiet and not as_json) as prog:
                rep = ix.sync(
                    full=full,
                    embed=not no_embed,
                    progress=prog,
                    warn=_warn,
                    wait=not no_wait,
                    on_wait=lambda: click.echo(
                        "scry: waiting for another scry process to finish indexing…", err=True
                    ),
                )
        except KeyboardInterrupt:
            st = ix.status(check_stale=False, check_git=False)
            click.echo(
                f"scry: interrupted; the index keeps what was committed ({st.files} files, "
                f"{st.chunks - st.pending} of {st.chunks} chunks embedded): "
                "`scry index` resumes from there",
                err=True,
            )
            raise SystemExit(130) from None
        if as_json:
            d = rep.to_json()
            d["db"] = str(ix.db_path)
            _emit_json(d)
        elif not quiet:
            skipped = sum(rep.skipped.values())
            kept = f", {rep.files_unchanged} unchanged" if rep.files_unchanged else ""
            click.echo(
                f"indexed {ix.root}: {rep.files_seen} files ({rep.files_added} new, {rep.files_changed} changed, "
                f"{rep.files_deleted} deleted{kept}), {rep.chunks_written} chunks written, "
                f"{rep.texts_embedded} embedded, {skipped} paths skipped, {rep.seconds:.1f}s",
                err=True,
            )
            if rep.pending:
                click.echo(
                    f"note: {rep.pending} chunks wait for embeddings (lexical search works now; "
                    "`scry index` embeds them)",
                    err=True,
                )


def _confirm_first_index(ix: Any, ask: bool, embed: bool = True) -> None:
    """Print what a first index will cost; on a terminal, ask when it is large."""
    est = ix.estimate()
    how = "measured here" if est.rate_measured else "typical for 2 cores"
    line = (
        f"scry: first index of {ix.root}: {est.files} files ({est.bytes / 1e6:.1f} MB), "
        f"~{est.chunks} chunks; lexical search ready in ~{_duration(est.seconds_lexical)}"
    )
    if embed:
        line += f", embeddings ~{_duration(est.seconds_embed)} at {est.rate:.0f} chunks/s ({how})"
    else:
        line += " (no embeddings: --no-embed)"
    click.echo(line, err=True)
    if (
        ask
        and est.chunks > ix.config.index.confirm_chunks
        and sys.stdin.isatty()
        and sys.stderr.isatty()
    ):
        click.echo(
            "scry: Ctrl-C at any time keeps what is done; `scry index --no-embed` "
            "builds the lexical index alone",
            err=True,
        )
        if not click.confirm("Continue?", default=True, err=True):
            raise SystemExit(EXIT_NO_RESULTS)


def _duration(s: float) -> str:
    if s < 1:
        return "1s"
    return f"{s:.0f}s" if s < 90 else f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h"


@cli.command("search")
@click.argument("query")
@click.argument("path", required=False)
@click.option(
    "-n",
    "--limit",
    "limit",
    type=click.IntRange(1, 1000),
    default=None,
    help="Number of hits (default 10).",
)
@click.option("--lang", default=None, help="Only these languages, e.g. python or ts,tsx.")
@click.option(
    "--path",
    "path_filter",
    default=None,
    help="Only paths under this prefix or matching this glob.",
)
@click.option(
    "--explain", is_flag=True, help="Show each hit's lexical/dense ranks, votes and factors."
)
@click.option(
    "--budget",
    type=click.IntRange(50, 1_000_000),
    default=None,
    help="Fit the output into about N tokens.",
)
@click.option("--no-sync", is_flag=True, help="Don't sync changed files before searching.")
@click.option(
    "--mode",
    type=click.Choice(["fused", "lexical", "dense"]),
    default="fused",
    help="One leg alone (for debugging).",
)
@click.option("--no-rerank", is_flag=True, help="Skip a configured reranker leg.")
@_json_option
@_db_option
def search_cmd(
    query: str,
    path: str | None,
    limit: int | None,
    lang: str | None,
    path_filter: str | None,
    explain: bool,
    budget: int | None,
    no_sync: bool,
    mode: str,
    no_rerank: bool,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    """Search the repository you are in (the default command).

    PATH scopes the search to a subdirectory. The index is created on first use and
    synced before each search (changed files only).

    \b
    Example:
      scry search "where does the CLI start"
      scry "how are retries scheduled" src/ -n 5
      scry search parseConfig --lang ts --json
    """
    from scrydb import present

    if not query.strip():
        raise ScryError(
            "empty query: say what to look for, e.g. scry search 'where is the config loaded'"
        )
    scope = path_filter
    if path:
        p = Path(path)
        if not p.exists():
            raise ScryError(f"no such path: {path}")
    with _open(None if not path else _root_for(path), db, config) as ix:
        if path:
            rel = os.path.relpath(Path(path).resolve(), ix.root)
            if rel.startswith(".."):
                raise ScryError(f"{path} is outside the repository {ix.root}")
            if rel != ".":
                scope = rel if not path_filter else f"{rel}/{path_filter}"
        _auto_sync(ix, no_sync, quiet=as_json)
        res = ix.search(
            query,
            k=limit or ix.config.search.limit,
            lang=lang,
            path=scope,
            explain=explain,
            mode=mode,
            rerank=not no_rerank,
        )
        if budget:
            present.fit_budget(res, budget)
        if as_json:
            _emit_json(res.to_json())
        else:
            if res:
                click.echo(
                    present.format_results(res, present.use_colour(sys.stdout), explain=explain)
                )
            for line in present.format_notes(res):
                click.echo(line, err=True)
        if not res:
            raise SystemExit(EXIT_NO_RESULTS)


def _root_for(path: str) -> str:
    from scrydb.index import find_root

    p = Path(path)
    return str(find_root(p if p.is_dir() else p.parent))


def _auto_sync(ix: Any, no_sync: bool, quiet: bool, embed: bool = True) -> None:
    """Create the index on first use; afterwards a cheap incremental sync if nobody else writes.

    ``embed=False`` (``locate``) never loads the model: a first index is lexical only.
    """
    from scrydb.errors import LockedError
    from scrydb.store import IndexWriteError

    if ix.store.readonly:
        if ix.store.write_denied and not no_sync:
            click.echo(f"scry: note: {ix.store.write_denied}: answering from it unsynced", err=True)
        return
    first = (
        ix.store.scalar("SELECT count(*) FROM files") == 0 and ix.store.meta("last_sync") is None
    )
    if first:
        if not quiet:
            click.echo(f"scry: no index for {ix.root} yet: indexing it now (once)…", err=True)
        with _progress(not quiet) as prog:
            ix.sync(progress=prog, warn=_warn, embed=embed)
        return
    if no_sync:
        return
    try:
        rep = ix.sync(embed=False, wait=False, warn=_warn)
        if embed and 0 < rep.pending <= AUTO_EMBED_MAX:
            ix.sync(wait=False, warn=_warn)
    except LockedError:
        pass  # someone is indexing: search what is committed
    except IndexWriteError as e:  # disk full, file gone read-only: search what is committed
        click.echo(f"scry: note: not synced: {e}", err=True)


@cli.command("status")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--fast", is_flag=True, help="Skip the working-tree and git checks.")
@_json_option
@_db_option
def status_cmd(
    path: str | None, fast: bool, as_json: bool, db: str | None, config: str | None
) -> None:
    """Show where the index is, what it holds, how fresh it is, and what was skipped.

    Counts files, chunks, symbols and vectors, chunks still waiting for embeddings,
    skipped paths per reason, files git tracks that the index lacks (loudly, when more
    than a few: a .gitignore mistake must not pass silently), the last sync, the
    fingerprint, and what changed in the working tree since. Never writes.

    \b
    Example:
      scry status
      scry status --json | jq .pending
    """
    if not _exists(path, db):
        from scrydb.index import default_db_path, find_root

        root = find_root(path) if path is None else Path(path).resolve()
        where = Path(db) if db else default_db_path(root)
        raise ScryError(f"no index of {root} yet (looked for {where}); run `scry index`")
    with _open(path, db, config, readonly=True) as ix:
        st = ix.status(check_stale=not fast, check_git=not fast)
    if as_json:
        _emit_json(st.to_json())
        return
    click.echo("\n".join(_status_lines(st)))
    if st.git_missing_count:
        reasons = ", ".join(
            f"{k} {v}" for k, v in st.git_tracked_skipped.items() if k not in _deliberate_skips()
        )
        click.echo(
            f"{'WARNING' if st.git_warning else 'note'}: {st.git_missing_count} files tracked by "
            f"git are not indexed ({reasons}); check .gitignore, .scryignore and [index] "
            "exclude: "
            + ", ".join(st.git_missing[:5])
            + (", …" if st.git_missing_count > 5 else ""),
            err=True,
        )


def _deliberate_skips() -> frozenset[str]:
    from scrydb.index import DELIBERATE_SKIPS

    return DELIBERATE_SKIPS


def _status_lines(st: Any) -> list[str]:
    """``scry status`` as text, one fact per line."""
    fp = st.fingerprint
    if st.last_sync:
        ago = max(0.0, time.time() - st.last_sync)
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.last_sync))
        when += f" ({_duration(ago)} ago)"
    else:
        when = "never completed"
    if st.writer_active:
        when += "; a sync is running now"
    vectors = f"vectors {st.vectors}"
    if st.orphan_vectors:
        vectors += f" (+{st.orphan_vectors} kept for reuse)"
    if st.search == "hybrid":
        search = "hybrid (lexical + dense): every chunk has its vector"
    elif st.search == "hybrid-partial":
        search = (
            f"hybrid, but {st.pending} chunks ({st.pending_texts} texts) still wait for "
            "embeddings: found lexically only (`scry index` embeds them)"
        )
    elif st.search == "lexical":
        search = "lexical only: no embeddings yet (`scry index` computes them)"
    else:
        search = "nothing indexed"
    lines = [
        f"root      {st.root}",
        f"index     {st.db} ({st.db_bytes / 1e6:.1f} MB)",
        f"files     {st.files}   chunks {st.chunks}   symbols {st.symbols}   {vectors}",
        f"search    {search}",
        f"last sync {when}",
        f"model     {fp['embedder']} ({fp['embed_dim'] or '?'}-d)   chunker {fp['chunker']}   "
        f"tokenizer {fp['tokenizer']}   schema {fp['schema']}   written by scrydb {fp['scrydb_version']}",
    ]
    if st.langs:
        lines.append("languages " + ", ".join(f"{k} {v}" for k, v in list(st.langs.items())[:10]))
    if st.skipped:
        lines.append("skipped   " + ", ".join(f"{k} {v}" for k, v in st.skipped.items()))
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


def _exists(path: str | None, db: str | None) -> bool:
    """Whether an index file already exists (status then opens it read-only)."""
    from scrydb.index import default_db_path, find_root

    if db:
        return Path(db).exists()
    root = find_root(path) if path is None else Path(path).resolve()
    return default_db_path(root).exists()


@cli.command("read")
@click.argument("target")
@click.option("--no-numbers", is_flag=True, help="Plain text, no line numbers.")
@click.option("--no-sync", is_flag=True, help="Don't sync changed files first.")
@_json_option
@_db_option
def read_cmd(
    target: str, no_numbers: bool, no_sync: bool, as_json: bool, db: str | None, config: str | None
) -> None:
    """Print indexed lines of a file: PATH, PATH:LINE or PATH:A-B (from the index).

    \b
    Example:
      scry read src/app.py:40-80
    """
    from scrydb import present

    path, a, b = _parse_target(target)
    with _open(None, db, config) as ix:
        _auto_sync(ix, no_sync, quiet=True)
        r = ix.read(_repo_path(ix, path), a, b)
    if as_json:
        _emit_json(r.to_json())
    else:
        click.echo(present.format_read(r, numbers=not no_numbers))


def _repo_path(ix: Any, path: str) -> str:
    """A path as the user typed it (relative to the working directory, like ``search``'s
    PATH) turned into a repository-relative one; otherwise taken as repository-relative."""
    p = Path(path)
    if not p.is_absolute() and (Path.cwd() / p).exists():
        rel = os.path.relpath((Path.cwd() / p).resolve(), ix.root)
        if not rel.startswith(".."):
            return Path(rel).as_posix()
    return path


def _parse_target(target: str) -> tuple[str, int | None, int | None]:
    path, sep, rng = target.rpartition(":")
    if not sep or not rng or not rng.replace("-", "").isdigit():
        return target, None, None
    if "-" in rng:
        a, _, b = rng.partition("-")
        if not a or not b:
            raise ScryError(f"bad line range in {target!r} (use PATH:A-B)")
        return path, int(a), int(b)
    return path, int(rng), int(rng)


@cli.command("related")
@click.argument("target")
@click.option("-n", "--limit", "limit", type=click.IntRange(1, 100), default=10)
@click.option("--no-sync", is_flag=True, help="Don't sync changed files first.")
@_json_option
@_db_option
def related_cmd(
    target: str, limit: int, no_sync: bool, as_json: bool, db: str | None, config: str | None
) -> None:
    """Chunks most similar to the one at FILE:LINE (other files first).

    \b
    Example:
      scry related src/client.py:120
    """
    from scrydb import present

    path, a, _b = _parse_target(target)
    if a is None:
        raise ScryError(f"give a line: {target}:LINE")
    with _open(None, db, config) as ix:
        _auto_sync(ix, no_sync, quiet=True)
        res = ix.related(_repo_path(ix, path), a, limit)
    if as_json:
        _emit_json(res.to_json())
    else:
        if res:
            click.echo(present.format_results(res, present.use_colour(sys.stdout)))
        for line in present.format_notes(res):
            click.echo(line, err=True)
    if not res:
        raise SystemExit(EXIT_NO_RESULTS)


@cli.command("locate")
@click.argument("text")
@click.option("-i", "--ignore-case", is_flag=True)
@click.option("-n", "--limit", "limit", type=click.IntRange(1, 10000), default=50)
@click.option("--lang", default=None)
@click.option("--path", "path_filter", default=None)
@click.option("--no-sync", is_flag=True, help="Don't sync changed files first.")
@_json_option
@_db_option
def locate_cmd(
    text: str,
    ignore_case: bool,
    limit: int,
    lang: str | None,
    path_filter: str | None,
    no_sync: bool,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    """Exact literal matches in the indexed code, with line numbers (grep over the index).

    \b
    Example:
      scry locate "DEFAULT_TIMEOUT"
      scry locate "todo" -i --lang python
    """
    from scrydb import present

    with _open(None, db, config) as ix:
        _auto_sync(ix, no_sync, quiet=True, embed=False)
        matches = ix.locate(text, k=limit, lang=lang, path=path_filter, ignore_case=ignore_case)
    if as_json:
        _emit_json({"text": text, "matches": matches})
    elif matches:
        click.echo(present.format_locate(matches, present.use_colour(sys.stdout)))
    if not matches:
        if not as_json:
            click.echo("no matches", err=True)
        raise SystemExit(EXIT_NO_RESULTS)


@cli.command("eval")
@click.argument("cases", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--repo",
    default=None,
    type=click.Path(file_okay=False),
    help="Corpus directory (default: [meta] corpus of each set).",
)
@click.option("-k", "k", type=click.IntRange(1, 100), default=10, show_default=True)
@click.option(
    "--runs", type=click.IntRange(1, 20), default=1, help="Repeat N times (latency spread)."
)
@click.option("--legs", is_flag=True, help="Also score the lexical and dense legs alone.")
@click.option(
    "--tokens", is_flag=True, help="Token cost of scry vs a grep-and-read agent per case."
)
@click.option(
    "--compare",
    type=click.Path(dir_okay=False),
    default=None,
    help="Print deltas against an earlier --json report.",
)
@click.option(
    "--save",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the JSON report to this file.",
)
@click.option(
    "--floor",
    type=click.Path(dir_okay=False),
    default=None,
    help="Fail (exit 1) when a set's MRR falls below this baseline JSON.",
)
@click.option(
    "--tolerance", type=float, default=0.03, show_default=True, help="Allowed drop below --floor."
)
@click.option(
    "--db-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Keep the corpora's indexes here.",
)
@click.option("--misses", type=int, default=10, help="Misses listed per set.")
@_json_option
def eval_cmd(
    cases: tuple[str, ...],
    repo: str | None,
    k: int,
    runs: int,
    legs: bool,
    tokens: bool,
    compare: str | None,
    save: str | None,
    floor: str | None,
    tolerance: float,
    db_dir: str | None,
    misses: int,
    as_json: bool,
) -> None:
    """Score search on golden sets: Recall@k, MRR, NDCG, Hit@1/3/5, latency, misses.

    Each corpus is indexed (incrementally, outside the corpus) before it is scored.

    \b
    Example:
      evals/fetch.sh && scry eval evals/*.toml --legs
      scry eval evals/self.toml --json > before.json   # ... change ranking ...
      scry eval evals/self.toml --compare before.json
    """
    from scrydb import evaluate

    sets = [evaluate.load_set(c) for c in cases]
    prev = evaluate.load_json(compare) if compare else None
    ev = evaluate.Evaluator(
        k=k,
        legs=legs,
        runs=runs,
        repo=repo,
        db_dir=db_dir,
        tokens=tokens,
        progress=None if as_json else (lambda m: click.echo(m, err=True)),
    )
    with _progress(not as_json) as prog:
        ev.sync_progress = prog
        report = ev.run(sets)
    if save:
        Path(save).write_text(json.dumps(report, indent=1), encoding="utf-8")
    if as_json:
        _emit_json(report)
    else:
        click.echo(evaluate.render(report, prev, misses=misses))
    if floor:
        failures = evaluate.check_floor(report, evaluate.load_json(floor), tolerance)
        for f in failures:
            click.echo(f"scry: quality floor: {f}", err=True)
        if failures:
            raise SystemExit(EXIT_NO_RESULTS)


def _one_line(msg: str) -> str:
    """An error message as one line: control characters a path or query brought in
    (newlines, escapes) are shown escaped."""
    if msg.isprintable():
        return msg
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in msg)


def _file_error(e: BaseException) -> ScryError | None:
    """An SQLite error about the index file as a one-line error (None: not one)."""
    if type(e).__module__ != "apsw":
        return None
    from scrydb.store import translate_error

    return translate_error(e, os.environ.get("SCRY_DB"))


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``scry`` script."""
    try:
        rc = cli.main(args=argv, prog_name="scry", standalone_mode=False)
    except ScryError as e:
        click.echo(f"scry: error: {_one_line(str(e))}", err=True)
        sys.exit(e.exit_code)
    except click.exceptions.Abort:  # click's form of Ctrl-C (and of a declined prompt)
        click.echo("scry: interrupted (the index keeps everything committed so far)", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        click.echo("scry: interrupted (the index keeps everything committed so far)", err=True)
        sys.exit(130)
    except SystemExit:
        raise
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        sys.exit(EXIT_ERROR)
    except Exception as e:  # a bug: still one line, unless asked for the traceback
        mapped = _file_error(e)
        if mapped is not None:  # an SQLite error about the index file outside Index's methods
            click.echo(f"scry: error: {_one_line(str(mapped))}", err=True)
            sys.exit(mapped.exit_code)
        if os.environ.get("SCRY_DEBUG"):
            traceback.print_exc()
        click.echo(
            f"scry: internal error: {type(e).__name__}: {e} (SCRY_DEBUG=1 shows the traceback)",
            err=True,
        )
        sys.exit(EXIT_ERROR)
    sys.exit(rc if isinstance(rc, int) else 0)


if __name__ == "__main__":
    main()
