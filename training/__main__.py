"""``python -m training STEP [ARGS...]``: one entry point for every training step.

Each step is a module of this package with a ``main()`` that reads its own arguments
(``python -m training STEP --help``). Experiments that never shipped are not here: their
results, commands and the commit that last held their code are in training/README.md.
"""

from __future__ import annotations

import importlib
import sys

#: step -> (module, what it does): the pipeline behind the shipped model and fusion.json,
#: the teacher and student, the offline scorers, and the questions kept for issue 30.
STEPS: dict[str, tuple[str, str]] = {
    "pin": ("training.pin", "download each candidate package once and pin it in manifest.json"),
    "corpus": ("training.corpus", "rebuild the pinned corpus and mine (query, code) pairs"),
    "train": ("training.train", "fine-tune MiniLM on the mined pairs (resumable)"),
    "average": ("training.average", "interpolate a tuned model with its base (weights)"),
    "ship": ("training.ship", "export a model in fp16 into scrydb/models with its card"),
    "fusion": ("training.fusion", "synthetic queries, feature dumps, the fitted fusion.json"),
    "teacher": ("training.teacher", "fetch and check all-mpnet-base-v2 by pinned sha256"),
    "distill": ("training.distill", "distil the teacher into a MiniLM student"),
    "eval-golden": ("training.eval_golden", "the golden sets with a chosen embedding model"),
    "export-eval": ("training.export_eval", "export an index's texts and vectors for dscore"),
    "compare-evals": ("training.compare_evals", "per-case deltas between two eval reports"),
    "genq": ("training.genq", "LLM-written questions: generate, keep (genq_questions.jsonl), join"),
}


def usage() -> str:
    lines = ["usage: python -m training STEP [ARGS...]", "", "steps:"]
    lines += [f"  {k:<14} {v[1]}" for k, v in STEPS.items()]
    lines += ["", "experiments that never shipped: training/README.md (results, commands, commit)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    step, rest = args[0], args[1:]
    entry = STEPS.get(step)
    if entry is None:
        print(f"python -m training: no step {step!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(entry[0])
    sys.argv = [f"python -m training {step}", *rest]
    return int(module.main() or 0)


if __name__ == "__main__":
    sys.exit(main())
