"""training/paraphrase.py: WordNet files parsed, synonyms chosen by sense, re-inflected."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from training.paraphrase import WordNet, code_words, inflect, rewrite

LICENCE = "  1 This software and database is being provided to you, the LICENSEE, by\n"

# WordNet 3.0's own line formats (index.POS: lemma pos synset_cnt p_cnt [ptrs] sense_cnt
# tagsense_cnt offsets; data.POS: offset lex_filenum ss_type w_cnt(hex) word lex_id ... |
# gloss), cut down to the entries the tests use.
FILES = {
    "index.verb": [
        "remove v 2 1 @ 2 6 00000100 00000200",
        "take v 1 0 1 40 00000100",
        "take_away v 1 0 1 2 00000100",
        "withdraw v 1 0 1 3 00000100",
        "murder v 1 0 1 0 00000200",  # untagged: never offered
        "create v 1 0 1 12 00000300",
        "make v 1 0 1 50 00000300",
    ],
    "data.verb": [
        "00000100 30 v 04 remove 0 take 0 take_away 1 withdraw 0 000 | take off",
        "00000200 30 v 02 remove 0 murder 0 000 | kill",
        "00000300 36 v 02 create 0 make 0 000 | bring into existence",
    ],
    "index.noun": [
        "space n 1 0 1 9 00000400",
        "blank n 1 0 1 2 00000400",
        "mouse n 1 0 1 3 00000500",
        "rodent n 1 0 1 1 00000500",
    ],
    "data.noun": [
        "00000400 06 n 02 space 0 blank 0 000 | a blank character",
        "00000500 05 n 02 mouse 0 rodent 0 000 | a small animal",
    ],
    "noun.exc": ["mice mouse"],
    "verb.exc": ["made make"],
}


@pytest.fixture(scope="module")
def wn(tmp_path_factory: pytest.TempPathFactory) -> WordNet:
    root: Path = tmp_path_factory.mktemp("wordnet")
    for pos in ("noun", "verb", "adj", "adv"):
        for kind in ("index", "data"):
            lines = FILES.get(f"{kind}.{pos}", [])
            (root / f"{kind}.{pos}").write_text(LICENCE + "".join(x + "  \n" for x in lines))
        (root / f"{pos}.exc").write_text("".join(x + "\n" for x in FILES.get(f"{pos}.exc", [])))
    return WordNet.load(root)


def test_loads_senses_in_order_and_keeps_only_tagged_synonyms(wn: WordNet) -> None:
    assert wn.index["v"]["remove"] == ([100, 200], 6)
    assert wn.synsets["v"][100] == ["remove", "take", "take_away", "withdraw"]
    # the most frequent sense only; "murder" (second sense, untagged) is never offered
    assert wn.synonyms("remove", "v") == ["take", "take_away", "withdraw"]
    assert "murder" not in wn.synonyms("remove", "v", senses=2)


def test_lemmas_by_suffix_rules_and_exceptions(wn: WordNet) -> None:
    assert ("remove", "s", "") in wn.lemmas("removes", "v")
    assert ("remove", "ing", "e") in wn.lemmas("removing", "v")
    assert ("mouse", "exc", "mice") in wn.lemmas("mice", "n")
    assert wn.lemmas("spaces", "n") == [("space", "s", "")]
    assert wn.lemmas("zebra", "n") == []


def test_inflect_carries_the_original_form() -> None:
    assert inflect("take", "v", "s", "removes") == "takes"
    assert inflect("take_away", "v", "s", "removes") == "takes away"
    assert inflect("make", "v", "ed", "created") == "maked"  # no exception list: regular
    assert inflect("make", "v", "ing", "creating") == "making"
    assert inflect("blank", "n", "s", "spaces") == "blanks"
    assert inflect("copy", "v", "s", "removes") == "copies"
    assert inflect("blank", "n", "", "space") == "blank"


def test_inflect_takes_irregular_forms_from_the_exception_lists(wn: WordNet) -> None:
    assert inflect("make", "v", "ed", "created", wn) == "made"
    assert inflect("mouse", "n", "s", "spaces", wn) == "mice"
    assert inflect("take", "v", "ed", "removed", wn) == "taked"  # not listed: regular


def test_code_words_split_identifiers() -> None:
    assert code_words("def strip_trailing_spaces(line): return rstripAll(line)") >= {
        "strip",
        "trailing",
        "spaces",
        "line",
        "all",
        "rstrip",
    }


def test_rewrite_swaps_words_keeps_identifiers_and_punctuation(wn: WordNet) -> None:
    rng = random.Random(0)
    text, n = rewrite(wn, "Removes trailing spaces.", "", rng, p_code=1.0, p_other=1.0)
    assert n == 2
    assert text.endswith("blanks.")
    assert text.split()[0] in ("Takes", "Withdraws")  # a verb first, capitalised
    # identifiers, code-ish tokens and stop words stay as they are
    same, n = rewrite(wn, "the space_left of removeAll", "", rng, 1.0, 1.0)
    assert (same, n) == ("the space_left of removeAll", 0)


def test_rewrite_prefers_the_words_the_code_holds(wn: WordNet) -> None:
    code = "def remove(x):\n    return x"
    hits = {"code": 0, "other": 0}
    for seed in range(200):
        text, _ = rewrite(wn, "remove the space", code, random.Random(seed), 1.0, 0.0)
        hits["code"] += not text.startswith("remove")
        hits["other"] += not text.endswith("space")
    assert hits == {"code": 200, "other": 0}
