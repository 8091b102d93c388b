"""The WMT metrics-task wing: MT meta-evaluation over language pairs (docs/mt.md).

- :mod:`.evaluate`: :func:`mt_evaluate` (the tasks of a protocol per language pair, pooled, ranked into
  significance clusters), its signature complete when the result is built;
- :mod:`.tasks`: the tasks (level / statistic) that run themselves on a language pair with the task's draws,
  and the pooled accuracy, a task over several language pairs;
- :mod:`.protocol`: :func:`load_protocol` (a preset name or a TOML file -> a
  :class:`~metaeval.stats.mt.protocol.Protocol`) and :func:`protocol_hash` (its content's hash);
- :mod:`.checks`: every check of the input of :func:`mt_evaluate`, made once (errors name the caller's words);
- :mod:`.streams`: the random streams, keyed by what they serve;
- :mod:`.result`: :class:`MtEvaluationResult`;
- :mod:`.baselines`: human baselines scored as metrics and their verdicts;
- :mod:`.sentinels`: :func:`add_sentinels` (degenerate metrics built from the data);
- :mod:`.audit`: :func:`mt_audit` (sentinels across a grid of tasks, discriminative power, consistency);
- :mod:`.delta`: :func:`delta_to_accuracy` (the metric delta needed for an agreement level with the humans);
- :mod:`.readers`: :func:`read_mt_metrics_eval` and :func:`read_mqm_averages` (WMT file layouts).

The numerics (arrays in, arrays out) live in :mod:`metaeval.stats.mt`. Nothing is imported here: each module
loads what it uses.
"""
