"""scrydb's training pipeline: the corpus, the shipped model and its learned fusion, the
teacher and the distilled student, the offline scorers. One entry point:

    python -m training STEP [ARGS...]      # python -m training --help lists the steps

Nothing here runs at search time or in CI's tests beyond small fixtures; see README.md.
"""

from __future__ import annotations

import argparse
import os

#: The corpus folder (what ``python -m training corpus --out`` builds, and every later step
#: reads): the default of their ``--data``/``--out`` when set. No step defaults to a path
#: on one machine; without this variable the option must be given.
DATA_ENV = "SCRY_TRAIN_DATA"


def add_data_option(
    ap: argparse.ArgumentParser, flag: str = "--data", required: bool = True
) -> None:
    """``flag``: the corpus folder, ``$SCRY_TRAIN_DATA`` by default; when that is unset the
    option is required (``required=False``: None, for a step to check itself)."""
    env = os.environ.get(DATA_ENV) or None
    where = f"default ${DATA_ENV}: {env}" if env else f"required unless ${DATA_ENV} is set"
    need = required and env is None
    ap.add_argument(flag, default=env, required=need, help=f"the corpus folder ({where})")
