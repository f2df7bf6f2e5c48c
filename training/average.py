"""Average a fine-tuned model with its base, weight by weight (weight-space interpolation):
keeps much of the fine-tuning's gain and more of the base's generality.

    python -m training average --tuned RUN/final --out RUN/wise50 --mix 0.5

``--mix`` is the tuned model's share; the base defaults to the packaged MiniLM. The output
directory is the tuned one's copy (configs, tokenizer) with the averaged weights.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def interpolate(tuned: dict, base: dict, mix: float) -> dict:
    """mix * tuned + (1 - mix) * base, tensor by tensor, in each tuned tensor's dtype
    (non-floating tensors, e.g. position ids, are kept as the tuned model has them)."""
    return {
        k: ((1 - mix) * base[k].float() + mix * v.float()).to(v.dtype)
        if v.is_floating_point()
        else v
        for k, v in tuned.items()
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tuned", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--base", default="", help="default: the packaged all-MiniLM-L6-v2")
    ap.add_argument("--mix", type=float, default=0.5, help="share of the tuned weights")
    args = ap.parse_args()

    from safetensors.torch import load_file, save_file

    from training.train import base_model_dir

    base = load_file(str(Path(args.base or base_model_dir()) / "model.safetensors"))
    tuned = load_file(str(Path(args.tuned) / "model.safetensors"))
    missing = sorted(set(tuned) - set(base))
    if missing:  # the base may hold extra buffers (position ids); the tuned set must be in it
        print(f"the base lacks {len(missing)} of the tuned weights: {missing[:3]}", file=sys.stderr)
        return 2
    shutil.copytree(args.tuned, args.out, dirs_exist_ok=True)
    out = interpolate(tuned, base, args.mix)
    save_file(out, str(Path(args.out) / "model.safetensors"), metadata={"format": "pt"})
    print(f"averaged {len(out)} tensors, tuned share {args.mix}: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
