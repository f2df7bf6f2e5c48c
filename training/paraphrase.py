"""Paraphrased training queries from WordNet, and the teacher's vectors of them (issue 30).

    python -m training paraphrase show  --wordnet WN "Returns the list of open files" ...
    python -m training paraphrase pairs --wordnet WN --src D --out P --first 27000 --n 12000
    python -m training paraphrase teacher --out P --src D --budget-min 30  # resumable
    python -m training paraphrase corpus --wordnet WN --out T   # train.jsonl for train --data T
    python -m training distill train --out P --init D/student2/final ...   # as before

The golden sets' paraphrase questions describe code in other words than its own ("web
address" for URL, "blank" for space, "crash loudly" for abort). The docstring queries the
models were trained on share most of their words with the code, and dropping those words
(``--delex``) did not teach the skill. Here each docstring query gets its content words
swapped for WordNet synonyms of their most frequent sense, re-inflected ("Removes the
trailing spaces" -> "Takes away the trailing blanks"), with the words the code's
identifiers hold swapped first. A rewrite is noisy (the most frequent sense of "string"
is a cord), and that is why it is used for distillation, not contrastive training: the
student learns to place the rewritten query where the teacher (all-mpnet-base-v2, whose
general-English paraphrase skill is the thing to transfer) places it, garbled or not.

WordNet 3.0 comes from Debian's ``wordnet-base`` package (training only; nothing ships)::

    apt-get download wordnet-base   # wordnet-base_1%3a3.0-37_all.deb, sha256
    # 61060d960f9ada8fa120872312eccd3ecebfbab8c4579e4f5a74e1cf67620752
    dpkg -x wordnet-base_*.deb WNROOT   # WN = WNROOT/usr/share/wordnet

``pairs`` writes P/pairs.jsonl (the source pairs ``--first``..``--first + --n`` of
D/pairs.jsonl, a ``--share`` of their queries rewritten, the rest as they were) and copies
D's projection and held-out shards; ``teacher`` writes P/teacher/pairs-NNNNN.npz with the
teacher's vector of each (rewritten) query and D's teacher vector of the unchanged code.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from training.distill import SHARD, encode, load_st, log, read_jsonl, teacher_dir

POS = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}

# function words and words whose WordNet senses are wrong for code descriptions (the
# most frequent sense of "set" or "file" in general English is not the programmer's)
STOP = set(
    """a an the and or but if then else when while of to in on at by for with from into onto
    as is are was were be been being it its this that these those there here which who whom
    whose what where how why not no nor so than too very can could should would will shall may
    might must do does did done has have had having get gets got all any each every some such
    only own same other another more most less least many much few one two first last new old
    also just up down out over under again further once about above below after before
    between through during without within along across per via etc i e g eg ie we you they he
    she us our your their my me him her them self true false none null nil set sets file files
    return returns returned value values""".split()
)

SUFFIX_RULES = {  # (suffix, ending) as in WordNet's morphy: inflected -> lemma
    "n": [
        ("ses", "s"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
        ("s", ""),
    ],
    "v": [
        ("ies", "y"),
        ("es", "e"),
        ("es", ""),
        ("ed", "e"),
        ("ed", ""),
        ("ing", "e"),
        ("ing", ""),
        ("s", ""),
    ],
    "a": [("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
    "r": [],
}


def _lines(path: Path) -> list[str]:
    with open(path, encoding="latin-1") as f:
        return f.readlines()


@dataclass
class WordNet:
    """The parts of WordNet 3.0 a rewrite needs: per POS, each lemma's synsets in sense
    frequency order with the lemma's tagged-sense count; each synset's lemmas; exceptions."""

    index: dict[str, dict[str, tuple[list[int], int]]] = field(default_factory=dict)
    synsets: dict[str, dict[int, list[str]]] = field(default_factory=dict)
    exc: dict[str, dict[str, str]] = field(default_factory=dict)
    reverse: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    @classmethod
    def load(cls, root: str | Path) -> WordNet:
        root = Path(root)
        wn = cls()
        for p, name in POS.items():
            idx: dict[str, tuple[list[int], int]] = {}
            for line in _lines(root / f"index.{name}"):
                if line.startswith(" "):
                    continue
                f = line.split()
                lemma, n_syn, n_ptr = f[0], int(f[2]), int(f[3])
                tagged = int(f[5 + n_ptr])
                offs = [int(x) for x in f[6 + n_ptr : 6 + n_ptr + n_syn]]
                idx[lemma] = (offs, tagged)
            wn.index[p] = idx
            syn: dict[int, list[str]] = {}
            for line in _lines(root / f"data.{name}"):
                if line.startswith(" "):
                    continue
                f = line.split()
                w_cnt = int(f[3], 16)
                words = [re.sub(r"\(.*\)$", "", f[4 + 2 * k]).lower() for k in range(w_cnt)]
                syn[int(f[0])] = words
            wn.synsets[p] = syn
            exc: dict[str, str] = {}
            for line in _lines(root / f"{name}.exc"):
                f = line.split()
                if len(f) >= 2:
                    exc[f[0]] = f[1]
            wn.exc[p] = exc
        return wn

    def lemmas(self, word: str, p: str) -> list[tuple[str, str, str]]:
        """(lemma, suffix, ending) readings of ``word`` as part of speech ``p``."""
        out = []
        if word in self.index[p]:
            out.append((word, "", ""))
        if word in self.exc[p] and self.exc[p][word] in self.index[p]:
            out.append((self.exc[p][word], "exc", word))
        for suf, end in SUFFIX_RULES[p]:
            if word.endswith(suf) and len(word) > len(suf) + 1:
                base = word[: -len(suf)] + end
                if base in self.index[p]:
                    out.append((base, suf, end))
        return out

    def synonyms(self, lemma: str, p: str, senses: int = 1) -> list[str]:
        """Other lemmas of the ``senses`` most frequent synsets of ``lemma``, each tagged in
        the sense-annotated corpus at least once (no obscure words)."""
        offs, _ = self.index[p].get(lemma, ([], 0))
        out: list[str] = []
        for off in offs[:senses]:
            for w in self.synsets[p].get(off, []):
                if w == lemma or w in out or not re.fullmatch(r"[a-z][a-z_\-]*", w):
                    continue
                if self.index[p].get(w, ([], 0))[1] >= 1:
                    out.append(w)
        return out


def inflect(lemma: str, p: str, suf: str, orig: str, wn: WordNet | None = None) -> str:
    """``lemma`` carrying the inflection that ``suf`` marked on the original word (the head
    word of a phrase: a verb's first word, a noun's last). Irregular forms come from
    WordNet's exception lists when ``wn`` is given ("make" -> "made", "stop" -> "stopped")."""
    words = lemma.split("_")
    i = 0 if p == "v" else len(words) - 1
    w = words[i]
    if p == "a" and suf in ("er", "est"):
        return orig  # comparatives keep their word: "more X" rewrites read badly
    if p == "n" and suf:
        if suf != "exc" or orig.endswith("s") or wn is not None:
            w = _plural(w, wn)
    elif p == "v" and suf:
        kind = suf
        if suf == "exc":
            kind = "ing" if orig.endswith("ing") else "ed"
        elif suf == "es" or suf == "ies":
            kind = "s"
        w = _verb_form(w, kind, wn)
    words[i] = w
    return " ".join(words).replace("-", " ") if "_" in lemma else w


def _irregular(wn: WordNet | None, p: str, lemma: str) -> list[str]:
    if wn is None:
        return []
    if not wn.reverse.get(p):
        rev: dict[str, list[str]] = {}
        for form, base in wn.exc[p].items():
            rev.setdefault(base, []).append(form)
        wn.reverse[p] = rev
    return wn.reverse[p].get(lemma, [])


def _plural(w: str, wn: WordNet | None) -> str:
    for form in _irregular(wn, "n", w):
        if not form.endswith("s") or form.endswith(("es", "ae")):
            return form
    if re.search(r"(s|x|z|ch|sh)$", w):
        return w + "es"
    return w[:-1] + "ies" if re.search(r"[^aeiou]y$", w) else w + "s"


def _verb_form(w: str, kind: str, wn: WordNet | None) -> str:
    forms = _irregular(wn, "v", w)
    if kind == "s":
        if re.search(r"(s|x|z|ch|sh)$", w):
            return w + "es"
        return w[:-1] + "ies" if re.search(r"[^aeiou]y$", w) else w + "s"
    if kind == "ing":
        for form in forms:
            if form.endswith("ing"):
                return form
        return w[:-1] + "ing" if w.endswith("e") and not w.endswith("ee") else w + "ing"
    # past: a listed irregular past (or participle) form first
    for form in forms:
        if not form.endswith(("ing", "s")):
            return form
    if w.endswith("e"):
        return w + "d"
    return w[:-1] + "ied" if re.search(r"[^aeiou]y$", w) else w + "ed"


def code_words(code: str) -> set[str]:
    """Lower-cased words of the code's identifiers (camelCase and snake_case split)."""
    out: set[str] = set()
    for ident in re.findall(r"[A-Za-z][A-Za-z0-9_]*", code):
        for part in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", ident):
            if len(part) > 2:
                out.add(part.lower())
    return out


TOKEN = re.compile(r"\S+|\s+")
WORD = re.compile(r"([(\"']?)([A-Za-z][a-z]+(?:-[a-z]+)*)([.,;:!?)\"']*)")
NOUN_BEFORE = set(
    "a an the of this that these those each every its their our your my some any no".split()
)


def rewrite(
    wn: WordNet, text: str, code: str, rng: random.Random, p_code: float = 0.8, p_other: float = 0.4
) -> tuple[str, int]:
    """(rewritten text, words swapped). A content word is swapped with probability
    ``p_code`` when the code's identifiers hold it, else ``p_other``; its part of speech
    is the one with most tagged senses (a sentence's first word is read as a verb first,
    the docstring habit: "Returns ...", "Create ...")."""
    cw = code_words(code)
    swapped = 0
    out = []
    prev = ""
    for k, t in enumerate(TOKEN.findall(text)):
        m = None if t.isspace() else WORD.fullmatch(t)
        if not m:
            out.append(t)
            if not t.isspace():
                prev = t.lower()
            continue
        lead, word, trail = m.groups()
        low = word.lower()
        cand = []
        if low not in STOP and len(low) > 2:
            for p in ("v", "n", "a", "r"):
                for lemma, suf, _end in wn.lemmas(low, p):
                    score = wn.index[p][lemma][1]
                    verb_slot = k == 0 or prev == "to"
                    if (verb_slot and p == "v") or (prev in NOUN_BEFORE and p in ("n", "a")):
                        score += 1000
                    cand.append((score, p, lemma, suf))
        prev = low
        if not cand:
            out.append(t)
            continue
        cand.sort(reverse=True)
        _, p, lemma, suf = cand[0]
        share = p_code if (low in cw or lemma in cw) else p_other
        syns = wn.synonyms(lemma, p)
        if not syns or rng.random() >= share:
            out.append(t)
            continue
        new = inflect(rng.choice(syns), p, suf, low, wn)
        if word[0].isupper():
            new = new[0].upper() + new[1:]
        out.append(lead + new + trail)
        swapped += 1
    return "".join(out), swapped


def cmd_show(args) -> None:
    wn = WordNet.load(args.wordnet)
    rng = random.Random(args.seed)
    for text in args.texts:
        for _ in range(3):
            print(f"{text!r} -> {rewrite(wn, text, '', rng, 0.8, 0.8)[0]!r}")


def cmd_pairs(args) -> None:
    wn = WordNet.load(args.wordnet)
    src, out = Path(args.src), Path(args.out)
    (out / "teacher").mkdir(parents=True, exist_ok=True)
    rows = read_jsonl(src / "pairs.jsonl")[args.first : args.first + args.n]
    rng = random.Random(args.seed)
    n_rw = 0
    with open(out / "pairs.jsonl", "w") as f:
        for k, r in enumerate(rows):
            q, swapped = r["q"], 0
            if rng.random() < args.share:
                q, swapped = rewrite(wn, r["q"], r["c"], rng)
            n_rw += swapped > 0
            f.write(json.dumps({**r, "q": q, "orig_q": r["q"], "src": args.first + k}) + "\n")
    shutil.copy(src / "proj.npy", out / "proj.npy")
    shutil.copy(src / "heldout.jsonl", out / "heldout.jsonl")
    for h in sorted((src / "teacher").glob("heldout-*.npz")):
        shutil.copy(h, out / "teacher" / h.name)
    log(
        out,
        {
            "step": "paraphrase pairs",
            "pairs": len(rows),
            "rewritten": n_rw,
            "from": str(src),
            "first": args.first,
        },
    )


def cmd_corpus(args) -> None:
    """A copy of a training-data folder (train.jsonl, heldout.jsonl) whose docstring
    queries are all rewritten, for ``train --data`` (contrastive training)."""
    wn = WordNet.load(args.wordnet)
    src, out = Path(args.data), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    n = k = 0
    with open(out / "train.jsonl.tmp", "w") as f:
        for r in read_jsonl(src / "train.jsonl"):
            if r.get("source") == "doc":
                r["query"], swapped = rewrite(wn, r["query"], r["code"], rng)
                n += 1
                k += swapped > 0
            f.write(json.dumps(r) + "\n")
    (out / "train.jsonl.tmp").rename(out / "train.jsonl")
    shutil.copy(src / "heldout.jsonl", out / "heldout.jsonl")
    print(f"docstring queries {n}, rewritten {k}", file=sys.stderr)


def cmd_teacher(args) -> None:
    """The teacher's vectors of P's queries (rewritten or not), with the source run's
    teacher vectors of the same codes, SHARD pairs a file; resumable."""
    from scrydb.embed.local import native_bf16

    out = Path(args.out)
    rows = read_jsonl(out / "pairs.jsonl")
    src = Path(args.src)
    model = load_st(args.model or teacher_dir(), 64)
    bf16 = native_bf16()
    deadline = time.time() + args.budget_min * 60

    shards: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def src_vec(j: int) -> tuple[np.ndarray, np.ndarray]:
        if j // SHARD not in shards:  # each source shard read once, not once a pair
            shards.clear()
            z = np.load(src / "teacher" / f"pairs-{j // SHARD:05d}.npz")
            shards[j // SHARD] = (z["q"], z["c"])
        q, c = shards[j // SHARD]
        return q[j % SHARD], c[j % SHARD]

    for s in range(0, len(rows), SHARD):
        dest = out / "teacher" / f"pairs-{s // SHARD:05d}.npz"
        part = rows[s : s + SHARD]
        if dest.exists() and len(np.load(dest)["q"]) == len(part):
            continue
        if time.time() > deadline:
            log(out, {"step": "paraphrase teacher", "stopped": "budget", "at": s})
            return
        t0 = time.time()
        old = [src_vec(r["src"]) for r in part]
        c = np.stack([o[1] for o in old]).astype(np.float16)
        q = np.stack([o[0] for o in old]).astype(np.float32)
        todo = [k for k, r in enumerate(part) if r["q"] != r["orig_q"]]
        if todo:
            q[todo] = encode(model, [part[k]["q"] for k in todo], bf16, batch=64)
        np.savez(str(dest) + ".tmp.npz", q=q.astype(np.float16), c=c)
        Path(str(dest) + ".tmp.npz").rename(dest)
        log(
            out,
            {
                "step": "paraphrase teacher",
                "shard": dest.name,
                "new": len(todo),
                "s": round(time.time() - t0, 1),
            },
        )
    log(out, {"step": "paraphrase teacher", "done": True})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m training paraphrase",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("show", help="print rewrites of the given texts")
    p.add_argument("--wordnet", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("texts", nargs="+")
    p = sub.add_parser("pairs", help="a pairs file with rewritten queries")
    p.add_argument("--wordnet", required=True)
    p.add_argument("--src", required=True, help="a distill folder with pairs and teacher shards")
    p.add_argument("--out", required=True)
    p.add_argument("--first", type=int, default=27000)
    p.add_argument("--n", type=int, default=12000)
    p.add_argument("--share", type=float, default=0.7, help="share of queries rewritten")
    p.add_argument("--seed", type=int, default=31)
    p = sub.add_parser("corpus", help="a train.jsonl copy with rewritten docstring queries")
    p.add_argument("--wordnet", required=True)
    p.add_argument("--data", default="/work/train-data")
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=7)
    p = sub.add_parser("teacher", help="the teacher's vectors of the rewritten queries")
    p.add_argument("--out", required=True)
    p.add_argument("--src", required=True)
    p.add_argument("--model", default="")
    p.add_argument("--budget-min", type=float, default=30)
    a = ap.parse_args(argv)
    {"show": cmd_show, "pairs": cmd_pairs, "corpus": cmd_corpus, "teacher": cmd_teacher}[a.cmd](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
