"""What every benchmark section shares: timers, percentiles, RSS, the result table, the
synthetic-vector embedder and the machine description.

A figure is a :class:`Row`: its value, the reference measured in the same run, the ratio
of the two, and the target it is held to (if any). Timing is in milliseconds or seconds
as the row says; ratios are value / reference.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(REPO))

from scrydb.embed import Embedder, normalise  # noqa: E402

#: Dimension of the synthetic vectors (the packaged MiniLM's).
DIM = 384


@dataclass
class Row:
    """One figure of the table."""

    section: str
    name: str
    value: float | None
    unit: str
    reference: float | None = None
    ref_name: str = ""
    target: str = ""  #: e.g. "<= 1.0 s" or "ratio <= 2"
    ok: bool | None = None  #: whether the target holds (None: no target)
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.value is None or not self.reference:
            return None
        return self.value / self.reference


@dataclass
class Results:
    """All rows of a run, plus the machine and load it ran under."""

    rows: list[Row] = field(default_factory=list)
    machine: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def add(self, *args: Any, **kw: Any) -> Row:
        row = Row(*args, **kw)
        self.rows.append(row)
        print(f"  {fmt_row(row)}", flush=True)
        return row

    def to_json(self) -> dict[str, Any]:
        rows = []
        for r in self.rows:
            d = asdict(r)
            d["ratio"] = r.ratio
            rows.append(d)
        return {"machine": self.machine, "rows": rows, "extra": self.extra}


def fmt_num(v: float | None) -> str:
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def fmt_row(r: Row) -> str:
    ratio = f"x{r.ratio:.2f}" if r.ratio is not None else ""
    ref = f"ref {fmt_num(r.reference)} ({r.ref_name})" if r.reference is not None else ""
    ok = "" if r.ok is None else ("OK" if r.ok else "MISS")
    return f"{r.section:<8} {r.name:<44} {fmt_num(r.value):>9} {r.unit:<7} {ref} {ratio} {r.target} {ok} {r.note}".rstrip()


def table(res: Results) -> str:
    """The result table as Markdown (also what the README carries)."""
    head = "| section | measure | value | reference | ratio | target | holds |"
    lines = [head, "|---|---|---:|---|---:|---|---|"]
    for r in res.rows:
        ref = f"{fmt_num(r.reference)} {r.unit} ({r.ref_name})" if r.reference is not None else ""
        ratio = f"{r.ratio:.2f}" if r.ratio is not None else ""
        ok = "" if r.ok is None else ("yes" if r.ok else "**no**")
        val = f"{fmt_num(r.value)} {r.unit}"
        name = r.name + (f" ({r.note})" if r.note else "")
        lines.append(f"| {r.section} | {name} | {val} | {ref} | {ratio} | {r.target} | {ok} |")
    return "\n".join(lines)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def pct(values: Iterable[float], q: float) -> float:
    """The q-th percentile (0-100) of values, by linear interpolation."""
    v = sorted(values)
    if not v:
        return float("nan")
    return float(np.percentile(np.asarray(v), q))


def median(values: Iterable[float]) -> float:
    return float(statistics.median(list(values)))


def rss_peak_mb() -> float:
    """Peak resident set size of this process so far, in MB.

    VmHWM, not ``ru_maxrss``: Linux keeps ``ru_maxrss`` across ``execve``, so a worker
    forked from the (large) benchmark process would report its parent's size.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": cpu,
        "cores": cores,
        "mem_gb": mem,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "load_start": loadavg(),
    }


class UnitVectors(Embedder):
    """Synthetic unit vectors seeded by the text's hash: the scale corpora's embedder.

    Stands in for the model where only the vectors' count and shape matter (latency,
    memory, bytes); recall is measured on real embeddings elsewhere. It takes the default
    model's id, so the CLI and other processes accept the index as theirs (a different id
    would make their sync drop every vector).
    """

    def __init__(self, dim: int = DIM) -> None:
        from scrydb.config import EmbedConfig
        from scrydb.embed.local import LocalEmbedder

        self.id = LocalEmbedder.make_id(EmbedConfig())
        self._dim = dim
        self.calls = 0

    @property
    def dim(self) -> int:
        return self._dim

    def _vec(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        return np.random.default_rng(seed).standard_normal(self._dim, dtype=np.float32)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        return normalise(np.stack([self._vec(t) for t in texts]))

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.embed_documents(texts)


def run_json(
    args: list[str], env: dict[str, str] | None = None, timeout: float = 900
) -> dict[str, Any]:
    """Run ``python bench/worker.py ARGS`` and return the JSON it prints last."""
    cmd = [sys.executable, str(Path(__file__).with_name("worker.py")), *args]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"worker {args[0]} failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_env(work: Path) -> dict[str, str]:
    """Environment for subprocesses: the scratch cache directory, no colour."""
    env = dict(os.environ)
    env["SCRY_CACHE_DIR"] = str(work / "cache")
    env["NO_COLOR"] = "1"
    env.pop("SCRY_DB", None)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env
