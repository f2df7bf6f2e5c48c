"""Learned fusion (issue 14, part 4): synthetic queries, ranker features, a fitted linear model.

    # 1. synthetic queries over training packages (docstrings blanked out of the code)
    python -m training fusion synth --data DATA --out SYNTH
    # 2. the ranker's candidates and features, per query, with a chosen embedding model
    python -m training fusion dump --model M --synth SYNTH --db-dir D --out synth.npz
    python -m training fusion dump --model M --db-dir EVAL_DBS --half dev \\
        --out dev.npz evals/*.toml
    # 3. fit on the synthetic queries, compare with the hand ranker on golden halves
    python -m training fusion fit --train synth.npz --check dev.npz --out scrydb/search/fusion.json
    # or: judge a chunking / view / ranking change on the synthetic queries (two dumps)
    python -m training fusion compare before.npz after.npz

Synthetic queries come from the training corpus's mined pairs (OUT of corpus.py): for a
package, its source is copied, the docstring sentence each ``doc`` pair uses as its query
is blanked out of the copy (lines kept, so line numbers hold), and the copy is indexed by
scrydb. Queries: the docstring sentence (question-shaped), the name in words (keyword),
the name itself (identifier), and two variants of docstring queries: a "where ..." question
(location-shaped) and the sentence without the words the code's identifiers hold
(paraphrase-like). The answer is the chunk the pair was mined from (path and
symbol). The golden sets are only ever scored, never fitted.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from training import add_data_option
from training.train import delexicalise

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


#: Training packages the synthetic queries come from by default: a spread of languages,
#: each small enough to embed in a minute or two (none is held out by corpus.py).
PACKAGES = [
    "pypi/arrow",
    "pypi/marshmallow",
    "pypi/bottle",
    "pypi/lz4",
    "deb/golang-github-burntsushi-toml-dev",
    "deb/golang-github-sirupsen-logrus-dev",
    "deb/librust-bytes-dev",
    "deb/librust-log-dev",
    "npm/axios",
    "npm/validator",
    "deb/php-guzzlehttp-psr7",
    "deb/ruby-sinatra",
    "deb/rapidjson-dev",
    "pypi/bleach",
    "pypi/deepdiff",
    "pypi/mako",
    "pypi/bidict",
    "deb/golang-github-google-go-cmp-dev",
    "deb/golang-github-pelletier-go-toml-dev",
    "deb/librust-memchr-dev",
    "deb/librust-smallvec-dev",
    "npm/winston",
    "deb/php-twig",
    "deb/ruby-thor",
    "deb/libglm-dev",
]
PER_PACKAGE = {"doc": 45, "name": 12, "ident": 12}
#: Variants of the chosen (blanked) docstring queries, so every query shape the ranker
#: weighs differently gets examples: "where ..." (location shape) and the sentence without
#: the words the code's identifiers hold (paraphrase-like: thin lexical evidence).
PER_PACKAGE_VARIANTS = {"where": 12, "para": 12}
_PRONOUN_START = {"the", "a", "an", "this", "these", "all", "any", "each", "some"}


def where_query(sentence: str) -> str:
    """A location-shaped question from a docstring sentence: "Returns the next weekday."
    -> "where is the code that returns the next weekday"; "Return ..." -> "where do we
    return ..."; "The current user." -> "where is the current user"."""
    s = sentence.strip().rstrip(".!")
    first = s.split(" ", 1)[0]
    lc = s[:1].lower() + s[1:]
    low = first.lower()
    if low in _PRONOUN_START:
        return f"where is {lc}"
    if low.endswith("s") and not low.endswith(("ss", "us", "is")) and len(low) > 3:
        return f"where is the code that {lc}"
    return f"where do we {lc}"


MAX_PER_FILE = 5  # rank.MAX_PER_FILE, for the offline re-ranking
K = 10


# ---------------------------------------------------------------------------------------
# synth
# ---------------------------------------------------------------------------------------


def _pairs_of(data: Path, name: str) -> list[dict]:
    files = glob.glob(str(data / "mined" / f"{name.split('/')[-1]}.*.json"))
    if not files:
        return []
    return json.loads(Path(files[0]).read_text())["pairs"]


def _root_for(src: Path, rel: str) -> Path | None:
    for dirpath, _dirs, _files in os.walk(src):
        if (Path(dirpath) / rel).is_file():
            return Path(dirpath)
    return None


def _blank(text: str, sentence: str) -> tuple[str, bool]:
    """``text`` with ``sentence`` removed where it occurs, across line breaks and comment
    markers; newlines are kept so line numbers do not move."""
    words = re.findall(r"\S+", sentence)
    if len(words) < 2:
        return text, False
    gap = r"(?:\s|[#*/;!-])+"
    pat = gap.join(re.escape(w) for w in words)
    m = re.search(pat, text)
    if not m:
        return text, False
    span = text[m.start() : m.end()]
    return text[: m.start()] + "\n" * span.count("\n") + text[m.end() :], True


def synth(args: argparse.Namespace) -> int:
    data, out = Path(args.data), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(14)
    total = 0
    for pkg in args.packages or PACKAGES:
        name = pkg.split("/")[-1]
        pairs = _pairs_of(data, name)
        if not pairs:
            print(f"{pkg}: no mined pairs", file=sys.stderr)
            continue
        root = _root_for(data / "src" / pkg, pairs[0]["path"])
        if root is None:
            print(f"{pkg}: cannot find {pairs[0]['path']}", file=sys.stderr)
            continue
        dest = out / name
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(root, dest, symlinks=False, ignore_dangling_symlinks=True)
        by_kind: dict[str, list[dict]] = {"doc": [], "name": [], "ident": []}
        for p in pairs:
            if p["source"] == "doc":
                by_kind["doc"].append(p)
            elif p["source"] == "name":
                by_kind["name"].append(p)
            first = p["symbol"].split(", ")[0]
            if p["source"] == "doc" and re.fullmatch(r"[A-Za-z_][\w.:]*", first):
                by_kind["ident"].append({**p, "query": first, "source": "ident"})
        queries: list[dict] = []
        for kind, items in by_kind.items():
            rng.shuffle(items)
            seen = set()
            for p in items:
                if len([q for q in queries if q["kind"] == kind]) >= PER_PACKAGE[kind]:
                    break
                if p["query"] in seen or not (dest / p["path"]).is_file():
                    continue
                if kind == "doc":
                    f = dest / p["path"]
                    text, ok = _blank(f.read_text(errors="replace"), p["query"])
                    if not ok:
                        continue
                    f.write_text(text)
                seen.add(p["query"])
                queries.append(
                    {"query": p["query"], "path": p["path"], "symbol": p["symbol"], "kind": kind}
                )
        docs = [q for q in queries if q["kind"] == "doc"]
        code_of = {p["query"]: p["code"] for p in by_kind["doc"]}
        rng.shuffle(docs)
        for q in docs[: PER_PACKAGE_VARIANTS["where"]]:
            queries.append({**q, "query": where_query(q["query"]), "kind": "where"})
        n_para = 0
        for q in docs:
            if n_para >= PER_PACKAGE_VARIANTS["para"]:
                break
            d = delexicalise(q["query"], code_of.get(q["query"], ""))
            if d and d != q["query"]:
                queries.append({**q, "query": d, "kind": "para"})
                n_para += 1
        (out / f"{name}.queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
        total += len(queries)
        print(f"{pkg}: {len(queries)} queries", file=sys.stderr)
    print(f"{total} queries in {out}")
    return 0


# ---------------------------------------------------------------------------------------
# dump
# ---------------------------------------------------------------------------------------


class Capture:
    """Keeps the last fusion a search made, observed through the public hook
    (``scrydb.search.fusion.observing``) for the rest of the process."""

    def __init__(self) -> None:
        from scrydb.search import fusion

        self.last: tuple[list, Any, float] | None = None
        self._hook = fusion.observing(self._seen)
        self._hook.__enter__()

    def _seen(self, ev: Any) -> None:
        self.last = (ev.candidates, ev.query, ev.coverage)


class Dump:
    """Rows of features with their query id, label, hand score, path and kind."""

    def __init__(self) -> None:
        self.x: list[np.ndarray] = []
        self.qid: list[np.ndarray] = []
        self.label: list[np.ndarray] = []
        self.hand: list[np.ndarray] = []
        self.paths: list[str] = []
        self.kinds: list[str] = []
        self.sets: list[str] = []
        self.n = 0

    def add(self, cap: Capture, targets, kind: str, set_name: str) -> None:
        from scrydb.search import learned

        assert cap.last is not None
        cands, q, cov = cap.last
        cap.last = None
        x = learned.features(cands, q.shape, cov)
        lab = np.array(
            [any(t.matches(c.path, c.start_line, c.end_line) for t in targets) for c in cands],
            dtype=np.int8,
        )
        self.x.append(x)
        self.qid.append(np.full(len(cands), self.n, dtype=np.int32))
        self.label.append(lab)
        self.hand.append(np.array([c.score for c in cands]))
        self.paths.extend(c.path for c in cands)
        self.kinds.append(kind)
        self.sets.append(set_name)
        self.n += 1

    def save(self, path: str) -> None:
        from scrydb.search import learned

        np.savez_compressed(
            path,
            x=np.concatenate(self.x),
            qid=np.concatenate(self.qid),
            label=np.concatenate(self.label),
            hand=np.concatenate(self.hand),
            paths=np.array(self.paths),
            kinds=np.array(self.kinds),
            sets=np.array(self.sets),
            features=np.array(learned.FEATURES),
        )


def _config(model: str) -> str:
    cfg = Path(tempfile.mkdtemp(prefix="scry-fusion-")) / "scry.toml"
    if Path(model).is_dir():
        model = str(Path(model).resolve())
    cfg.write_text(f'[embed]\nmodel = "{model}"\n[search]\nfusion = "hand"\n')
    return str(cfg)


def dump(args: argparse.Namespace) -> int:
    import scrydb
    from scrydb import evaluate
    from scrydb.evaluate import Target

    cfg = _config(args.model)
    cap = Capture()
    d = Dump()
    db_dir = Path(args.db_dir)
    db_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    if args.synth:
        for qf in sorted(Path(args.synth).glob("*.queries.jsonl")):
            name = qf.name.split(".queries")[0]
            queries = [json.loads(ln) for ln in qf.read_text().splitlines() if ln.strip()]
            with scrydb.open(Path(args.synth) / name, db=db_dir / f"{name}.db", config=cfg) as ix:
                ix.sync()
                used = 0
                for qd in queries:
                    rows = ix.store.rows(
                        "SELECT c.start_line, c.end_line FROM chunks c JOIN files f "
                        "ON f.id = c.file_id WHERE f.path = ? AND c.symbol = ?",
                        (qd["path"], qd["symbol"]),
                    )
                    if not rows:
                        continue
                    targets = [Target(qd["path"], a, b) for a, b in rows]
                    ix.search(qd["query"], k=K)
                    if cap.last is None:
                        continue
                    d.add(cap, targets, qd["kind"], name)
                    used += 1
                print(
                    f"{name}: {used}/{len(queries)} queries ({time.time() - t0:.0f}s)",
                    file=sys.stderr,
                )
    for case_file in args.cases:
        gs = evaluate.only_half(evaluate.load_set(case_file), args.half)
        root = gs.corpus
        assert root is not None
        with scrydb.open(root, db=db_dir / evaluate.db_name(gs.name, root), config=cfg) as ix:
            ix.sync()
            for c in gs.cases:
                ix.search(c.query, k=K, lang=c.lang, path=c.path_prefix)
                if cap.last is None:
                    continue
                d.add(cap, c.targets, c.kind, gs.name)
        print(f"{gs.name}: done ({time.time() - t0:.0f}s)", file=sys.stderr)
    d.save(args.out)
    print(f"{d.n} queries -> {args.out}")
    return 0


# ---------------------------------------------------------------------------------------
# fit / check
# ---------------------------------------------------------------------------------------


def _load(path: str) -> dict:
    z = np.load(path, allow_pickle=False)
    return {k: z[k] for k in z.files}


def _groups(qid: np.ndarray) -> list[np.ndarray]:
    order = np.argsort(qid, kind="stable")
    bounds = np.flatnonzero(np.diff(qid[order])) + 1
    return np.split(order, bounds)


def ranks(d: dict, scores: np.ndarray) -> list[int | None]:
    """Rank (1-based, within K after the per-file cap) of each query's first right hit."""
    out: list[int | None] = []
    for g in _groups(d["qid"]):
        order = g[np.argsort(-scores[g], kind="stable")]
        per_file: dict[str, int] = {}
        r, found = 0, None
        for i in order:
            p = str(d["paths"][i])
            if per_file.get(p, 0) >= MAX_PER_FILE:
                continue
            per_file[p] = per_file.get(p, 0) + 1
            r += 1
            if r > K:
                break
            if d["label"][i]:
                found = r
                break
        out.append(found)
    return out


def mrr(rs: list[int | None]) -> float:
    return float(np.mean([1.0 / r if r else 0.0 for r in rs])) if rs else 0.0


def report(d: dict, scores: dict[str, np.ndarray]) -> str:
    kinds = d["kinds"]
    lines = [f"{'kind':12} {'n':>4} " + " ".join(f"{n:>14}" for n in scores)]
    per = {n: ranks(d, s) for n, s in scores.items()}
    for kind in [*sorted(set(kinds.tolist())), "ALL"]:
        idx = [i for i, k in enumerate(kinds) if kind == "ALL" or k == kind]
        cells = []
        for n in scores:
            rs = [per[n][i] for i in idx]
            hit = np.mean([r is not None for r in rs])
            cells.append(f"{mrr(rs):.3f}/{hit:.3f}".rjust(14))
        lines.append(f"{kind:12} {len(idx):>4} " + " ".join(cells))
    return "\n".join(lines) + "\n(MRR@10 / Recall@10, offline re-ranking of the dumped pools)"


def fit(args: argparse.Namespace) -> int:
    from scipy.optimize import minimize

    from scrydb.search import learned

    d = _load(args.train)
    assert list(d["features"]) == list(learned.FEATURES), "features changed: dump again"
    x, lab = d["x"], d["label"].astype(bool)
    groups = [g for g in _groups(d["qid"]) if lab[g].any()]
    if args.kinds:
        wanted = set(args.kinds.split(","))
        groups = [g for g in groups if d["kinds"][d["qid"][g[0]]] in wanted]
    # The hand score's weight is free; every correction is pulled towards 0 (a hand-only
    # start: the hand score scaled to the softmax's temperature).
    mu = np.zeros(x.shape[1])
    free = np.ones(x.shape[1])
    free[list(learned.FEATURES).index("hand")] = 0.0
    print(
        f"fit on {len(groups)} queries with a right answer in the pool "
        f"(of {len(_groups(d['qid']))}), {x.shape[1]} features",
        file=sys.stderr,
    )

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        s = x @ w
        total, grad = 0.0, np.zeros_like(w)
        for g in groups:
            sg = s[g] - s[g].max()
            p = np.exp(sg)
            p /= p.sum()
            pos = lab[g]
            # -log of the probability mass on the right answers
            mass = p[pos].sum()
            total -= np.log(mass + 1e-12)
            q = np.where(pos, p / (mass + 1e-12), 0.0)
            grad += x[g].T @ (p - q)
        n = len(groups)
        dw = (w - mu) * free
        return total / n + args.l2 * float(dw @ dw), grad / n + 2 * args.l2 * dw

    w0 = np.zeros(x.shape[1])
    w0[list(learned.FEATURES).index("hand")] = 10.0
    res = minimize(loss, w0, jac=True, method="L-BFGS-B", options={"maxiter": 500})
    w = res.x
    print(f"loss {res.fun:.4f} after {res.nit} iterations", file=sys.stderr)
    for name, v in sorted(zip(learned.FEATURES, w, strict=True), key=lambda t: -abs(t[1])):
        print(f"  {name:18} {v:+.3f}", file=sys.stderr)
    print("training queries:\n" + report(d, {"hand": d["hand"], "learned": x @ w}))
    for path in args.check:
        c = _load(path)
        print(f"\n{path}:\n" + report(c, {"hand": c["hand"], "learned": c["x"] @ w}))
    if args.out:
        Path(args.out).write_text(
            json.dumps(
                {
                    "about": "learned fusion weights (scrydb/search/learned.py); fitted by "
                    "training/fusion.py fit on synthetic queries, never on the golden sets",
                    "trained_on": f"synthetic queries from {len(set(d['sets'].tolist()))} "
                    "training packages (training/fusion.py PACKAGES)",
                    "embedding_model": args.model_name,
                    "queries": len(groups),
                    "query_kinds": args.kinds or ",".join(sorted(set(d["kinds"].tolist()))),
                    "l2": args.l2,
                    "features": list(learned.FEATURES),
                    "weights": [round(float(v), 6) for v in w],
                },
                indent=1,
            )
            + "\n"
        )
        print(f"wrote {args.out}")
    return 0


def compare(args: argparse.Namespace) -> int:
    """Two dumps of the same queries (e.g. indexes built before and after a chunking or
    view change, dumped from copies of the same --db-dir) ranked by the shipped fusion:
    MRR@10 per kind and the paired difference with a bootstrap 95% interval. The 2,187
    synthetic queries are ten times a golden dev half, so a change of 0.005 shows."""
    from scrydb.search import learned

    w = np.array(json.loads(learned.WEIGHTS_FILE.read_text())["weights"])
    a, b = _load(args.a), _load(args.b)
    ra, rb = ranks(a, a["x"] @ w), ranks(b, b["x"] @ w)
    if len(ra) != len(rb) or list(a["kinds"]) != list(b["kinds"]):
        print("the dumps hold different queries: dump both from the same --synth", file=sys.stderr)
        return 1
    print(report(a, {"A": a["x"] @ w}))
    print(report(b, {"B": b["x"] @ w}))
    diff = np.array(
        [(1 / y if y else 0.0) - (1 / x if x else 0.0) for x, y in zip(ra, rb, strict=True)]
    )
    rng = np.random.default_rng(0)
    boot = np.sort(diff[rng.integers(0, len(diff), (2000, len(diff)))].mean(axis=1))
    print(
        f"B - A: {diff.mean():+.4f} (95% {boot[50]:+.4f} .. {boot[1949]:+.4f}); "
        f"{int((diff != 0).sum())} of {len(diff)} queries moved"
    )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("synth")
    add_data_option(s)
    s.add_argument("--out", required=True)
    s.add_argument("packages", nargs="*")
    d = sub.add_parser("dump")
    d.add_argument("--model", required=True)
    d.add_argument("--db-dir", required=True)
    d.add_argument("--out", required=True)
    d.add_argument("--synth", default="")
    d.add_argument("--half", default="all", choices=["all", "dev", "test"])
    d.add_argument("cases", nargs="*")
    f = sub.add_parser("fit")
    f.add_argument("--train", required=True)
    f.add_argument("--check", nargs="*", default=[])
    f.add_argument("--l2", type=float, default=1e-3)
    f.add_argument("--out", default="")
    f.add_argument("--model-name", default="", help="the dump's embedding model (metadata)")
    f.add_argument(
        "--kinds", default="", help="fit on these synthetic query kinds only (comma-separated)"
    )
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args()
    return {"synth": synth, "dump": dump, "fit": fit, "compare": compare}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
