"""Distil the teacher (all-mpnet-base-v2) into a MiniLM-L6 student of the shipped size (issue 30).

    python -m training distill texts   --data DATA --out D --pairs 12000
    python -m training distill teacher --out D --budget-min 40      # resumable, in shards
    python -m training distill project --out D                       # 768 -> 384 basis
    python -m training distill train   --out D --budget-min 35       # resumable
    python -m training distill score   --out D                       # held-out pair retrieval

The student does not learn a projection head: the teacher's vectors are brought to 384
dimensions once, by the top right singular vectors of the (uncentred) teacher vectors, which
keep dot products best in the least-squares sense, then turned by the orthogonal rotation that
lies nearest to the student's own starting space (Procrustes), so the student starts close to
its target and cosines are those of the projected teacher. The student therefore stays a plain
BERT + mean pooling + normalise model: 384 dimensions, and scrydb's numpy query encoder runs it.

Two designs are scored from the same student:

- symmetric: the student embeds queries and code;
- asymmetric: the student embeds code, the teacher embeds the query and the same basis
  projects it (one teacher pass per query).

Loss: 1 - cos(student(x), target(x)) over every text of a batch, plus the mean squared
difference of the batch's similarity matrices (query-code and code-code similarities, the
numbers a search ranks by). Texts: (docstring or name query, code) pairs of the training
corpus (``corpus.py``), never a package that an evaluation uses. Held-out packages are
scored, never trained on.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from training import add_data_option

REPO = Path(__file__).resolve().parent.parent

SHARD = 128  # pairs per teacher shard
DIM = 384


def teacher_dir() -> str:
    """The teacher's folder, assembled and checked by scrydb.embed.parts (pinned sha256)."""
    from scrydb.embed.parts import MPNET, model_dir

    return str(model_dir(MPNET))


def student_base() -> str:
    return str(REPO / "scrydb" / "models" / "scry-code-minilm")


def log(out: Path, rec: dict) -> None:
    rec = {"time": time.strftime("%H:%M:%S"), **rec}
    print(json.dumps(rec), file=sys.stderr, flush=True)
    with open(out / "log.jsonl", "a") as f:
        f.write(json.dumps(rec) + "\n")


def read_jsonl(path: Path) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f]


# --------------------------------------------------------------------------- texts


def cmd_texts(args) -> None:
    """pairs.jsonl (training pairs, shuffled) and heldout.jsonl (held-out packages' pairs)."""
    from training.train import delexicalise

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    rows = read_jsonl(Path(args.data) / "train.jsonl")
    rng.shuffle(rows)
    pairs = []
    for r in rows[: args.pairs]:
        q = r["query"]
        # a share of docstring queries loses the words the code's identifiers hold: the
        # paraphrase shape, whose teacher vectors the student most needs to learn
        if r.get("source") == "doc" and rng.random() < args.delex:
            q = delexicalise(q, r["code"]) or q
        pairs.append({"q": q, "c": r["code"], "package": r["package"], "lang": r["lang"]})
    with open(out / "pairs.jsonl", "w") as f:
        for p in pairs:
            f.write(json.dumps(p) + "\n")
    held = read_jsonl(Path(args.data) / "heldout.jsonl")
    # its own generator: the held-out draw (and its teacher shards) stays the same whatever
    # --pairs is, so a run can grow its pairs file and keep every shard already embedded
    random.Random(args.seed + 1).shuffle(held)
    with open(out / "heldout.jsonl", "w") as f:
        for r in held[: args.heldout]:
            f.write(json.dumps({"q": r["query"], "c": r["code"], "package": r["package"]}) + "\n")
    log(out, {"step": "texts", "pairs": len(pairs), "heldout": min(len(held), args.heldout)})


# --------------------------------------------------------------------------- teacher


def load_st(path: str, max_seq: int):
    from sentence_transformers import SentenceTransformer

    m = SentenceTransformer(path, device="cpu")
    m.max_seq_length = max_seq
    return m.float()  # the shipped model is fp16; autocast wants float32 weights


def encode(model, texts: list[str], bf16: bool, batch: int = 32) -> np.ndarray:
    import torch

    with torch.inference_mode(), torch.autocast("cpu", torch.bfloat16, enabled=bf16):
        v = model.encode(texts, batch_size=batch, convert_to_numpy=True, normalize_embeddings=True)
    return np.asarray(v, dtype=np.float32)


def cmd_teacher(args) -> None:
    """Teacher vectors of every pair, SHARD pairs per file (q then c), until the budget ends.
    Held-out pairs first (they score everything), then training pairs in order."""
    from scrydb.embed.local import native_bf16

    out = Path(args.out)
    tdir = out / "teacher"
    tdir.mkdir(exist_ok=True)
    model = load_st(args.model or teacher_dir(), args.max_seq)
    bf16 = native_bf16()
    deadline = time.time() + args.budget_min * 60
    for name in ("heldout", "pairs"):
        rows = read_jsonl(out / f"{name}.jsonl")
        for s in range(0, len(rows), SHARD):
            dest = tdir / f"{name}-{s // SHARD:05d}.npz"
            part = rows[s : s + SHARD]
            if dest.exists() and len(np.load(dest)["q"]) == len(part):
                continue  # (a short last shard of a smaller pairs file is embedded again)
            if time.time() > deadline:
                log(out, {"step": "teacher", "stopped": "budget", "at": f"{name} {s}"})
                return
            t0 = time.time()
            q = encode(model, [r["q"] for r in part], bf16)
            c = encode(model, [r["c"] for r in part], bf16)
            np.savez(str(dest) + ".tmp.npz", q=q.astype(np.float16), c=c.astype(np.float16))
            Path(str(dest) + ".tmp.npz").rename(dest)
            log(out, {"step": "teacher", "shard": dest.name, "s": round(time.time() - t0, 1)})
    log(out, {"step": "teacher", "done": True})


def teacher_vectors(out: Path, name: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(queries, codes, n): the teacher vectors of the first n pairs of ``name``."""
    qs, cs = [], []
    for s in range(10**6):
        f = out / "teacher" / f"{name}-{s:05d}.npz"
        if not f.exists():
            break
        z = np.load(f)
        qs.append(z["q"].astype(np.float32))
        cs.append(z["c"].astype(np.float32))
        if len(z["q"]) < SHARD:  # a short shard ends the run of aligned vectors
            break
    if not qs:
        return np.zeros((0, 768), np.float32), np.zeros((0, 768), np.float32), 0
    q, c = np.concatenate(qs), np.concatenate(cs)
    return q, c, len(q)


# --------------------------------------------------------------------------- project


def normalise(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=1, keepdims=True)
    n[n == 0] = 1
    return (v / n).astype(np.float32)


def pair_mrr(q: np.ndarray, c: np.ndarray, groups: list[str], k: int = 10) -> float:
    """Each query against the codes of its own package: MRR@k of its own code."""
    by: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        by.setdefault(g, []).append(i)
    rr = []
    for idx in by.values():
        idx_a = np.array(idx)
        sims = q[idx_a] @ c[idx_a].T
        for row, _ in enumerate(idx):
            rank = int((sims[row] > sims[row, row]).sum())
            rr.append(1.0 / (rank + 1) if rank < k else 0.0)
    return float(np.mean(rr)) if rr else 0.0


def cmd_project(args) -> None:
    """proj.npy (768 x 384): the teacher's top singular directions, rotated onto the
    student's starting space."""
    from scrydb.embed.local import native_bf16

    out = Path(args.out)
    q, c, n = teacher_vectors(out, "pairs")
    t = np.concatenate([q, c])
    _, s, vt = np.linalg.svd(t, full_matrices=False)
    basis = vt[:DIM].T  # 768 x 384
    kept = float((s[:DIM] ** 2).sum() / (s**2).sum())
    # Procrustes: the rotation of the projected teacher nearest the student's own vectors
    rng = np.random.default_rng(0)
    pick = rng.choice(n, size=min(n, args.align), replace=False)
    student = load_st(student_base(), args.max_seq)
    bf16 = native_bf16()
    texts_rows = read_jsonl(out / "pairs.jsonl")
    sq = encode(student, [texts_rows[i]["q"] for i in pick], bf16)
    sc = encode(student, [texts_rows[i]["c"] for i in pick], bf16)
    s0 = np.concatenate([sq, sc])
    tp = np.concatenate([q[pick], c[pick]]) @ basis
    u, _, wt = np.linalg.svd(tp.T @ s0)
    rot = u @ wt
    proj = (basis @ rot).astype(np.float32)
    np.save(out / "proj.npy", proj)
    tgt = normalise(tp @ rot)
    start_cos = float((tgt * s0).sum(1).mean())
    log(
        out,
        {
            "step": "project",
            "pairs": n,
            "energy_kept": round(kept, 4),
            "start_cos": round(start_cos, 4),
        },
    )


# --------------------------------------------------------------------------- train


def cmd_train(args) -> None:
    import torch

    from scrydb.embed.local import native_bf16

    out = Path(args.out)
    run = out / args.run
    run.mkdir(exist_ok=True)
    proj = torch.from_numpy(np.load(out / "proj.npy"))
    q, c, n = teacher_vectors(out, "pairs")
    n = min(n, args.max_pairs) if args.max_pairs else n
    first = min(args.from_pair, n)  # a continuation run trains on pairs it has not seen
    rows = read_jsonl(out / "pairs.jsonl")[first:n]
    tq = torch.nn.functional.normalize(torch.from_numpy(q[first:n]) @ proj, dim=1)
    tc = torch.nn.functional.normalize(torch.from_numpy(c[first:n]) @ proj, dim=1)
    n -= first

    torch.manual_seed(args.seed)
    ckpt = run / "checkpoint"
    start = str(ckpt / "model") if ckpt.exists() else args.init or student_base()
    model = load_st(start, args.max_seq)
    model.train()
    # float32 master weights (the shipped model is fp16)
    model.float()
    tr = model[0]
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    order = list(range(n))
    random.Random(args.seed).shuffle(order)
    # sort by code length inside windows of 20 batches: less padding
    win = args.batch * 20
    batches = []
    for s in range(0, n, win):
        part = sorted(order[s : s + win], key=lambda j: len(rows[j]["c"]))
        bs = [part[k : k + args.batch] for k in range(0, len(part), args.batch)]
        random.Random(args.seed + s).shuffle(bs)
        batches.extend(bs)
    steps = len(batches) * args.epochs
    warm = max(1, int(0.05 * steps))

    def lr_at(step: int) -> float:
        return min(1.0, (step + 1) / warm) * max(0.0, (steps - step) / max(1, steps - warm))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    step = 0
    if ckpt.exists():
        st = torch.load(ckpt / "state.pt", weights_only=False)
        opt.load_state_dict(st["optimizer"])
        sched.load_state_dict(st["scheduler"])
        step = st["step"]
    bf16 = native_bf16()
    deadline = time.time() + args.budget_min * 60
    log(
        out,
        {
            "step": "train",
            "run": args.run,
            "pairs": n,
            "first": first,
            "steps": steps,
            "from": step,
            "init": args.init or "shipped",
            "bf16": bf16,
        },
    )

    def embed(texts: list[str], max_len: int):
        feats = model.tokenize(texts)
        feats = {k: v[:, :max_len] for k, v in feats.items() if hasattr(v, "shape")}
        with torch.autocast("cpu", torch.bfloat16, enabled=bf16):
            o = tr(feats)["token_embeddings"]
        mask = feats["attention_mask"].unsqueeze(-1).float()
        pooled = (o.float() * mask).sum(1) / mask.sum(1).clamp(min=1)
        return torch.nn.functional.normalize(pooled, dim=1)

    t_last = time.time()
    losses: list[float] = []
    while step < steps:
        b = batches[step % len(batches)]
        sq = embed([rows[j]["q"] for j in b], 64)
        sc = embed([rows[j]["c"] for j in b], args.max_seq)
        s_all = torch.cat([sq, sc])
        t_all = torch.cat([tq[b], tc[b]])
        l_vec = (1 - (s_all * t_all).sum(1)).mean()
        l_sim = ((s_all @ s_all.T - t_all @ t_all.T) ** 2).mean()
        loss = l_vec + args.sim_weight * l_sim
        if args.nce_weight:
            # the pairs themselves, contrastively (each query against the batch's codes):
            # keeps what the shipped model learned from docstring pairs
            logits = 20.0 * sq @ sc.T
            l_nce = torch.nn.functional.cross_entropy(logits, torch.arange(len(b)))
            loss = loss + args.nce_weight * l_nce
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        step += 1
        losses.append(float(loss))
        if step % 10 == 0:
            log(
                out,
                {
                    "step": "train",
                    "at": step,
                    "of": steps,
                    "loss": round(float(np.mean(losses)), 4),
                    "vec": round(float(l_vec), 4),
                    "sim": round(float(l_sim), 5),
                    "s_per_step": round((time.time() - t_last) / 10, 2),
                },
            )
            losses = []
            t_last = time.time()
        if step % args.save_every == 0 or step == steps or time.time() > deadline:
            save_checkpoint(run, model, opt, sched, step)
            if time.time() > deadline and step < steps:
                log(out, {"step": "train", "stopped": "budget", "at": step})
                return
    final = run / "final"
    model.save(str(final))
    from training.train import write_classic_configs

    write_classic_configs(str(final), 256)
    log(out, {"step": "train", "done": step, "final": str(final)})


def save_checkpoint(run: Path, model, opt, sched, step: int) -> None:
    import shutil

    import torch

    tmp = run / "checkpoint.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    model.save(str(tmp / "model"))
    torch.save(
        {"optimizer": opt.state_dict(), "scheduler": sched.state_dict(), "step": step},
        tmp / "state.pt",
    )
    final = run / "checkpoint"
    if final.exists():
        shutil.rmtree(final)
    tmp.rename(final)


# --------------------------------------------------------------------------- score


def cmd_score(args) -> None:
    """Held-out pair retrieval (each query against its own package's codes), MRR@10: the
    teacher in full, projected to 384, the shipped model, the student (both designs)."""
    from scrydb.embed.local import native_bf16

    out = Path(args.out)
    held = read_jsonl(out / "heldout.jsonl")
    q, c, n = teacher_vectors(out, "heldout")
    held = held[:n]
    groups = [r["package"] for r in held]
    proj = np.load(out / "proj.npy")
    res = {
        "teacher": pair_mrr(q, c, groups),
        "teacher_384": pair_mrr(normalise(q @ proj), normalise(c @ proj), groups),
    }
    bf16 = native_bf16()
    for name, path in (
        ("shipped", student_base()),
        ("student", args.student or str(out / "student" / "final")),
    ):
        if not Path(path).exists():
            continue
        m = load_st(path, 256)
        sq = encode(m, [r["q"] for r in held], bf16)
        sc = encode(m, [r["c"] for r in held], bf16)
        res[name] = pair_mrr(sq, sc, groups)
        if name == "student":
            res["student_asym"] = pair_mrr(normalise(q @ proj), sc, groups)
            tgt = normalise(c @ proj)
            res["student_code_cos"] = float((tgt * sc).sum(1).mean())
    log(out, {"step": "score", "heldout_pairs": n, **{k: round(v, 4) for k, v in res.items()}})


def cmd_golden(args) -> None:
    """The golden sets with the student: symmetric (the student embeds queries too) or
    asymmetric (the teacher embeds each query, projected by proj.npy). Same evaluator as
    ``scry eval``; a separate --db-dir per design (query vectors are cached in the index)."""
    import shutil

    from scrydb.embed import local
    from training.eval_golden import run_sets

    out = Path(args.out)
    student = str(Path(args.student or out / "student" / "final").resolve())
    if args.asym:
        proj = np.load(out / "proj.npy")
        teacher = load_st(teacher_dir(), 256)
        orig = local.LocalEmbedder.embed_queries

        def embed_queries(self: Any, texts: list[str]) -> np.ndarray:
            if str(Path(self.cfg.model).expanduser().resolve()) != student:
                return orig(self, texts)
            return normalise(encode(teacher, list(texts), bf16=False) @ proj)

        local.LocalEmbedder.embed_queries = embed_queries  # type: ignore[method-assign]
        if args.copy_from:  # the documents' vectors are the same: reuse the symmetric dbs
            import apsw

            dst = Path(args.db_dir)
            dst.mkdir(parents=True, exist_ok=True)
            for f in Path(args.copy_from).glob("*.db"):
                shutil.copy(f, dst / f.name)
                con = apsw.Connection(str(dst / f.name))
                con.execute("DELETE FROM query_cache")
                con.close()
    config = f'[embed]\nmodel = "{student}"\n'
    report = run_sets(args.cases, config, args.db_dir, args.half)
    report["embed_model"] = student + (" (asymmetric: teacher queries)" if args.asym else "")
    report["half"] = args.half
    Path(args.save).write_text(json.dumps(report, indent=1), encoding="utf-8")
    from scrydb import evaluate

    print(evaluate.render(report, None, misses=0))


def cmd_latency(args) -> None:
    """Query-embedding latency of each design: warm, one query at a time (p50/p90 ms), and
    cold (a fresh process from start to its first query vector, median of --cold-runs):
    the shipped model's numpy encoder, the student's, and the teacher in torch (the
    asymmetric design's cost)."""
    import statistics

    import torch

    from scrydb.config import EmbedConfig
    from scrydb.embed.local import LocalEmbedder

    out = Path(args.out)
    qs = [r["q"] for r in read_jsonl(out / "heldout.jsonl")[: args.n]]
    res = {}
    student = str(Path(args.student or out / "student" / "final").resolve())
    for name, model in (("shipped", "scry-code-minilm"), ("student", student)):
        emb = LocalEmbedder(EmbedConfig(model=model))
        emb.embed_query("warm up")
        ts = []
        for q in qs:
            t = time.perf_counter()
            emb.embed_query(q)
            ts.append((time.perf_counter() - t) * 1000)
        res[name] = (statistics.median(ts), sorted(ts)[int(0.9 * len(ts))], emb.query_encoder)
    torch.set_num_threads(1)
    teacher = load_st(teacher_dir(), 256)
    proj = np.load(out / "proj.npy")
    encode(teacher, ["warm up"], bf16=False)
    ts = []
    for q in qs:
        t = time.perf_counter()
        normalise(encode(teacher, [q], bf16=False) @ proj)
        ts.append((time.perf_counter() - t) * 1000)
    res["teacher, torch 1 thread"] = (
        statistics.median(ts),
        sorted(ts)[int(0.9 * len(ts))],
        "torch",
    )
    cold = {
        "shipped": _cold(_COLD_LOCAL, "scry-code-minilm", args.cold_runs),
        "student": _cold(_COLD_LOCAL, student, args.cold_runs),
        "teacher, torch 1 thread": _cold(_COLD_TEACHER, teacher_dir(), args.cold_runs),
    }
    for k, (p50, p90, eng) in res.items():
        log(
            out,
            {
                "step": "latency",
                "model": k,
                "engine": eng,
                "p50_ms": round(p50, 1),
                "p90_ms": round(p90, 1),
                "cold_ms": round(cold[k], 0),
            },
        )


#: A fresh process that loads an encoder and embeds one query (argv[1]: the model), the
#: way a first search in a new process does: scrydb's own query path, or the teacher in torch.
_COLD_LOCAL = """
import sys
from scrydb.config import EmbedConfig
from scrydb.embed.local import LocalEmbedder
LocalEmbedder(EmbedConfig(model=sys.argv[1])).embed_query("where is the retry delay computed")
"""
_COLD_TEACHER = """
import sys
import torch
torch.set_num_threads(1)
from sentence_transformers import SentenceTransformer
m = SentenceTransformer(sys.argv[1], device="cpu")
m.encode(["where is the retry delay computed"], normalize_embeddings=True)
"""


def _cold(script: str, model: str, runs: int) -> float:
    """Median wall time (ms) of ``runs`` fresh processes, each from interpreter start to
    its first query vector: the cold query cost of a design."""
    import statistics
    import subprocess

    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", script, model], check=True, capture_output=True)
        ts.append((time.perf_counter() - t) * 1000)
    return statistics.median(ts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("texts")
    add_data_option(p)
    p.add_argument("--out", required=True)
    p.add_argument("--pairs", type=int, default=12000)
    p.add_argument("--heldout", type=int, default=1000)
    p.add_argument("--delex", type=float, default=0.3)
    p.add_argument("--seed", type=int, default=30)
    p = sub.add_parser("teacher")
    p.add_argument("--out", required=True)
    p.add_argument("--max-seq", type=int, default=256)
    p.add_argument("--budget-min", type=float, default=40)
    p.add_argument(
        "--model",
        default="",
        help="the teacher's folder (default: all-mpnet-base-v2 as pinned; e.g. a fine-tuned "
        "teacher from `python -m training train --base ...`)",
    )
    p = sub.add_parser("project")
    p.add_argument("--out", required=True)
    p.add_argument("--align", type=int, default=1500)
    p.add_argument("--max-seq", type=int, default=256)
    p = sub.add_parser("train")
    p.add_argument("--out", required=True)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--max-pairs", type=int, default=0)
    p.add_argument("--from-pair", type=int, default=0, help="skip the first N pairs")
    p.add_argument("--init", default="", help="start from this model (default: shipped)")
    p.add_argument("--run", default="student", help="run folder under --out")
    p.add_argument("--max-seq", type=int, default=256)
    p.add_argument("--sim-weight", type=float, default=5.0)
    p.add_argument("--nce-weight", type=float, default=0.0)
    p.add_argument("--save-every", type=int, default=50)
    p.add_argument("--budget-min", type=float, default=35)
    p.add_argument("--seed", type=int, default=30)
    p = sub.add_parser("score")
    p.add_argument("--out", required=True)
    p.add_argument("--student", default="")
    p = sub.add_parser("golden")
    p.add_argument("cases", nargs="+")
    p.add_argument("--out", required=True)
    p.add_argument("--student", default="")
    p.add_argument("--asym", action="store_true")
    p.add_argument("--copy-from", default="")
    p.add_argument("--db-dir", required=True)
    p.add_argument("--half", default="dev", choices=["all", "dev", "test"])
    p.add_argument("--save", required=True)
    p = sub.add_parser("latency")
    p.add_argument("--out", required=True)
    p.add_argument("--student", default="")
    p.add_argument("-n", type=int, default=60)
    p.add_argument("--cold-runs", type=int, default=3, help="fresh processes per design")
    args = ap.parse_args(argv)
    {
        "texts": cmd_texts,
        "teacher": cmd_teacher,
        "project": cmd_project,
        "train": cmd_train,
        "score": cmd_score,
        "golden": cmd_golden,
        "latency": cmd_latency,
    }[args.cmd](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
