"""``scry index``: index or sync a repository in the foreground; stop a background indexer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from scrydb import present
from scrydb.cli.common import (
    check_broad_root,
    confirm_first_index,
    db_option,
    emit_json,
    json_option,
    open_index,
    progress_bar,
    root_of,
    warn,
)

if TYPE_CHECKING:
    from scrydb.index import Index
    from scrydb.sync import SyncReport


@click.command("index")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--full", is_flag=True, help="Rebuild from nothing instead of syncing.")
@click.option("--no-embed", is_flag=True, help="Lexical phase only (embed later).")
@click.option("--yes", "-y", is_flag=True, help="Don't ask before a large first index.")
@click.option("--no-wait", is_flag=True, help="Fail at once if another scry process is indexing.")
@click.option("--quiet", "-q", is_flag=True, help="No estimate or summary line.")
@click.option(
    "--cancel", is_flag=True, help="Stop a background indexer (it keeps what it committed)."
)
@click.option(
    "--seed",
    type=click.Path(dir_okay=False),
    help="Take vectors from another index of the same model (built by CI or a colleague).",
)
@click.option("--background-child", is_flag=True, hidden=True)
@json_option
@db_option
def index_cmd(
    path: str | None,
    full: bool,
    no_embed: bool,
    yes: bool,
    no_wait: bool,
    quiet: bool,
    cancel: bool,
    seed: str | None,
    background_child: bool,
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
      scry index --cancel        # stop the background indexer a first search started
      scry index --seed ci.db    # dense-ready without the model: vectors from CI's index

    Vectors are looked up in the per-user shared cache before the model is called, so a
    second worktree, clone or branch embeds only the texts it does not share
    ([index] shared_cache = false or SCRY_SHARED_CACHE=0 turns it off).
    """
    root = root_of(path)
    if root is not None and Path(root).resolve() != Path(path or ".").resolve():
        click.echo(f"scry: {path} is inside the repository {root}: indexing that", err=True)
    if not background_child:
        check_broad_root(Path(root or root_of(".") or "."), yes)
    # --full is the documented way out of a damaged index: it may move the file aside.
    with open_index(root if root is not None else root_of("."), db, config, recover=full) as ix:
        if cancel:
            _cancel_background(ix)
            return
        _own_the_index(ix, background_child, quiet)
        stop_requested = _stop_on_sigterm()
        if seed is not None:
            ix.check_seed(seed)  # before the estimate: a wrong seed is one line
        from scrydb.store import Readiness

        first = ix.store.readiness() is not Readiness.READY
        # (No estimate while another process indexes: it is that one's first index.)
        if (first or full) and not (quiet or as_json or ix.store.writer_active()):
            confirm_first_index(
                ix, ask=not yes and not no_embed, embed=not no_embed, full=full and not first
            )
        rep = _sync(
            ix,
            full=full,
            embed=not no_embed,
            show_progress=not quiet and not as_json,
            wait=not no_wait,
            cancel=stop_requested,
            seed=seed,
        )
        _report(ix, rep, as_json=as_json, quiet=quiet, asked_for_path=path is not None)


def _cancel_background(ix: Index) -> None:
    """``--cancel``: stop the background indexer of this index, and say so."""
    from scrydb import background

    bg = background.stop(ix.db_path)
    click.echo(
        f"scry: stopped the background indexer (pid {bg.pid}); the index keeps what it committed"
        if bg
        else "scry: no background indexer is running",
        err=True,
    )


def _own_the_index(ix: Index, background_child: bool, quiet: bool) -> None:
    """A background child registers itself (and unregisters at exit); a foreground index
    takes over from a background indexer that is running."""
    from scrydb import background

    if background_child:
        import atexit

        background.register(ix.db_path, ix.root)
        atexit.register(background.unregister, ix.db_path)
        return
    bg = background.stop(ix.db_path)  # a foreground index takes over
    if bg is not None and not quiet:
        click.echo(f"scry: stopped the background indexer (pid {bg.pid})", err=True)


def _stop_on_sigterm() -> Callable[[], bool]:
    """Turn SIGTERM into a request to stop at the next commit: the returned callable
    says whether one came (the sync's ``cancel``)."""
    import signal

    stop_requested = False

    def _on_term(signum: int, frame: Any) -> None:
        nonlocal stop_requested
        stop_requested = True

    signal.signal(signal.SIGTERM, _on_term)
    return lambda: stop_requested


def _sync(
    ix: Index,
    *,
    full: bool,
    embed: bool,
    show_progress: bool,
    wait: bool,
    cancel: Callable[[], bool],
    seed: str | None,
) -> SyncReport:
    """Run the sync under a progress bar; Ctrl-C ends in one line saying what was kept
    (exit 130)."""
    try:
        with progress_bar(show_progress) as prog:
            return ix.sync(
                full=full,
                embed=embed,
                progress=prog,
                warn=warn,
                wait=wait,
                on_wait=lambda: click.echo(
                    "scry: waiting for another scry process to finish indexing…", err=True
                ),
                cancel=cancel,
                seed=seed,
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


def _report(
    ix: Index, rep: SyncReport, *, as_json: bool, quiet: bool, asked_for_path: bool
) -> None:
    """The sync report: JSON on stdout, or the summary and its notes on stderr."""
    if as_json:
        d = rep.to_json()
        d["db"] = str(ix.db_path)
        emit_json(d)
    elif not quiet:
        click.echo(present.index_summary(ix.root, rep), err=True)
        if rep.pending:
            click.echo(
                f"note: {rep.pending} chunks wait for embeddings (lexical search works now; "
                "`scry index` embeds them)",
                err=True,
            )
        if not rep.changed and not asked_for_path:
            click.echo(
                "note: nothing changed since the last index: it is up to date",
                err=True,
            )
