"""A code cross-encoder (reranker) from the mined pairs: the packaged bi-encoder's BERT with a
one-logit head, trained listwise over (query, right code, same-repository hard negatives,
one random code) with a softmax over each group.

    python -m training train-ce --data /work/train-data --out /work/ce-run \\
        [--minutes 60] [--batch 8] [--negs 3] [--lr 3e-5]

The documents are what ``search/rerank.py`` sends (``path > symbol`` then the code). A
share of the queries (``--delex``) lose the words the code's identifiers hold
(``train.delexicalise``), so that the model learns meaning, not overlap. Training resumes
from OUT/ckpt after an interruption; OUT/log.jsonl logs the loss and, every ``--eval-every``
steps, the held-out pairs' MRR@10 when each held-out query reranks its right code among its
hard negatives and 16 other codes of the same package. The model is saved in OUT/model as
a sentence-transformers ``CrossEncoder`` directory (``[rerank] provider = "local"``).
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

from training.train import delexicalise

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def document(code: str) -> str:
    """The mined code's context line ``repo > path > symbol`` as rerank.document_text
    writes it (``path > symbol``)."""
    head, _, body = code.partition("\n")
    parts = head.split(" > ")
    return " > ".join(parts[1:]) + "\n" + body if len(parts) > 1 else code


def load(data: Path, held: set[str]) -> list[dict]:
    """The mined pairs with a hard negative, less those of the ``held`` packages."""
    rows = []
    for f in sorted(glob.glob(str(data / "mined" / "*.json"))):
        with open(f) as fh:
            pairs = json.load(fh)["pairs"]
        for p in pairs:
            if p.get("package") in held or len(p["negatives"]) < 1:
                continue
            rows.append(p)
    return rows


def heldout(data: Path, n: int, seed: int) -> tuple[list[tuple[str, list[str]]], set[str]]:
    """(query, [right code, distractors...]) groups from the held-out packages, and the
    names of those packages."""
    with open(data / "heldout.jsonl") as fh:
        rows = [json.loads(ln) for ln in fh]
    rng = random.Random(seed)
    by_pkg: dict[str, list[dict]] = {}
    for r in rows:
        by_pkg.setdefault(r["package"], []).append(r)
    rng.shuffle(rows)
    out = []
    for r in rows[:n]:
        others = [o["code"] for o in by_pkg[r["package"]] if o["code"] != r["code"]]
        rng.shuffle(others)
        docs = [r["code"], *r["negatives"][:3], *others[:16]]
        out.append((r["query"], [document(d) for d in docs]))
    return out, set(by_pkg)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/work/train-data")
    ap.add_argument("--base", default=str(REPO / "scrydb" / "models" / "scry-code-minilm"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--batch", type=int, default=8, help="queries per step")
    ap.add_argument("--negs", type=int, default=3, help="hard negatives per query")
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--max-len", type=int, default=256)
    ap.add_argument("--delex", type=float, default=0.3)
    ap.add_argument("--eval-every", type=int, default=200)
    ap.add_argument("--eval-queries", type=int, default=300)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    torch.set_num_threads(2)
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    held_rows, held_pk = heldout(Path(args.data), args.eval_queries, args.seed)
    rows = load(Path(args.data), held_pk)
    rng = random.Random(args.seed)
    rng.shuffle(rows)
    print(f"{len(rows)} training pairs, {len(held_rows)} held-out groups", file=sys.stderr)

    ckpt = out / "ckpt"
    src = ckpt if (ckpt / "config.json").exists() else Path(args.base)
    tok = AutoTokenizer.from_pretrained(str(src))
    model = AutoModelForSequenceClassification.from_pretrained(
        str(src), num_labels=1, dtype=torch.float32
    )
    state = json.loads((out / "state.json").read_text()) if (out / "state.json").exists() else {}
    step = state.get("step", 0)
    steps_total = max(1, len(rows) // args.batch)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    if (out / "opt.pt").exists():
        opt.load_state_dict(torch.load(out / "opt.pt"))
    warm = 100

    def lr_at(s: int) -> float:
        return args.lr * min(1.0, (s + 1) / warm)

    def scores(q: str, docs: list[str]) -> torch.Tensor:
        enc = tok(
            [q] * len(docs),
            docs,
            truncation="only_second",
            max_length=args.max_len,
            padding=True,
            return_tensors="pt",
        )
        return model(**enc).logits.view(-1)

    def evaluate() -> float:
        model.eval()
        rr = []
        with torch.inference_mode(), torch.autocast("cpu", torch.bfloat16):
            for q, docs in held_rows:
                s = scores(q, docs).float().numpy()
                rank = 1 + int((s[1:] > s[0]).sum())
                rr.append(1.0 / rank if rank <= 10 else 0.0)
        model.train()
        return float(np.mean(rr))

    log = open(out / "log.jsonl", "a")  # noqa: SIM115 - appended to until the run ends
    if step == 0:
        m0 = evaluate()
        print(f"step 0 held-out MRR@10 {m0:.4f}", file=sys.stderr)
        log.write(json.dumps({"step": 0, "heldout_mrr": m0}) + "\n")
        log.flush()
    t_end = time.time() + args.minutes * 60
    model.train()
    t0 = time.time()
    losses = []
    while time.time() < t_end and step < steps_total:
        batch = rows[step * args.batch : (step + 1) * args.batch]
        qs, groups = [], []
        for r in batch:
            q = r["query"]
            if rng.random() < args.delex:
                q = delexicalise(q, r["code"]) or q
            other = rows[rng.randrange(len(rows))]["code"]
            docs = [r["code"], *r["negatives"][: args.negs], other]
            qs.append(q)
            groups.append([document(d) for d in docs])
        sizes = [len(g) for g in groups]
        enc = tok(
            [q for q, g in zip(qs, groups, strict=True) for _ in g],
            [d for g in groups for d in g],
            truncation="only_second",
            max_length=args.max_len,
            padding=True,
            return_tensors="pt",
        )
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        with torch.autocast("cpu", torch.bfloat16):
            logits = model(**enc).logits.view(-1).float()
        loss = torch.zeros(())
        i = 0
        for n in sizes:
            loss = loss - torch.log_softmax(logits[i : i + n], 0)[0]
            i += n
        loss = loss / len(sizes)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        losses.append(float(loss.detach()))
        if step % 20 == 0:
            rec = {
                "step": step,
                "loss": round(float(np.mean(losses[-20:])), 4),
                "s_per_step": round((time.time() - t0) / len(losses), 2),
            }
            log.write(json.dumps(rec) + "\n")
            log.flush()
            print(rec, file=sys.stderr)
        if step % args.eval_every == 0:
            m = evaluate()
            log.write(json.dumps({"step": step, "heldout_mrr": m}) + "\n")
            log.flush()
            print(f"step {step} held-out MRR@10 {m:.4f}", file=sys.stderr)
            model.save_pretrained(ckpt)
            tok.save_pretrained(ckpt)
            torch.save(opt.state_dict(), out / "opt.pt")
            (out / "state.json").write_text(json.dumps({"step": step}))
    model.save_pretrained(ckpt)
    tok.save_pretrained(ckpt)
    torch.save(opt.state_dict(), out / "opt.pt")
    (out / "state.json").write_text(json.dumps({"step": step}))
    m = evaluate()
    log.write(json.dumps({"step": step, "heldout_mrr": m, "final": True}) + "\n")
    print(f"final step {step} held-out MRR@10 {m:.4f}", file=sys.stderr)
    final = out / "model"
    model.save_pretrained(final)
    tok.save_pretrained(final)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
