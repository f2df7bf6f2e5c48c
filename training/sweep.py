"""Train several fine-tuning recipes of the code embedder in one go and score each on the
golden sets' dense leg (issue 14): the sweep that a GPU makes affordable.

    python -m training sweep --data DIR --base MODEL_DIR --evaldata EVAL.json.gz \\
        --out OUT [--variants full32,full128x2,...] [--deadline 420] [--device cuda]
    python -m training sweep --prepare .gpu --data /work/train-data --evaldata EVAL.json.gz

On a lent GPU (the device tool; its working tree is limited to 64 MiB): ``--prepare .gpu``
once here (``.gpu/`` listed in ``.git/info/exclude``), move
``scrydb/models/scry-code-minilm/model.safetensors`` out of the tree for the call (and back
after), and run, carrying ``.gpu``::

    cd .gpu && python3 ../training/sweep.py --data . --base base \\
        --evaldata evaldata.json.gz --out $OUT --deadline 430

``DIR`` holds ``train.jsonl[.xz]`` (and ``inner.jsonl[.xz]`` for the variants that add
inner-comment pairs), as ``corpus.py`` / ``inner.py`` write them. ``EVAL.json.gz`` is what
``training/export_eval.py`` writes from built golden-set indexes: every text scrydb embeds
for a corpus (bodies, headers, windows), the chunks that use them and each case's query and
relevant chunks. Dense scores are computed exactly as the dense leg does (body, header at
``rank.HEAD_WEIGHT``, best window), so the base and shipped models reproduce ``scry eval``'s
dense MRR@10 to the third decimal (dev 0.558 / test 0.562 for scry-code-minilm).

Each variant trains from the base (plain torch: mean pooling, multiple-negatives ranking
loss over in-batch and same-package hard negatives, AdamW with linear warm-up and decay,
bf16 autocast on CUDA), then is averaged weight by weight with the base at several mixes
(``average.py``'s rule) and scored on both halves. The choice is made on the **dev** half
only. OUT gets ``results.json`` after every score, and the weights of the best symmetric
(variant, mix) on dev as fp16 safetensors split in parts under 16 MB (``best-N.safetensors``;
``--join OUT DEST`` turns them into a model directory beside a copy of the base's files).

A variant with ``asym`` trains a query tower only: chunks keep the base's vectors (no
re-embedding), the queries get the tuned encoder. Scored, never saved (scrydb has no
separate query model).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from training.average import interpolate
from training.train import batch_order, load_pairs

os.environ["TOKENIZERS_PARALLELISM"] = "true"  # train.py turns it off for its 2-core runs

#: name -> recipe. pairs 0: the whole corpus. "shipped" is the shipped recipe (17,920 pairs,
#: batch 32, lr 3e-5, one pass), the check that this loop matches train.py's. Listed in
#: order of interest: under --deadline the last may not run.
VARIANTS: dict[str, dict] = {
    "full128x2": dict(pairs=0, batch=128, lr=1e-4, epochs=2),
    "shipped": dict(pairs=17920, batch=32, lr=3e-5, epochs=1),
    "full512x3": dict(pairs=0, batch=512, lr=2e-4, epochs=3),
    "full128x2s256": dict(pairs=0, batch=128, lr=1e-4, epochs=2, max_seq=256),
    "inner128x2": dict(pairs=0, batch=128, lr=1e-4, epochs=2, extra="inner"),
    "full128x2n3": dict(pairs=0, batch=128, lr=1e-4, epochs=2, negs=3),
    "asym256x2": dict(pairs=0, batch=256, lr=1e-4, epochs=2, asym=True),
    "full128x4": dict(pairs=0, batch=128, lr=1e-4, epochs=4),
    "full64x1": dict(pairs=0, batch=64, lr=5e-5, epochs=1),
    "full32": dict(pairs=0, batch=32, lr=3e-5, epochs=1),
}
DEFAULTS = dict(
    negs=1, scale=20.0, warmup=0.1, delex=0.3, max_seq=128, query_max_seq=64, bucket=20, seed=14
)
MIXES = (0.5, 0.7, 1.0)
PART_BYTES = 15_000_000


def pick_device(name: str):
    import torch

    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


class Encoder:
    """Mean-pooled, normalised sentence vectors of a BERT model (sentence-transformers'
    all-MiniLM recipe) in plain torch."""

    def __init__(self, model, tok, device) -> None:
        self.model, self.tok, self.device = model, tok, device

    def batch(self, texts: list[str], max_len: int):
        import torch

        t = self.tok(
            texts, padding=True, truncation=True, max_length=max_len, return_tensors="pt"
        ).to(self.device)
        out = self.model(input_ids=t["input_ids"], attention_mask=t["attention_mask"])
        h = out.last_hidden_state
        m = t["attention_mask"].unsqueeze(-1).to(h.dtype)
        v = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(v.float(), dim=-1)

    def encode(self, texts: list[str], max_len: int = 256, bs: int = 256) -> np.ndarray:
        """Vectors of ``texts`` in float32, inference mode (sorted by length for batching)."""
        import torch

        was = self.model.training
        self.model.eval()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.model.config.hidden_size), dtype=np.float32)
        with torch.inference_mode():
            for i in range(0, len(order), bs):
                idx = order[i : i + bs]
                out[idx] = self.batch([texts[j] for j in idx], max_len).cpu().numpy()
        self.model.train(was)
        return out


def load_model(base: str, device):
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModel.from_pretrained(base, dtype=torch.float32).to(device)
    return model, tok


#: mix * tuned + (1 - mix) * base: average.py's rule, the one the shipped model was made by.
mixed_state = interpolate


def train_variant(rows, recipe: dict, base: str, device, log) -> tuple[Any, Any]:
    """Train one recipe from the base; (tuned model, tokenizer)."""
    import torch

    model, tok = load_model(base, device)
    model.train()
    frozen = None
    if recipe.get("asym"):
        frozen, _ = load_model(base, device)
        frozen.eval()
        for p in frozen.parameters():
            p.requires_grad_(False)
    qenc = Encoder(model, tok, device)
    denc = Encoder(frozen, tok, device) if frozen is not None else qenc
    batch, epochs = recipe["batch"], recipe["epochs"]
    steps_per_epoch = len(rows) // batch
    total = steps_per_epoch * epochs
    warm = max(1, int(recipe["warmup"] * total))
    opt = torch.optim.AdamW(model.parameters(), lr=recipe["lr"], weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: s / warm if s < warm else max(0.0, (total - s) / max(1, total - warm))
    )
    use_amp = device.type == "cuda"
    step, t0, losses = 0, time.time(), []
    for epoch in range(epochs):
        order = batch_order(rows, batch, recipe["seed"] + epoch, recipe["bucket"])
        for b in range(steps_per_epoch):
            part = [rows[j] for j in order[b * batch : (b + 1) * batch]]
            cols = list(zip(*part, strict=True))
            docs = [t for c in cols[1:] for t in c]
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_amp):
                q = qenc.batch(list(cols[0]), recipe["query_max_seq"])
                if frozen is not None:
                    with torch.no_grad():
                        d = denc.batch(docs, recipe["max_seq"])
                else:
                    d = denc.batch(docs, recipe["max_seq"])
            scores = recipe["scale"] * q @ d.T
            loss = torch.nn.functional.cross_entropy(scores, torch.arange(len(part), device=device))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # as train.py
            opt.step()
            sched.step()
            step += 1
            losses.append(loss.item())
            if step % 50 == 0 or step == total:
                log(
                    {
                        "step": step,
                        "of": total,
                        "loss": round(sum(losses[-50:]) / len(losses[-50:]), 4),
                        "s": round(time.time() - t0, 1),
                    }
                )
    return model, tok


def score(sets, dscore, text_enc: Encoder, query_enc: Encoder, cache: dict | None = None):
    """Dense MRR@10 per half, kind and set (``dscore.evaluate``)."""

    def et(name, texts):
        if cache is not None and name in cache:
            return cache[name]
        v = text_enc.encode(texts, 256)
        if cache is not None:
            cache[name] = v
        return v

    return dscore.evaluate(sets, et, lambda qs: query_enc.encode(qs, 256))


def save_parts(state: dict, out: Path, prefix: str) -> list[str]:
    """fp16 safetensors in parts of at most PART_BYTES each."""
    from safetensors.torch import save_file

    pieces = []  # (key, tensor); a tensor over PART_BYTES is cut by rows as KEY@@i
    for k in sorted(state):
        v = state[k].detach().to("cpu")
        v = v.half() if v.is_floating_point() else v
        n = v.numel() * v.element_size()
        if n <= PART_BYTES:
            pieces.append((k, v.contiguous()))
            continue
        rows = max(1, v.shape[0] * PART_BYTES // n)
        for i, c in enumerate(v.split(rows)):
            pieces.append((f"{k}@@{i}", c.contiguous()))
    parts: list = []
    cur: dict = {}
    size = 0
    for k, v in pieces:
        n = v.numel() * v.element_size()
        if cur and size + n > PART_BYTES:
            parts.append(cur)
            cur, size = {}, 0
        cur[k] = v
        size += n
    if cur:
        parts.append(cur)
    names = []
    for i, p in enumerate(parts):
        name = f"{prefix}-{i}.safetensors"
        save_file(p, str(out / (name + ".tmp")))
        (out / (name + ".tmp")).replace(out / name)
        names.append(name)
    return names


def join(src: Path, dest: Path, like: Path) -> None:
    """Make a model directory DEST from the parts in SRC and the other files of ``like``
    (a sentence-transformers directory of the same architecture)."""
    import torch
    from safetensors.torch import load_file, save_file

    state: dict = {}
    for p in sorted(src.glob("best-*.safetensors")):
        state.update(load_file(str(p)))
    cut = sorted((k for k in state if "@@" in k), key=lambda k: int(k.rsplit("@@", 1)[1]))
    for k in {k.rsplit("@@", 1)[0] for k in cut}:
        state[k] = torch.cat([state.pop(c) for c in cut if c.rsplit("@@", 1)[0] == k])
    shutil.copytree(like, dest, dirs_exist_ok=True)
    save_file(state, str(dest / "model.safetensors"), metadata={"format": "pt"})


def prepare(dest: Path, data: Path, evaldata: Path, cut: int = 900) -> None:
    """Fill ``dest`` (an ignored folder of the checkout, named in the device call's carry)
    with what a run elsewhere needs, small enough to travel (64 MiB with the tree, once the
    shipped model's weights are moved out of it): the base in fp16, the training pairs
    with codes cut at ``cut`` characters (training reads 128 tokens) and at most three
    negatives, xz-compressed, and the exported golden-set data."""
    import lzma

    from safetensors.torch import load_file, save_file

    from training.train import base_model_dir

    dest.mkdir(parents=True, exist_ok=True)
    base = Path(base_model_dir())
    (dest / "base").mkdir(exist_ok=True)
    for f in (
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "vocab.txt",
    ):
        if (base / f).exists():
            shutil.copy(base / f, dest / "base" / f)
    state = load_file(str(base / "model.safetensors"))
    save_file(
        {k: v.half().contiguous() for k, v in state.items() if v.is_floating_point()},
        str(dest / "base" / "model.safetensors"),
    )
    for name in ("train.jsonl", "inner.jsonl"):
        if not (data / name).exists():
            continue
        with open(data / name) as fh, lzma.open(dest / f"{name}.xz", "wt", preset=9) as g:
            for line in fh:
                r = json.loads(line)
                r["code"] = r["code"][:cut]
                r["negatives"] = [x[:cut] for x in r["negatives"][:3]]
                g.write(
                    json.dumps(
                        {k: r[k] for k in ("query", "code", "negatives", "source") if k in r}
                    )
                    + "\n"
                )
    shutil.copy(evaldata, dest / "evaldata.json.gz")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data")
    ap.add_argument("--base")
    ap.add_argument("--evaldata")
    ap.add_argument("--out")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument(
        "--deadline",
        type=float,
        default=420.0,
        help="seconds; no variant starts "
        "that would end after it (estimated from the pairs/s measured so far)",
    )
    ap.add_argument("--device", default="auto")
    ap.add_argument("--sets", default="", help="only these sets (comma list; testing)")
    ap.add_argument("--max-rows", type=int, default=0, help="cap on training rows (testing)")
    ap.add_argument("--batch-cap", type=int, default=0, help="cap on batch sizes (testing)")
    ap.add_argument("--join", nargs=3, metavar=("PARTS_DIR", "DEST", "LIKE"))
    ap.add_argument("--prepare", metavar="DEST", help="write the carry folder and stop")
    args = ap.parse_args()
    if args.prepare:
        prepare(Path(args.prepare), Path(args.data), Path(args.evaldata))
        return 0
    if args.join:
        join(Path(args.join[0]), Path(args.join[1]), Path(args.join[2]))
        return 0

    import torch

    from training import dscore

    t_start = time.time()
    device = pick_device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = True
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results: dict = {"device": str(device), "variants": {}, "log": []}

    def log(rec: dict) -> None:
        rec = {"t": round(time.time() - t_start, 1), **rec}
        print(json.dumps(rec), flush=True)
        results["log"].append(rec)

    def dump() -> None:
        (out / "results.json").write_text(json.dumps(results, indent=1))

    with gzip.open(args.evaldata, "rt") as fh:
        sets = json.load(fh)["sets"]
    if args.sets:
        sets = {k: v for k, v in sets.items() if k in args.sets.split(",")}
    for sd in sets.values():
        sd["_idx"] = dscore.prep(sd)

    base_model, tok = load_model(args.base, device)
    base_state = {k: v.detach().clone() for k, v in base_model.state_dict().items()}
    base_enc = Encoder(base_model, tok, device)
    base_cache: dict = {}
    t = time.time()
    results["base"] = score(sets, dscore, base_enc, base_enc, base_cache)
    log(
        {
            "event": "base",
            "dev": results["base"]["dev"]["all"],
            "test": results["base"]["test"]["all"],
            "s": round(time.time() - t, 1),
        }
    )
    dump()

    data = Path(args.data)
    train_file = next(p for p in (data / "train.jsonl.xz", data / "train.jsonl") if p.exists())
    inner = next((p for p in (data / "inner.jsonl.xz", data / "inner.jsonl") if p.exists()), None)
    best: tuple[float, str | None] = (-1.0, None)
    rate = None  # training rows per second (row = query + its codes), measured
    for name in args.variants.split(","):
        recipe = {**DEFAULTS, **VARIANTS[name]}
        if args.batch_cap:
            recipe["batch"] = min(recipe["batch"], args.batch_cap)
        extra = [inner] if recipe.get("extra") == "inner" and inner else None
        rows = load_pairs(
            train_file, recipe["negs"], recipe["pairs"], recipe["seed"], recipe["delex"], extra
        )
        if args.max_rows:
            rows = rows[: args.max_rows]
        work = len(rows) * recipe["epochs"] * (1 + recipe["negs"])
        elapsed = time.time() - t_start
        if rate and elapsed + work / rate + 40 > args.deadline:
            log(
                {
                    "event": "skip",
                    "variant": name,
                    "reason": "deadline",
                    "est_s": round(work / rate),
                }
            )
            continue
        t = time.time()
        model, _ = train_variant(rows, recipe, args.base, device, log)
        secs = time.time() - t
        rate = work / secs if rate is None else max(rate, work / secs)
        tuned = {k: v.detach().clone() for k, v in model.state_dict().items()}
        vres: dict[str, Any] = {
            "recipe": {k: v for k, v in recipe.items()},
            "rows": len(rows),
            "train_s": round(secs, 1),
            "mixes": {},
        }
        for mix in MIXES:
            model.load_state_dict(mixed_state(tuned, base_state, mix))
            enc = Encoder(model, tok, device)
            if recipe.get("asym"):
                r = score(sets, dscore, base_enc, enc, base_cache)
            else:
                r = score(sets, dscore, enc, enc)
            vres["mixes"][str(mix)] = r
            log(
                {
                    "event": "score",
                    "variant": name,
                    "mix": mix,
                    "dev": r["dev"]["all"],
                    "test": r["test"]["all"],
                    "dev_para": r["dev"].get("paraphrase"),
                }
            )
            if not recipe.get("asym") and r["dev"]["all"] > best[0]:
                best = (r["dev"]["all"], f"{name}@{mix}")
                results["best"] = {
                    "variant": name,
                    "mix": mix,
                    "dev": r["dev"],
                    "test": r["test"],
                    "parts": save_parts(model.state_dict(), out, "best"),
                }
                log({"event": "best", "which": best[1], "dev": best[0]})
        results["variants"][name] = vres
        dump()
        del model
        if device.type == "cuda":
            torch.cuda.empty_cache()
    results["wall_s"] = round(time.time() - t_start, 1)
    dump()
    return 0


if __name__ == "__main__":
    sys.exit(main())
