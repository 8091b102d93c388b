"""The up-front memory check of --n-resamples (issue 22 item 4): one line before anything is computed."""
from __future__ import annotations

import pytest

import metaeval._validation as iv
from metaeval.cli.main import main
from metaeval.errors import ParameterError

GIB = 1 << 30


def test_estimate_counts_the_shared_draws():
    # BOOT-BOTH indices k (N + M) int64, PERM-BOTH packed bits k N ceil(M / 8), 8 float64 per resample
    assert iv.resampling_bytes(1, 6, 1) == 8 * 7 + 6 * 1 + 64
    assert iv.resampling_bytes(1000, 16, 100) == 1000 * (8 * 116 + 16 * 13 + 64)
    assert iv.resampling_bytes(2_000_000_000, 6, 1) > 89 * GIB  # the run asked numpy for 89 GiB


def test_message_is_pinned(monkeypatch):
    with pytest.raises(ParameterError) as caught:
        iv.check_resample_memory(2_000_000_000, 16, 100, param="--n-resamples", available=8 * GIB)
    assert str(caught.value) == ("`--n-resamples` must be small enough for the resamples to fit in memory; got"
                                 " 2000000000 (at least 2.2 TiB for 16 systems x 100 inputs, 8.0 GiB available).")
    iv.check_resample_memory(1000, 16, 100, available=8 * GIB)  # the default fits anywhere
    monkeypatch.setattr(iv, "available_memory", lambda: None)
    iv.check_resample_memory(10 ** 12, 16, 100)  # unknown memory: no refusal
    iv.check_resample_memory(0, 16, 100, available=1)  # not a count: the function taking it says so


@pytest.mark.parametrize("command", [
    ["correlate", "--dataset", "summeval", "--metric", "rouge-1.recall"],
    ["compare", "--dataset", "summeval", "--metric", "rouge-1.recall", "--metric", "rouge-2.recall"],
    ["report", "--dataset", "summeval", "--metric", "rouge-1.recall"],
])
def test_cli_refuses_before_computing(command, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(iv, "available_memory", lambda: 8 * GIB)
    code = main(command + ["--n-resamples", "2000000000", "--output", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == ("metaeval: error: `--n-resamples` must be small enough for the resamples to fit in memory; got"
                   " 2000000000 (at least 2.2 TiB for 16 systems x 100 inputs, 8.0 GiB available).\n")
    assert list(tmp_path.iterdir()) == []
