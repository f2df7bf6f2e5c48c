"""training/genq.py: the prompt, the filter on the LLM's answers, and the committed questions
file (export, then corpus: the questions back on their code). No model is loaded."""

from __future__ import annotations

import json
import re

import pytest

from training import genq
from training.genq import GGUF_SHA256, SHOTS, WHEEL_SHA256, clean, messages

CODE = "def strip_trailing(lines):\n    return [ln.rstrip() for ln in lines]  # readLines"


def test_prompt_is_system_then_shots_then_the_code() -> None:
    msgs = messages(CODE)
    assert [m["role"] for m in msgs] == ["system"] + ["user", "assistant"] * len(SHOTS) + ["user"]
    assert msgs[-1]["content"].startswith("Code:\n" + CODE)
    assert msgs[2]["content"] == SHOTS[0][1]


def test_clean_keeps_the_first_sentence_lower_cased() -> None:
    got = clean("Remove the blanks at the end of every line. It returns a list.", CODE)
    assert got == "remove the blanks at the end of every line"
    assert clean("`Drop spaces that end each line of text`\nMore.", CODE) == (
        "drop spaces that end each line of text"
    )


def test_clean_drops_answers_naming_the_code_or_of_the_wrong_length() -> None:
    assert clean("Calls strip_trailing on every line of the file", CODE) is None
    assert clean("Uses readLines to cut blanks from the lines", CODE) is None
    assert clean("Strips lines", CODE) is None
    assert clean(" ".join(["word"] * 31), CODE) is None
    assert clean(SHOTS[1][1].capitalize() + ".", CODE) is None  # the example, copied
    # a plain word the code also uses is not a name
    assert clean("cut the blank lines out of the list of lines", CODE) is not None


def test_pins_are_sha256_hex() -> None:
    """Each pin has the form ``sha256_of`` answers (64 lower-case hex digits: a pin in
    capitals, with a prefix or cut short could never match), one per file."""
    assert len(WHEEL_SHA256) == 6
    pins = [GGUF_SHA256, *WHEEL_SHA256.values()]
    for h in pins:
        assert re.fullmatch(r"[0-9a-f]{64}", h), h
    assert len(set(pins)) == len(pins)


def _write(path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_export_then_corpus_puts_questions_back_on_their_code(tmp_path) -> None:
    codes = [f"def f{i}(x):\n    return x + {i}" for i in range(6)]
    pairs = [
        {"q": f"add {i}", "c": c, "package": "p", "lang": "python"} for i, c in enumerate(codes)
    ]
    _write(tmp_path / "pairs.jsonl", pairs)
    data = tmp_path / "data"
    data.mkdir()
    train = [
        {
            "query": f"Adds {i} to x.",
            "code": c,
            "negatives": [],
            "package": "p",
            "lang": "python",
            "source": "doc",
        }
        for i, c in enumerate(codes)
    ]
    _write(data / "train.jsonl", train)
    _write(data / "heldout.jsonl", train[:1])
    run = [
        {
            "src": 1,
            "raw": "grow a number by one",
            "kept": True,
            "query": "grow a number by one",
            "code": codes[1],
            "package": "p",
            "lang": "python",
            "source": "llm",
        },
        {"src": 2, "raw": "f2", "kept": False},
    ]
    _write(tmp_path / "run.jsonl", run)
    q = tmp_path / "questions.jsonl"
    genq.main(["export", str(tmp_path / "run.jsonl"), "--out", str(q)])
    genq.main(["export", str(tmp_path / "run.jsonl"), "--out", str(q)])  # idempotent
    kept = [json.loads(line) for line in q.read_text().splitlines()]
    assert [r["src"] for r in kept] == [1]
    assert "code" not in kept[0] and kept[0]["sha"] == genq.code_key(codes[1])

    args = [
        "corpus",
        "--questions",
        str(q),
        "--src",
        str(tmp_path / "pairs.jsonl"),
        "--data",
        str(data),
        "--repeat",
        "2",
        "--random",
        "1",
    ]
    genq.main([*args, "--out", str(tmp_path / "llm")])
    rows = [json.loads(line) for line in (tmp_path / "llm/train.jsonl").read_text().splitlines()]
    llm = [r for r in rows if r["source"] == "llm"]
    assert len(llm) == 2 and {r["code"] for r in llm} == {codes[1]}
    assert llm[0]["query"] == "grow a number by one"
    others = [r for r in rows if r["source"] != "llm"]
    assert len(others) == 2 and codes[1] not in {r["code"] for r in others}
    assert (tmp_path / "llm/heldout.jsonl").exists()

    genq.main([*args, "--out", str(tmp_path / "ctl"), "--control"])
    ctl = [json.loads(line) for line in (tmp_path / "ctl/train.jsonl").read_text().splitlines()]
    assert sum(r["code"] == codes[1] and r["query"] == "Adds 1 to x." for r in ctl) == 2


def test_corpus_refuses_a_pairs_file_the_questions_were_not_written_on(tmp_path) -> None:
    _write(tmp_path / "pairs.jsonl", [{"q": "a", "c": "other code", "package": "p", "lang": "go"}])
    (tmp_path / "d").mkdir()
    _write(tmp_path / "d/train.jsonl", [])
    q = tmp_path / "q.jsonl"
    _write(
        q,
        [
            {
                "src": 0,
                "sha": genq.code_key("the code"),
                "package": "p",
                "lang": "go",
                "query": "do a thing with the code",
                "model": "m",
            }
        ],
    )
    with pytest.raises(SystemExit, match="does not match"):
        genq.main(
            [
                "corpus",
                "--questions",
                str(q),
                "--src",
                str(tmp_path / "pairs.jsonl"),
                "--data",
                str(tmp_path / "d"),
                "--out",
                str(tmp_path / "o"),
            ]
        )


def test_committed_questions_are_well_formed_and_over_no_evaluation_corpus() -> None:
    from training.corpus import REPO, Exclusions

    rows = [json.loads(line) for line in genq.QUESTIONS.read_text().splitlines()]
    assert rows, "the committed questions file is empty"
    assert len({r["src"] for r in rows}) == len(rows)
    manifest = json.loads((REPO / "training/manifest.json").read_text())["packages"]
    registry = {p["name"]: p["registry"] for p in manifest}
    excl = Exclusions.load(REPO)
    # the form of genq.code_key, which the corpus step compares them with
    fingerprint = re.compile(f"[0-9a-f]{{{len(genq.code_key(CODE))}}}")
    for r in rows:
        assert fingerprint.fullmatch(r["sha"]), r["sha"]
        assert 5 <= len(r["query"].split()) <= 30 and "\n" not in r["query"]  # the filter's
        assert r["package"] in registry, r["package"]
        assert excl.why(registry[r["package"]], r["package"]) is None, r["package"]
