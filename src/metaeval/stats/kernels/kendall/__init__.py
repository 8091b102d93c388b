"""Kendall tau-a / b / c, pairwise accuracy, acc-eq / tau-eq (and Spearman as weighted pair counts): the
pair-count coefficients' kernels, each compiled loop beside its numpy twin."""
