"""Coverage-guided fuzzing of scrydb with atheris (issue 46): one module per harness, a
shared runner (``run.py``) and a checked-in seed corpus per harness (``corpus/<name>/``).

    python tests/fuzz/run.py --runs 1000000 chunk     # one campaign (RELIABILITY.md, "Fuzzing")
    python tests/fuzz/run.py --replay all              # the seed corpus and saved reproducers

A harness module defines ``test_one(data: bytes) -> None`` (raises on a finding),
optionally ``setup() -> None`` (run once per process before fuzzing) and ``MAX_LEN`` (the
longest input libFuzzer builds). ``tests/test_fuzz.py`` runs a short smoke of each in CI.
"""
