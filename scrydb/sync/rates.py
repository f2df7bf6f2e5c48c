"""How fast this machine embeds, per embedder: the rates (texts/s, every kind of text)
measured by recent syncs, kept in the cache directory, and the one an estimate uses.

One run on a busy machine can be several times slower than the next (scrydb's own
source: 7.3 texts/s, then 18.7 on the same machine a few minutes later), so an estimate
uses the median of the last RATE_HISTORY measured rates, with the default as one more
while there are few: one slow (or fast) run moves it by at most one place in the
order."""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

from scrydb.paths import cache_dir

#: Texts/s (bodies, headers, windows and comment views together) assumed for an embedder
#: never measured here: the packaged MiniLM on 2 cores, ``scry index`` of scrydb's own
#: source (5,929 texts). Measured 7.3 texts/s on a shared machine (the process got 65% of
#: the CPU; issue 42 saw 10.2), about 11 texts per CPU second, so about 20 on an idle
#: one: a default between them keeps a first estimate within 2x of either.
DEFAULT_EMBED_RATE = 12.0
#: Measured rates per embedder id (JSON: id -> the last RATE_HISTORY rates, oldest first),
#: in the cache directory. (A value that is not a list is from an older scrydb, which
#: counted bodies only: ignored, then replaced.)
EMBED_RATES_FILE = "embed-rates.json"
#: Measured rates kept per embedder; the estimate takes their median.
RATE_HISTORY = 7
#: Until this many rates are measured, DEFAULT_EMBED_RATE counts as one more: a first run
#: on a busy (or idle) machine is one sample, not the machine's rate.
RATE_PRIOR_UNTIL = 3


def rates_path() -> Path:
    """The file of measured rates."""
    return cache_dir() / EMBED_RATES_FILE


def _load() -> dict[str, object]:
    try:
        rates = json.loads(rates_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return rates if isinstance(rates, dict) else {}


def _history(value: object) -> list[float]:
    """The usable measured rates of one stored value."""
    if not isinstance(value, list):
        return []
    return [float(r) for r in value if isinstance(r, int | float) and r > 0]


def typical_rate(history: list[float]) -> float | None:
    """The rate an estimate uses: the median of the last RATE_HISTORY measured rates,
    DEFAULT_EMBED_RATE among them while there are fewer than RATE_PRIOR_UNTIL (None when
    there are none)."""
    recent = history[-RATE_HISTORY:]
    if not recent:
        return None
    if len(recent) < RATE_PRIOR_UNTIL:
        recent = [*recent, DEFAULT_EMBED_RATE]
    return statistics.median(recent)


def record_rate(embedder: str, rate: float) -> None:
    """Add a rate (texts/s) a sync measured to ``embedder``'s recent history."""
    if not rate > 0:
        return
    rates = _load()
    history = [*_history(rates.get(embedder)), round(rate, 2)][-RATE_HISTORY:]
    rates[embedder] = history
    path = rates_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(rates, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # an estimate is not worth an error


def embed_rate(embedder: str) -> tuple[float, bool]:
    """(texts/s, measured?) of an embedder: the median of the rates measured here
    (:func:`typical_rate`), else DEFAULT_EMBED_RATE (not measured)."""
    rate = typical_rate(_history(_load().get(embedder)))
    if rate is not None:
        return rate, True
    return DEFAULT_EMBED_RATE, False
