"""Run a fuzzing campaign on one harness, or replay the checked-in corpus.

    python tests/fuzz/run.py --runs 1000000 chunk    # a million executions, libFuzzer
    python tests/fuzz/run.py --runs 3000 all         # every harness, one after the other
    python tests/fuzz/run.py --replay all            # each seed and reproducer, once

A campaign runs atheris (libFuzzer) in a child process over the harness's seed corpus
``corpus/<name>/`` (read only: the inputs it finds go to ``--work``, default
``/tmp/scry-fuzz/<name>``, and so do crash reproducers). The child's last figures are
printed as one summary line per harness: executions, exec/s, ``cov`` (edges of scrydb's
Python code reached) and ``ft`` (libFuzzer's features), the corpus it ended with and the
crashes (the reproducer's path). ``--json FILE`` writes the same figures. Exit status 1
when a harness crashed. A reproducer goes into ``corpus/<name>/`` as ``crash-<what>``
beside a regression test in the module's own test file; an input worth keeping that
failed only the harness's own check goes there as ``found-<what>`` (``seeds.py``
rewrites the ``seed-*`` files only). The runs of a work folder carry on from the corpus
it holds: rerunning a command continues its campaign.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
# Run as a script, this folder is sys.path[0]: its mcp.py would shadow the mcp package.
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    sys.path.pop(0)
HARNESSES = ("chunk", "tokens", "query", "config", "filters", "mcp")
#: libFuzzer's status line: ``#4096 pulse cov: 1234 ft: 3456 corp: 80/12Kb exec/s: 512 ...``
_STATUS = re.compile(
    r"^#(\d+)\s+(\w+)\s+cov: (\d+) ft: (\d+)(?: corp: (\d+)/\S+)?.*?(?:exec/s: (\d+))?", re.M
)
_EXECUTED = re.compile(r"^stat::number_of_executed_units: *(\d+)", re.M)
_ARTIFACT = re.compile(r"Test unit written to (\S+)")


def corpus_dir(name: str) -> Path:
    """The checked-in seed corpus of a harness."""
    return HERE / "corpus" / name


def _import(name: str, instrument: bool) -> Any:
    """The harness module, with scrydb's code instrumented for coverage when fuzzing."""
    sys.path.insert(0, str(TESTS))
    import importlib

    if not instrument:
        return importlib.import_module(f"fuzz.{name}")
    import atheris

    with atheris.instrument_imports(include=["scrydb"]):
        return importlib.import_module(f"fuzz.{name}")


def _child(name: str, libfuzzer_args: list[str]) -> None:
    """In the child: set the harness up and hand over to libFuzzer (never returns)."""
    import atheris

    mod = _import(name, instrument=True)
    if hasattr(mod, "setup"):
        mod.setup()
    atheris.Setup([sys.argv[0], *libfuzzer_args], mod.test_one)
    atheris.Fuzz()


def replay(name: str) -> int:
    """Run every file of the harness's corpus once, without libFuzzer; their count (an
    exception is a finding and propagates)."""
    mod = _import(name, instrument=False)
    if hasattr(mod, "setup"):
        mod.setup()
    files = sorted(p for p in corpus_dir(name).iterdir() if p.is_file())
    for p in files:
        try:
            mod.test_one(p.read_bytes())
        except Exception as e:
            raise AssertionError(f"{name}: corpus file {p.name} fails: {e!r:.500}") from e
    return len(files)


def summarise(name: str, log: str, rc: int, seconds: float) -> dict[str, Any]:
    """The figures of one campaign, read from libFuzzer's output."""
    status = _STATUS.findall(log)
    last = status[-1] if status else None
    done = _EXECUTED.search(log)
    execs = int(done.group(1)) if done else (int(last[0]) if last else 0)
    return {
        "harness": name,
        "executions": execs,
        "seconds": round(seconds, 1),
        "exec_per_s": round(execs / seconds, 1) if seconds > 0 else 0.0,
        "cov": int(last[2]) if last else 0,
        "ft": int(last[3]) if last else 0,
        "corpus": int(last[4]) if last and last[4] else 0,
        "crashes": _ARTIFACT.findall(log),
        "exit": rc,
    }


def campaign(
    name: str, runs: int, work: Path, max_time: int, timeout: int, max_len: int = 0
) -> dict[str, Any]:
    """Fuzz one harness in a child process; its summary."""
    mod_len = min(max_len, _max_len(name)) if max_len else _max_len(name)
    work.mkdir(parents=True, exist_ok=True)
    args = [
        str(work),
        str(corpus_dir(name)),
        f"-runs={runs}",
        f"-max_len={mod_len}",
        f"-timeout={timeout}",
        "-rss_limit_mb=4096",
        "-print_final_stats=1",
        f"-artifact_prefix={work}/",
    ]
    if max_time:
        args.append(f"-max_total_time={max_time}")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name, "--", *args]
    scratch = work.with_name(work.name + ".tmp")  # (not in the corpus folder: libFuzzer
    scratch.mkdir(exist_ok=True)  # reads that one recursively)
    env = {**os.environ, "SCRY_FUZZ_TMP": str(scratch)}
    t0 = time.monotonic()
    with tempfile.TemporaryFile("w+") as out:
        rc = subprocess.run(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=env, check=False
        ).returncode
        out.seek(0)
        log = out.read()
    res = summarise(name, log, rc, time.monotonic() - t0)
    (work / "last.log").write_text(log, encoding="utf-8")
    if rc != 0:
        res["tail"] = log[-3000:]
    return res


def _max_len(name: str) -> int:
    """The harness's MAX_LEN, read without importing it (the parent stays light)."""
    m = re.search(r"^MAX_LEN = ([0-9_]+)", (HERE / f"{name}.py").read_text(), re.M)
    return int(m.group(1)) if m else 4096


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module's docstring)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        _child(argv[1], argv[3:])
        return 0
    ap = argparse.ArgumentParser(prog="python tests/fuzz/run.py", description=__doc__)
    ap.add_argument("harness", nargs="+", help=f"one of {', '.join(HARNESSES)}, or all")
    ap.add_argument("--runs", type=int, default=1_000_000, help="executions per harness")
    ap.add_argument("--max-time", type=int, default=0, help="stop a harness after N seconds")
    ap.add_argument("--timeout", type=int, default=30, help="seconds one input may take")
    ap.add_argument("--max-len", type=int, default=0, help="cap on the harness's MAX_LEN")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "scry-fuzz")
    ap.add_argument("--replay", action="store_true", help="run the corpus once, no fuzzing")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    a = ap.parse_args(argv)
    names = list(HARNESSES) if a.harness == ["all"] else a.harness
    for n in names:
        if n not in HARNESSES:
            ap.error(f"unknown harness {n!r}; known: {', '.join(HARNESSES)}")
    results, failed = [], False
    for n in names:
        if a.replay:
            print(f"{n}: replayed {replay(n)} corpus files, all pass", flush=True)
            continue
        res = campaign(n, a.runs, a.work / n, a.max_time, a.timeout, a.max_len)
        results.append(res)
        failed |= res["exit"] != 0
        print(
            f"{n}: {res['executions']:,} executions in {res['seconds']:.0f} s "
            f"({res['exec_per_s']:.0f}/s), cov {res['cov']}, ft {res['ft']}, "
            f"corpus {res['corpus']}, crashes {len(res['crashes'])} {res['crashes']}",
            flush=True,
        )
        if res["exit"] != 0:
            print(res.get("tail", ""), file=sys.stderr)
    if a.json:
        a.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
