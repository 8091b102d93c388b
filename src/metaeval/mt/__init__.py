"""The WMT metrics-task wing: MT meta-evaluation over language pairs (docs/mt.md).

- :mod:`.evaluate`: :func:`mt_evaluate` (the tasks of a protocol per language pair, pooled, ranked into
  significance clusters) and the checks of its language pairs, golds and excluded systems;
- :mod:`.tasks`: one task (level / statistic) run on one language pair with the shared draws;
- :mod:`.protocol`: :func:`load_protocol` (a preset name or a TOML file -> :class:`~metaeval.stats.mt.protocol.Protocol`);
- :mod:`.result`: :class:`MtEvaluationResult`;
- :mod:`.baselines`: human baselines scored as metrics and their verdicts;
- :mod:`.sentinels`: :func:`add_sentinels` (degenerate metrics built from the data);
- :mod:`.audit`: :func:`mt_audit` (sentinels across a grid of tasks, discriminative power, consistency);
- :mod:`.delta`: :func:`delta_accuracy` (the metric delta needed for an agreement level with the humans);
- :mod:`.readers`: :func:`read_mt_metrics_eval` and :func:`read_wmt_mqm` (WMT file layouts).

The numerics (arrays in, arrays out) live in :mod:`metaeval.stats.mt`. Nothing is imported here: each module
loads what it uses (``import metaeval.mt.protocol`` loads no statistics).
"""
