"""Average a fine-tuned model with its base, weight by weight (weight-space interpolation):
keeps much of the fine-tuning's gain and more of the base's generality.

    python training/average.py --tuned RUN/final --out RUN/wise50 --mix 0.5

``--mix`` is the tuned model's share; the base defaults to the packaged MiniLM. The output
directory is the tuned one's copy (configs, tokenizer) with the averaged weights.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tuned", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--base", default="", help="default: the packaged all-MiniLM-L6-v2")
    ap.add_argument("--mix", type=float, default=0.5, help="share of the tuned weights")
    args = ap.parse_args()

    from safetensors.torch import load_file, save_file
    from train import base_model_dir

    base = load_file(str(Path(args.base or base_model_dir()) / "model.safetensors"))
    tuned = load_file(str(Path(args.tuned) / "model.safetensors"))
    missing = sorted(set(tuned) - set(base))
    if missing:  # the base may hold extra buffers (position ids); the tuned set must be in it
        print(f"the base lacks {len(missing)} of the tuned weights: {missing[:3]}", file=sys.stderr)
        return 2
    shutil.copytree(args.tuned, args.out, dirs_exist_ok=True)
    m = args.mix
    out = {k: ((1 - m) * base[k].float() + m * tuned[k].float()).to(tuned[k].dtype) for k in tuned}
    save_file(out, str(Path(args.out) / "model.safetensors"), metadata={"format": "pt"})
    print(f"averaged {len(out)} tensors, tuned share {m}: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
