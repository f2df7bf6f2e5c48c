"""``scry eval``: golden sets in, retrieval metrics out.

A set is a TOML file (evals/README.md, "Format"): ``[meta]`` (``repo``, optional
``corpus`` path relative to the file) and ``[[case]]`` tables with ``query``, ``expect``
(any one counts: ``path``, ``path:LINE``, ``path:A-B``), optional ``path_prefix``,
``kind`` and ``lang``; other keys are kept and ignored, so sets written for other tools
load.

Metrics per set, per kind and overall: Recall@k, MRR@k, NDCG@k (binary gain; each
target gains once; ideal = min(#targets, k)), Hit@1/3/5, latency p50/p95.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrydb.errors import ScryError
from scrydb.paths import parse_target
from scrydb.store import counts as store_counts
from scrydb.store import files as indexed_files

if TYPE_CHECKING:
    from scrydb.index import Index
    from scrydb.tokencount import GrepAgent

#: Rank depth searched for a miss, to say how far off it was.
MISS_DEPTH = 100
LEGS = ("fused", "lexical", "dense")


@dataclass(frozen=True)
class Target:
    """One acceptable answer: a file, a line in it, or a line range."""

    path: str
    start: int | None = None
    end: int | None = None

    @staticmethod
    def parse(text: str) -> Target:
        """``path``, ``path:LINE`` or ``path:A-B``."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"expect entry {text!r} is not a non-empty string")
        try:
            path, a, b = parse_target(text.strip())  # the one parser of path:A-B
        except ScryError:
            raise ValueError(f"expect entry {text!r}: bad line range (use path:A-B)") from None
        if a is None:
            if ":" in path:
                raise ValueError(f"expect entry {text!r}: bad line number (use path:LINE)")
            return Target(path)
        b = a if b is None else b
        if a < 1 or b < a:
            raise ValueError(f"expect entry {text!r}: bad line range (use path:A-B)")
        return Target(path, a, b)

    def matches(self, path: str, start: int, end: int) -> bool:
        """Whether a hit (path, lines start..end) answers this target."""
        if path != self.path:
            return False
        if self.start is None or self.end is None:
            return True
        return start <= self.end and end >= self.start


@dataclass
class Case:
    """One golden case."""

    number: int
    query: str
    targets: list[Target]
    kind: str = "other"
    path_prefix: str | None = None
    lang: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    half: str | None = None  #: "dev" or "test" under the set's split rule; None: no split


@dataclass
class GoldenSet:
    """A parsed TOML set."""

    file: Path
    name: str
    repo: str
    corpus: Path | None
    cases: list[Case]
    split: str | None = None  #: the rule that halves the cases (``[meta] split``)


#: ``[meta] split`` rules. "alternate": within each kind, in file order, the 1st, 3rd, 5th
#: ... case is dev and the 2nd, 4th ... is test: both halves keep the kind mix, and a case
#: added at the end of a kind never moves another case to the other half.
SPLIT_RULES = ("alternate",)
HALVES = ("dev", "test")


def assign_halves(cases: list[Case], rule: str) -> None:
    """Mark each case dev or test under ``rule`` (see SPLIT_RULES)."""
    seen: dict[str, int] = {}
    for c in cases:
        n = seen.get(c.kind, 0)
        c.half = HALVES[n % 2]
        seen[c.kind] = n + 1


def only_half(gs: GoldenSet, half: str | None) -> GoldenSet:
    """The set restricted to one half (``None``/"all": unchanged); a set without a split
    rule cannot be halved."""
    if half in (None, "all"):
        return gs
    if gs.split is None:
        raise ScryError(f"{gs.file}: no [meta] split rule, so it has no {half} half")
    return replace(gs, cases=[c for c in gs.cases if c.half == half])


def load_set(path: str | Path) -> GoldenSet:
    """Parse and validate a golden-set file; errors name the file and case number."""
    from scrydb.config import read_toml

    p = Path(path)
    raw = read_toml(p, "golden set", ScryError)
    meta = raw.get("meta", {})
    if not isinstance(meta, dict):
        raise ScryError(f"{p}: [meta] must be a table")
    raw_cases = raw.get("case", [])
    if not isinstance(raw_cases, list) or not raw_cases:
        raise ScryError(f"{p}: no [[case]] entries")
    cases = []
    for i, c in enumerate(raw_cases, 1):
        if not isinstance(c, dict):
            raise ScryError(f"{p}: case {i} is not a table")
        q = c.get("query")
        if not isinstance(q, str) or not q.strip():
            raise ScryError(f"{p}: case {i} has no query")
        exp = c.get("expect")
        if isinstance(exp, str):
            exp = [exp]
        if not isinstance(exp, list) or not exp:
            raise ScryError(f"{p}: case {i} ({q!r}) has no expect list")
        try:
            targets = [Target.parse(e) for e in exp]
        except ValueError as e:
            raise ScryError(f"{p}: case {i} ({q!r}): {e}") from None
        extra = {
            k: v
            for k, v in c.items()
            if k not in ("query", "expect", "kind", "path_prefix", "lang")
        }
        cases.append(
            Case(
                i,
                q,
                targets,
                str(c.get("kind") or "other"),
                c.get("path_prefix") or None,
                c.get("lang") or None,
                extra,
            )
        )
    corpus = meta.get("corpus")
    split = meta.get("split")
    if split is not None:
        if split not in SPLIT_RULES:
            raise ScryError(
                f"{p}: unknown [meta] split {split!r} (known: {', '.join(SPLIT_RULES)})"
            )
        assign_halves(cases, split)
    return GoldenSet(
        file=p,
        name=p.stem,
        repo=str(meta.get("repo", "")),
        corpus=(p.parent / corpus).resolve() if isinstance(corpus, str) and corpus else None,
        cases=cases,
        split=split,
    )


@dataclass
class CaseResult:
    """Outcome of one case in one leg."""

    case: Case
    rank: int | None  #: rank of the first correct hit within k, or None
    ndcg: float
    seconds: float
    deep_rank: int | None = None  #: rank within MISS_DEPTH, for misses
    top: list[str] = field(default_factory=list)  #: the first hits, ``path:A-B symbol``
    tokens_scry: int | None = None
    tokens_grep: int | None = None


def score_case(case: Case, hits: list[tuple[str, int, int]], k: int) -> tuple[int | None, float]:
    """(rank of the first match within k, NDCG@k) for a ranked list of (path, start, end)."""
    first = None
    matched: set[int] = set()
    dcg = 0.0
    for r, (path, a, b) in enumerate(hits[:k], 1):
        gained = False
        for ti, t in enumerate(case.targets):
            if ti not in matched and t.matches(path, a, b):
                matched.add(ti)
                gained = True
                break
        if any(t.matches(path, a, b) for t in case.targets) and first is None:
            first = r
        if gained:
            dcg += 1.0 / math.log2(r + 1)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(case.targets), k)))
    return first, (dcg / ideal if ideal else 0.0)


def summarise(results: list[CaseResult], k: int) -> dict[str, Any]:
    """Recall@k, MRR@k, NDCG@k, Hit@1/3/5 and latency of a list of case results."""
    n = len(results)
    if n == 0:
        return {"n": 0}
    ranks = [r.rank for r in results]
    lat = sorted(r.seconds * 1000 for r in results)
    return {
        "n": n,
        f"recall@{k}": _r(sum(1 for x in ranks if x is not None) / n),
        f"mrr@{k}": _r(sum(1.0 / x for x in ranks if x is not None) / n),
        f"ndcg@{k}": _r(sum(r.ndcg for r in results) / n),
        "hit@1": _r(sum(1 for x in ranks if x is not None and x <= 1) / n),
        "hit@3": _r(sum(1 for x in ranks if x is not None and x <= 3) / n),
        "hit@5": _r(sum(1 for x in ranks if x is not None and x <= 5) / n),
        "p50_ms": round(_pct(lat, 50), 2),
        "p95_ms": round(_pct(lat, 95), 2),
    }


def _r(x: float) -> float:
    return round(x, 4)


def _pct(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return 0.0
    i = min(len(sorted_values) - 1, max(0, math.ceil(p / 100 * len(sorted_values)) - 1))
    return sorted_values[i]


def db_name(set_name: str, root: Path) -> str:
    """The cached index file for one golden set in ``--db-dir``: keyed by set and corpus root.

    An index belongs to one root, so two checkouts sharing a ``--db-dir`` (a CI cache, two
    clones) each get their own file instead of tripping over the other's.
    """
    digest = hashlib.sha1(str(Path(root).resolve()).encode()).hexdigest()[:10]
    return f"{set_name}-{digest}.db"


class Evaluator:
    """Runs golden sets against their corpora."""

    def __init__(
        self,
        k: int = 10,
        legs: bool = False,
        runs: int = 1,
        repo: str | None = None,
        db_dir: str | None = None,
        progress: Callable[[str], None] | None = None,
        sync_progress: Any = None,
        tokens: bool = False,
        config: str | None = None,
    ) -> None:
        self.k = k
        #: a config file for every corpus (another model, say), instead of each
        #: corpus's own ``.scry.toml``
        self.config = config
        self.legs = LEGS if legs else ("fused",)
        self.runs = max(1, runs)
        self.repo = Path(repo).resolve() if repo else None
        self.db_dir = Path(db_dir) if db_dir else None
        self.say = progress or (lambda msg: None)
        self.sync_progress = sync_progress
        self.tokens = tokens

    def corpus_of(self, gs: GoldenSet) -> Path:
        """The corpus directory of a set (``--repo`` wins over ``[meta] corpus``)."""
        root = self.repo or gs.corpus
        if root is None:
            raise ScryError(f'{gs.file}: no corpus: add [meta] corpus = "DIR" or pass --repo DIR')
        if not root.is_dir():
            raise ScryError(f"{gs.file}: corpus {root} does not exist (run evals/fetch.sh?)")
        return root

    def run(self, sets: list[GoldenSet]) -> dict[str, Any]:
        """Evaluate every set; the JSON-ready report."""
        import scrydb

        report: dict[str, Any] = {
            "k": self.k,
            "runs": self.runs,
            "sets": {},
            "created": time.time(),
        }
        all_results: dict[str, list[CaseResult]] = {leg: [] for leg in self.legs}
        for gs in sets:
            root = self.corpus_of(gs)
            db = None
            if self.db_dir is not None:
                self.db_dir.mkdir(parents=True, exist_ok=True)
                db = self.db_dir / db_name(gs.name, root)
            with scrydb.open(root, db=db, config=self.config) as ix:
                self.say(f"{gs.name}: syncing {root}")
                rep = ix.sync(progress=self.sync_progress)
                warnings = self._missing_targets(ix, gs)
                set_report: dict[str, Any] = {
                    "file": str(gs.file),
                    "repo": gs.repo,
                    "corpus": str(root),
                    "index_seconds": round(rep.seconds, 2),
                    "chunks": store_counts.chunks(ix.store),
                    "warnings": warnings,
                    "legs": {},
                }
                grep = None
                if self.tokens:
                    from scrydb.tokencount import GrepAgent

                    grep = GrepAgent(root, ix)
                    set_report["tokenizer"] = report["tokenizer"] = grep.counter.name
                for leg in self.legs:
                    per_run: list[list[CaseResult]] = []
                    for _ in range(self.runs):
                        per_run.append(
                            [
                                self._run_case(ix, c, leg, grep if leg == "fused" else None)
                                for c in gs.cases
                            ]
                        )
                    results = per_run[0]
                    for r, secs in zip(results, median_seconds(per_run), strict=True):
                        r.seconds = secs  # latency: each case's median over the runs
                    all_results[leg].extend(results)
                    leg_rep = summarise(results, self.k)
                    leg_rep["by_kind"] = _by_kind(results, self.k)
                    if self.runs > 1:
                        leg_rep["runs"] = [summarise(rs, self.k) for rs in per_run]
                    leg_rep["cases"] = [_case_json(r) for r in results]
                    if self.tokens and leg == "fused":
                        leg_rep["tokens"] = _token_summary(results)
                    set_report["legs"][leg] = leg_rep
                report["sets"][gs.name] = set_report
        report["overall"] = {
            leg: summarise(rs, self.k) | {"by_kind": _by_kind(rs, self.k)}
            for leg, rs in all_results.items()
        }
        return report

    def _run_case(self, ix: Index, case: Case, leg: str, grep: GrepAgent | None) -> CaseResult:
        t = time.perf_counter()
        hits = ix.search(case.query, k=self.k, lang=case.lang, path=case.path_prefix, mode=leg)
        dt = time.perf_counter() - t
        ranked = [(h.path, h.start_line, h.end_line) for h in hits]
        first, ndcg = score_case(case, ranked, self.k)
        res = CaseResult(case, first, ndcg, dt)
        res.top = [
            f"{h.path}:{h.start_line}-{h.end_line} {h.symbol or ''}".rstrip() for h in hits[:3]
        ]
        if first is None:
            deep = ix.search(
                case.query, k=MISS_DEPTH, lang=case.lang, path=case.path_prefix, mode=leg
            )
            res.deep_rank, _ = score_case(
                case, [(h.path, h.start_line, h.end_line) for h in deep], MISS_DEPTH
            )
        if grep is not None:
            from scrydb.tokencount import scry_tokens_until

            res.tokens_scry = scry_tokens_until(hits, case)
            res.tokens_grep = grep.tokens_until(case)
        return res

    def _missing_targets(self, ix: Index, gs: GoldenSet) -> list[str]:
        warnings = []
        indexed = indexed_files.paths(ix.store)
        for c in gs.cases:
            for t in c.targets:
                if t.path not in indexed:
                    where = (
                        "not in the corpus" if not (ix.root / t.path).exists() else "not indexed"
                    )
                    warnings.append(f"case {c.number} ({c.query!r}): target {t.path} {where}")
        return warnings


def median_seconds(per_run: list[list[CaseResult]]) -> list[float]:
    """Each case's median latency over all runs (``per_run[run][case]``)."""
    return [statistics.median(r.seconds for r in rs) for rs in zip(*per_run, strict=True)]


def _by_kind(results: list[CaseResult], k: int) -> dict[str, Any]:
    kinds: dict[str, list[CaseResult]] = {}
    for r in results:
        kinds.setdefault(r.case.kind, []).append(r)
    return {kind: summarise(rs, k) for kind, rs in sorted(kinds.items())}


def _case_json(r: CaseResult) -> dict[str, Any]:
    d: dict[str, Any] = {
        "case": r.case.number,
        "query": r.case.query,
        "kind": r.case.kind,
        "rank": r.rank,
        "ndcg": round(r.ndcg, 4),
        "ms": round(r.seconds * 1000, 2),
    }
    if r.rank is None:
        d["deep_rank"] = r.deep_rank
        d["top"] = r.top
        d["expect"] = [_target_text(t) for t in r.case.targets]
    if r.tokens_scry is not None or r.tokens_grep is not None:
        d["tokens_scry"] = r.tokens_scry
        d["tokens_grep"] = r.tokens_grep
    return d


def _token_summary(results: list[CaseResult]) -> dict[str, Any]:
    """Tokens to the first correct answer, compared on the cases both sides answer
    (``ratio`` = grep+read tokens / scry tokens: above 1, scry is cheaper)."""
    pairs = [
        (r.tokens_scry, r.tokens_grep)
        for r in results
        if r.tokens_scry is not None and r.tokens_grep is not None
    ]
    ratios = sorted(g / s for s, g in pairs if s)
    return {
        "cases_with_both": len(pairs),
        "median_scry": statistics.median([s for s, _ in pairs]) if pairs else None,
        "median_grep": statistics.median([g for _, g in pairs]) if pairs else None,
        "total_scry": sum(s for s, _ in pairs),
        "total_grep": sum(g for _, g in pairs),
        "median_ratio": round(statistics.median(ratios), 2) if ratios else None,
        "scry_cheaper": sum(1 for s, g in pairs if s < g),
        "scry_found": sum(1 for r in results if r.tokens_scry is not None),
        "grep_found": sum(1 for r in results if r.tokens_grep is not None),
        "n": len(results),
    }


def _target_text(t: Target) -> str:
    if t.start is None:
        return t.path
    return f"{t.path}:{t.start}" if t.start == t.end else f"{t.path}:{t.start}-{t.end}"


# -- text rendering ----------------------------------------------------------------------


def render(report: dict[str, Any], compare: dict[str, Any] | None = None, misses: int = 10) -> str:
    """The human-readable table (and deltas against ``compare``)."""
    k = report["k"]
    cols = [f"recall@{k}", f"mrr@{k}", f"ndcg@{k}", "hit@1", "hit@3", "hit@5", "p50_ms", "p95_ms"]
    head = f"{'set':<14}{'leg':<9}{'n':>4}  " + "  ".join(f"{c:>9}" for c in cols)
    out = [head, "-" * len(head)]

    def row(name: str, leg: str, s: dict[str, Any], prev: dict[str, Any] | None) -> str:
        cells = []
        for c in cols:
            v = s.get(c)
            cell = "-" if v is None else (f"{v:.1f}" if c.endswith("_ms") else f"{v:.3f}")
            if (
                prev is not None
                and v is not None
                and prev.get(c) is not None
                and not c.endswith("_ms")
            ):
                d = v - prev[c]
                cell = f"{cell}{'+' if d >= 0 else ''}{d:.3f}" if abs(d) >= 0.0005 else cell
            cells.append(f"{cell:>9}")
        return f"{name:<14}{leg:<9}{s.get('n', 0):>4}  " + "  ".join(cells)

    for name, sr in report["sets"].items():
        for leg, lr in sr["legs"].items():
            prev = None
            if compare:
                prev = compare.get("sets", {}).get(name, {}).get("legs", {}).get(leg)
            out.append(row(name, leg, lr, prev))
    if len(report["sets"]) > 1:
        for leg, lr in report["overall"].items():
            prev = compare.get("overall", {}).get(leg) if compare else None
            out.append(row("ALL", leg, lr, prev))
    out.append("")
    out.append("by kind:")
    for leg, lr in report["overall"].items():
        for kind, s in lr.get("by_kind", {}).items():
            prev = (
                compare.get("overall", {}).get(leg, {}).get("by_kind", {}).get(kind)
                if compare
                else None
            )
            out.append(row(kind, leg, s, prev))
    if misses:
        out.append("")
        out.append("misses (fused):")
        for name, sr in report["sets"].items():
            lr = sr["legs"].get("fused")
            if not lr:
                continue
            for c in [c for c in lr["cases"] if c["rank"] is None][:misses]:
                deep = f"rank {c['deep_rank']}" if c.get("deep_rank") else f">{MISS_DEPTH}"
                out.append(
                    f"  {name}#{c['case']} [{c['kind']}] {c['query']!r}: {deep}; want {', '.join(c['expect'][:2])}"
                )
                for t in c["top"]:
                    out.append(f"      got {t}")
    for name, sr in report["sets"].items():
        fused = sr["legs"].get("fused", {})
        if fused.get("tokens"):
            out.extend(_render_tokens(name, sr, fused, k))
        for w in sr.get("warnings", [])[:10]:
            out.append(f"warning {name}: {w}")
    return "\n".join(out)


def _render_tokens(name: str, sr: dict[str, Any], fused: dict[str, Any], k: int) -> list[str]:
    """Per-case token table (``--tokens``) and the set's summary line."""
    tok = fused["tokens"]
    out = ["", f"tokens to the first correct answer, {name} ({sr.get('tokenizer', 'tokenizer')}):"]
    out.append(
        f"  {'case':>4}  {'kind':<10} {'rank':>4}  {'scry':>6}  {'grep+read':>9}  {'ratio':>6}  query"
    )
    for c in fused["cases"]:
        s, g = c.get("tokens_scry"), c.get("tokens_grep")
        ratio = f"{g / s:.1f}x" if s and g is not None else "-"
        query = c["query"] if len(c["query"]) <= 60 else c["query"][:57] + "..."
        out.append(
            f"  {c['case']:>4}  {c['kind']:<10} {c['rank'] or '-':>4}  {s if s is not None else '-':>6}  "
            f"{g if g is not None else '-':>9}  {ratio:>6}  {query}"
        )

    def med(v: Any) -> str:
        return "-" if v is None else f"{v:.0f}"

    out.append(
        f"tokens {name}: median scry {med(tok['median_scry'])} vs grep+read {med(tok['median_grep'])} "
        f"on the {tok['cases_with_both']} cases both answer (grep+read/scry median {tok['median_ratio']}x, "
        f"total {tok['total_scry']} vs {tok['total_grep']}; scry cheaper in {tok['scry_cheaper']}); "
        f"answered: scry {tok['scry_found']}/{tok['n']} in its top {k}, "
        f"grep+read {tok['grep_found']}/{tok['n']}"
    )
    return out


def check_floor(report: dict[str, Any], baseline: dict[str, Any], tolerance: float) -> list[str]:
    """Sets whose fused MRR fell more than ``tolerance`` below the baseline."""
    k = report["k"]
    failures = []
    for name, base in baseline.get("sets", {}).items():
        cur = report["sets"].get(name, {}).get("legs", {}).get("fused")
        if cur is None:
            continue
        want = base.get(f"mrr@{k}") if isinstance(base, dict) else base
        if want is not None and cur[f"mrr@{k}"] < want - tolerance:
            failures.append(
                f"{name}: MRR@{k} {cur[f'mrr@{k}']:.3f} < baseline {want:.3f} - {tolerance}"
            )
    return failures


def load_json(path: str | Path) -> dict[str, Any]:
    """Read an earlier ``--json`` report or a baseline file."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ScryError(f"cannot read {path}: {e}") from None
