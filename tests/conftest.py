"""Shared fixtures: the real data in ../shared/data, and small synthetic score sets."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"SKIPPED: the shared data directory {SHARED_DATA} is absent (clone ../shared beside the repo)")
    return SHARED_DATA


@pytest.fixture
def tiny_scoreset():
    """12 systems x 6 inputs, metric A close to the human score, metric B noisier."""
    import metaeval as me

    rng = np.random.default_rng(1)
    human = rng.normal(size=(12, 6)) + np.arange(12)[:, None] / 3
    a = human + rng.normal(scale=1.5, size=(12, 6))
    b = human + rng.normal(scale=4.0, size=(12, 6))
    return me.ScoreSet.from_matrices(
        {"a": a, "b": b, "human": human},
        systems=[f"s{i}" for i in range(12)],
        inputs=[f"d{j}" for j in range(6)],
        humans=["human"],
        name="tiny",
    )
