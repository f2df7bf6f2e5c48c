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


def _open(root: str | None, db: str | None, config: str | None, readonly: bool = False) -> Any:
    from scrydb.index import Index, find_root

    r = find_root(root) if root is None else Path(root)
    if root is not None:
        if not r.exists():
            raise ScryError(f"no such directory: {root}")
        if not r.is_dir():
            raise ScryError(f"not a directory: {root}")
    return Index(r, db=db, config=config, readonly=readonly)


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
@click.option("--quiet", "-q", is_flag=True, help="No summary line.")
@_json_option
@_db_option
def index_cmd(
    path: str | None,
    full: bool,
    no_embed: bool,
    yes: bool,
    quiet: bool,
    as_json: bool,
    db: str | None,
    config: str | None,
) -> None:
    """Index (or incrementally sync) a repository.

    Only changed files are re-read, only new chunk texts are embedded. The lexical index
    is written first, so search works while embeddings are computed.

    \b
    Example:
      scry index                 # the repository containing the current directory
      scry index ~/src/project --full
    """
    with _open(path, db, config) as ix:
        first = ix.store.scalar("SELECT count(*) FROM files") == 0
        if first and not yes and not no_embed:
            _confirm_first_index(ix)
        with _progress(not quiet and not as_json) as prog:
            rep = ix.sync(
                full=full,
                embed=not no_embed,
                progress=prog,
                warn=_warn,
                on_wait=lambda: click.echo(
                    "scry: waiting for another scry process to finish indexing…", err=True
                ),
            )
        if as_json:
            d = {k: v for k, v in rep.__dict__.items() if k != "skipped"}
            d["skipped"] = dict(rep.skipped)
            d["seconds"] = rep.seconds
            d["db"] = str(ix.db_path)
            _emit_json(d)
        elif not quiet:
            skipped = sum(rep.skipped.values())
            click.echo(
                f"indexed {ix.root}: {rep.files_seen} files ({rep.files_added} new, {rep.files_changed} changed, "
                f"{rep.files_deleted} deleted), {rep.chunks_written} chunks written, {rep.texts_embedded} embedded, "
                f"{skipped} paths skipped, {rep.seconds:.1f}s",
                err=True,
            )
            if rep.pending:
                click.echo(
                    f"note: {rep.pending} chunks wait for embeddings (lexical search works now)",
                    err=True,
                )


def _confirm_first_index(ix: Any) -> None:
    """Estimate a first index; ask on a TTY when it is large."""
    from scrydb.walk import walk

    res = walk(ix.root, ix.config.index)
    total_bytes = sum(f.size for f in res.files)
    est_chunks = int(total_bytes / 900) + len(res.files)
    rate = 22.0  # chunks/s of the packaged MiniLM on 2 cores (DESIGN.md)
    est_s = est_chunks / rate
    click.echo(
        f"scry: first index of {ix.root}: {len(res.files)} files, {total_bytes / 1e6:.1f} MB, "
        f"~{est_chunks} chunks, ~{_duration(est_s)} to embed (lexical search is ready much sooner)",
        err=True,
    )
    if est_chunks > ix.config.index.confirm_chunks and sys.stdin.isatty() and sys.stderr.isatty():
        if not click.confirm("Continue?", default=True, err=True):
            raise SystemExit(EXIT_NO_RESULTS)


def _duration(s: float) -> str:
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


def _auto_sync(ix: Any, no_sync: bool, quiet: bool) -> None:
    """Create the index on first use; afterwards a cheap incremental sync if nobody else writes."""
    from scrydb.errors import LockedError

    if ix.store.readonly:
        return
    first = (
        ix.store.scalar("SELECT count(*) FROM files") == 0 and ix.store.meta("last_sync") is None
    )
    if first:
        if not quiet:
            click.echo(f"scry: no index for {ix.root} yet: indexing it now (once)…", err=True)
        with _progress(not quiet) as prog:
            ix.sync(progress=prog, warn=_warn)
        return
    if no_sync:
        return
    try:
        rep = ix.sync(embed=False, wait=False, warn=_warn)
        if 0 < rep.pending <= AUTO_EMBED_MAX:
            ix.sync(wait=False, warn=_warn)
    except LockedError:
        pass  # someone is indexing: search what is committed


@cli.command("status")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--fast", is_flag=True, help="Skip the working-tree and git checks.")
@_json_option
@_db_option
def status_cmd(
    path: str | None, fast: bool, as_json: bool, db: str | None, config: str | None
) -> None:
    """Show what is indexed, how fresh it is, and what was skipped.

    \b
    Example:
      scry status
      scry status --json
    """
    with _open(path, db, config, readonly=_exists(path, db)) as ix:
        st = ix.status(check_stale=not fast, check_git=not fast)
    if as_json:
        _emit_json(st.to_json())
        return
    when = (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.last_sync))
        if st.last_sync
        else "never"
    )
    fp = st.fingerprint
    lines = [
        f"root      {st.root}",
        f"index     {st.db} ({st.db_bytes / 1e6:.1f} MB)",
        f"files     {st.files}   chunks {st.chunks}   symbols {st.symbols}   vectors {st.vectors}",
        f"embedding {st.pending} chunks waiting" if st.pending else "embedding complete",
        f"last sync {when}",
        f"model     {fp['embedder']} ({fp['embed_dim']}-d)   chunker {fp['chunker']}   tokenizer {fp['tokenizer']}",
    ]
    if st.langs:
        lines.append("languages " + ", ".join(f"{k} {v}" for k, v in list(st.langs.items())[:10]))
    if st.skipped:
        lines.append("skipped   " + ", ".join(f"{k} {v}" for k, v in st.skipped.items()))
    if st.stale is not None:
        s = st.stale
        lines.append(
            "fresh     yes"
            if not any(s.values())
            else f"stale     {s['added']} new, {s['changed']} changed, {s['deleted']} deleted files (run scry index)"
        )
    if fp["embedder"] and fp["embedder"] != fp["current_embedder"]:
        lines.append(
            f"warning   configured model {fp['current_embedder']} differs: next index re-embeds"
        )
    click.echo("\n".join(lines))
    if st.git_missing_count:
        loud = st.git_missing_count > 5
        click.echo(
            f"{'WARNING' if loud else 'note'}: {st.git_missing_count} files tracked by git are not indexed "
            f"(check .gitignore/.scryignore): " + ", ".join(st.git_missing[:5]),
            err=True,
        )


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
@_json_option
@_db_option
def read_cmd(
    target: str, no_numbers: bool, as_json: bool, db: str | None, config: str | None
) -> None:
    """Print indexed lines of a file: PATH, PATH:LINE or PATH:A-B (from the index).

    \b
    Example:
      scry read src/app.py:40-80
    """
    from scrydb import present

    path, a, b = _parse_target(target)
    with _open(None, db, config, readonly=True) as ix:
        r = ix.read(path, a, b)
    if as_json:
        _emit_json(r.to_json())
    else:
        click.echo(present.format_read(r, numbers=not no_numbers))


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
@_json_option
@_db_option
def related_cmd(target: str, limit: int, as_json: bool, db: str | None, config: str | None) -> None:
    """Chunks most similar to the one at FILE:LINE (other files first).

    \b
    Example:
      scry related src/client.py:120
    """
    from scrydb import present

    path, a, _b = _parse_target(target)
    if a is None:
        raise ScryError(f"give a line: {target}:LINE")
    with _open(None, db, config, readonly=True) as ix:
        res = ix.related(path, a, limit)
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
@_json_option
@_db_option
def locate_cmd(
    text: str,
    ignore_case: bool,
    limit: int,
    lang: str | None,
    path_filter: str | None,
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

    with _open(None, db, config, readonly=True) as ix:
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


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``scry`` script."""
    try:
        rc = cli.main(args=argv, prog_name="scry", standalone_mode=False)
    except ScryError as e:
        click.echo(f"scry: error: {e}", err=True)
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        click.echo("scry: aborted", err=True)
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
