"""training/genq.py: the prompt and the filter on the LLM's answers (no model is loaded)."""

from __future__ import annotations

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
    assert len(WHEEL_SHA256) == 6
    for h in [GGUF_SHA256, *WHEEL_SHA256.values()]:
        assert len(h) == 64 and int(h, 16) >= 0
