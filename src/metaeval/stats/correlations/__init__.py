"""Correlation coefficients and levels: the batched coefficients, the tie rule, exact pair counts,
how a systems x inputs matrix becomes a correlation (system, summary, global, by-system), and the
analytic Fisher-z interval."""
