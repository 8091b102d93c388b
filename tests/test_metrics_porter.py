"""ROUGE-1.5.5's Porter variant (metaeval.metrics.porter155) against the original Perl stemmer's output."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from metaeval.metrics.porter155 import porter_stem

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TABLE = DATA / "rouge" / "porter-rouge155.tsv.gz"


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        # Porter (1980) examples, unchanged in the variant.
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("agreed", "agre"),
        ("hopping", "hop"),
        ("filing", "file"),
        ("happy", "happi"),
        ("relational", "relat"),
        ("generalization", "gener"),
        ("controll", "control"),
        ("yelled", "yell"),
        # Step 1c keeps y -> i after a vowel-containing stem.
        ("abbey", "abbei"),
        # ROUGE-1.5.5's step 4: three consecutive tests.
        ("abolitionism", "abolit"),
        ("agreement", "agreem"),
        ("accidental", "accid"),
        ("intervention", "intervent"),
        ("bilateral", "bilater"),
        # Short words are returned unchanged.
        ("as", "as"),
        ("", ""),
    ],
)
def test_porter_examples(word, stem):
    assert porter_stem(word) == stem


def test_porter_initial_y_is_a_consonant():
    # An initial "y" is a consonant: "ying" has no vowel before "-ing", so nothing is removed,
    # while "-ying" after a vowel-containing stem goes.
    assert porter_stem("ying") == "ying"
    assert porter_stem("playing") == "plai"
    assert porter_stem("youthful") == "youth"


@pytest.mark.skipif(not TABLE.exists(), reason=f"ROUGE-1.5.5 Porter table not found at {TABLE}: shared data absent")
def test_porter_reproduces_rouge155_table_exactly():
    with gzip.open(TABLE, "rt", encoding="utf-8") as f:
        pairs = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    assert len(pairs) == 179_831
    wrong = [(word, stem, porter_stem(word)) for word, stem in pairs if porter_stem(word) != stem]
    assert wrong == [], f"{len(wrong)} words differ, e.g. {wrong[:5]}"
