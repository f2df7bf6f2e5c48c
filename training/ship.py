"""Put a trained model inside scrydb: fp16 safetensors under scrydb/models/NAME plus its
model card, whose front matter carries the weights' sha256 (CI checks it).

    python -m training ship --run RUN/final --name scry-code-minilm \\
        --version 1 --card training/model_card.md

``--card`` is the card's Markdown body; ``{sha256}``, ``{size_mb}`` and ``{name}`` in it
are filled in. Files sentence-transformers writes that scrydb does not read (its own
generated README, training arguments) are left out.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

#: what a shipped model directory holds (all that scrydb's loaders read)
KEEP = {
    "config.json",
    "config_sentence_transformers.json",
    "model.safetensors",
    "modules.json",
    "sentence_bert_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "1_Pooling/config.json",
    "2_Normalize/config.json",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", required=True, help="the trained sentence-transformers directory")
    ap.add_argument("--name", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--card", required=True, help="model card body (Markdown)")
    args = ap.parse_args()

    from training.train import export_fp16

    dest = REPO / "scrydb" / "models" / args.name
    with tempfile.TemporaryDirectory() as tmp:
        export_fp16(args.run, tmp)
        if dest.exists():
            shutil.rmtree(dest)
        for rel in sorted(KEEP):
            src = Path(tmp) / rel
            if src.is_file():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest / rel)
                (dest / rel).chmod(0o644)
    weights = dest / "model.safetensors"
    sha = hashlib.sha256(weights.read_bytes()).hexdigest()
    size_mb = f"{weights.stat().st_size / 1e6:.1f}"
    body = Path(args.card).read_text(encoding="utf-8")
    if body.startswith("<!--"):  # the template's own note is not part of the card
        body = body.split("-->", 1)[1].lstrip("\n")
    front = f"---\nname: {args.name}\nversion: {args.version}\nsha256: {sha}\n---\n"
    (dest / "README.md").write_text(
        front
        + body.replace("{sha256}", sha).replace("{size_mb}", size_mb).replace("{name}", args.name),
        encoding="utf-8",
    )
    print(f"shipped {dest}: model.safetensors {size_mb} MB, sha256 {sha}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
