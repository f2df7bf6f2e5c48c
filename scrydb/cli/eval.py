"""``scry eval``: golden-set scores."""

from __future__ import annotations

import json
from pathlib import Path

import click

from scrydb.cli.common import (
    EXIT_NO_RESULTS,
    emit_json,
    json_option,
    progress_bar,
)


@click.command("eval")
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
    "--half",
    type=click.Choice(["all", "dev", "test"]),
    default="all",
    show_default=True,
    help="Only one half of each set (by its [meta] split rule): tune on dev, report test.",
)
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
    help="Keep the corpora's indexes here, one file per set and corpus path.",
)
@click.option(
    "--misses",
    type=click.IntRange(0, 10_000),
    default=10,
    show_default=True,
    help="Misses listed per set.",
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="Config file for every corpus (e.g. another [embed] model); give it --db-dir of its own.",
)
@json_option
def eval_cmd(
    cases: tuple[str, ...],
    repo: str | None,
    k: int,
    runs: int,
    legs: bool,
    half: str,
    tokens: bool,
    compare: str | None,
    save: str | None,
    floor: str | None,
    tolerance: float,
    db_dir: str | None,
    misses: int,
    config: str | None,
    as_json: bool,
) -> None:
    """Score search on golden sets: Recall@k, MRR, NDCG, Hit@1/3/5, latency, misses.

    Each corpus is indexed (incrementally, outside the corpus) before it is scored.

    \b
    Example:
      evals/fetch.sh && scry eval evals/*.toml --legs
      scry eval evals/self.toml --json > before.json   # ... change ranking ...
      scry eval evals/self.toml --compare before.json
      scry eval evals/*.toml --config mpnet.toml --db-dir /tmp/mpnet-dbs   # another model
    """
    from scrydb import evaluate

    sets = [evaluate.only_half(evaluate.load_set(c), half) for c in cases]
    prev = evaluate.load_json(compare) if compare else None
    ev = evaluate.Evaluator(
        k=k,
        legs=legs,
        runs=runs,
        repo=repo,
        db_dir=db_dir,
        tokens=tokens,
        progress=None if as_json else (lambda m: click.echo(m, err=True)),
        config=config,
    )
    with progress_bar(not as_json) as prog:
        ev.sync_progress = prog
        report = ev.run(sets)
    if save:
        Path(save).write_text(json.dumps(report, indent=1), encoding="utf-8")
    if as_json:
        emit_json(report)
    else:
        click.echo(evaluate.render(report, prev, misses=misses))
    if floor:
        failures = evaluate.check_floor(report, evaluate.load_json(floor), tolerance)
        for f in failures:
            click.echo(f"scry: quality floor: {f}", err=True)
        if failures:
            raise SystemExit(EXIT_NO_RESULTS)
