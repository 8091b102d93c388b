"""The one source of truth for every default: the API, the CLI and the docs refer to these names."""

LEVEL = "system"
COEFFICIENT = "kendall-b"
RESAMPLING_METHOD = "both"
N_RESAMPLES = 1000
CONFIDENCE_LEVEL = 0.95
ALPHA = 0.05
# Deutsch, Dror & Roth (2021) test H1: rho(X, Z) > rho(Y, Z); a significance matrix reads row > column.
ALTERNATIVE = "greater"
CORRECTION = "holm"
METRIC_TEST = "permutation"  # compare_metrics / metaeval compare
TABLE_CI = "boot-both"
# The p-value of a single correlation (correlate, bootstrap_ci, fisher_ci, correlation_table, `metaeval
# correlate`): scipy's analytic one where a level correlates one vector pair, against H0 "no relation".
PVALUE_METHOD = "analytic"
CORRELATION_ALTERNATIVE = "two-sided"  # the interval of every cell of correlation_table / metaeval correlate
OUTPUT_FORMAT = "table"
# The family of p-values corrected together, for compare_metrics, `metaeval compare` and `metaeval report`:
# each row metric's P - 1 comparisons. Over the whole matrix (P(P - 1) p-values) a Monte Carlo p-value
# >= 1 / (resamples + 1) cannot pass Holm with 34 metrics and 1000 resamples (it would need p < 0.05 / 1122,
# i.e. at least 22,440 resamples).
FAMILY = "row"
INTERVAL = "percentile"
UNDEFINED = "skip"
# Two scores a, b of one vector v are tied when |a - b| <= max(TIE_TOLERANCE * (max v - min v), 2^-46 max|v|)
# (stats/correlations/ties.py); 0 = exact, as scipy.
TIE_TOLERANCE = 1e-9
# Largest magnitude of a score a ScoreSet accepts: sums and means of up to 1e8 such values do not overflow.
MAX_SCORE_MAGNITUDE = 1e300
SEED = 0
REPORT_LEVELS = ("system", "summary")
REPORT_COEFFICIENTS = ("pearson", "spearman", "kendall-b")
# Comparing systems under one scorer (Koehn 2004; Riezler & Maxwell 2005) and pairwise system verdicts.
SYSTEM_TEST = "bootstrap"
SYSTEM_ALTERNATIVE = "two-sided"
# Judges and pairwise preferences (docs/judges.md): the Bradley-Terry tie model, what the ranking's bootstrap
# resamples, and the Alternative Annotator Test's cost-benefit epsilon (Calderon et al. 2025 recommend 0.2
# when the annotators are experts, 0.1 for crowd workers) and FDR level.
TIE_MODEL = "half"
EVEN_SPLIT = "half"  # MT-Bench (Zheng et al. 2023): an even split of the human votes counts half
JUDGE_RESAMPLING = "inputs"
ALT_TEST_EPSILON = 0.2
ALT_TEST_ALPHA = 0.05
# Simulations of Deutsch, Dror & Roth (2021), Sec. 5.
SIMULATION_TRIALS = 1000
SIMULATION_LEVELS = ("system", "summary")
COVERAGE_METHODS = ("fisher", "boot-systems", "boot-inputs", "boot-both")
POWER_TESTS = ("perm-both", "boot-both", "williams")
POWER_COEFFICIENT = "pearson"
POWER_PROPORTIONS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
# Trials (repetitions) per independently seeded chunk of the simulations (metaeval.runtime.tasks): the split
# into chunks, hence the results for a seed, does not depend on the backend (serial, workers, Dask).
SIMULATION_CHUNK_TRIALS = 50
STABILITY_CHUNK_REPETITIONS = 100
# Analyses of Deutsch, Dror & Roth (2022), REALSumm (Bhandari et al. 2020) and beyond (analyses/).
DELTA_FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
DELTA_BOUNDARY = "both"
DELTA_MIN_PAIRS = 5
STABILITY_REPETITIONS = 1000
STABILITY_SAMPLING = "disjoint"
STABILITY_GRID_POINTS = 10
TOPK_MIN_SYSTEMS = 3
GAP_GRID_POINTS = 50
GAP_BINS = 10
PLAN_REPETITIONS = 100
PLAN_N_RESAMPLES = 200
PLAN_TEST = "permutation"
PLAN_TARGET_POWER = 0.8

# `metaeval report` presets (--quick / default / --full): resamples of the correlation table and the
# significance matrix, repetitions of the analyses' simulations, and how many metrics the analyses show.
REPORT_QUICK_RESAMPLES = 200
REPORT_FULL_RESAMPLES = 10_000
REPORT_QUICK_REPETITIONS = 100
REPORT_REPETITIONS = 1000
REPORT_FULL_REPETITIONS = 1000
REPORT_FOCUS_METRICS = 6
REPORT_CORRECTION = "holm"
# Human judgments (metaeval.human).
LITEPYRAMID_TIES = "absent"  # REALSumm: an SCU whose votes tie is "not present"
WORKER_FILTER = "auto"  # drop each document's noisiest worker when worker ids exist
PYRAMID_MATCH_ATOL = 1e-9
AGREEMENT_LEVEL = "nominal"
AGREEMENT_BY = "dataset"
NORMALIZATION = "z"  # per-annotator z-scores (WMT; Leusch et al. 2005)
HUMAN_AGGREGATION = "mean"
RANKING_STATE_LIMIT = 5_000_000  # sets of top-ranked systems the ranking count may visit
SAMPLE_MEAN_BINS = 10  # REALSumm App. A.1: bins on the documents' mean metric score ...
SAMPLE_STD_BINS = 2  # ... then on their standard deviation across systems

# Scoring engine (metaeval.scoring): pairs per batch (the unit of work and of cache commits), batches in
# flight per worker, local worker processes, and how long to wait for a Dask scheduler.
SCORING_BATCH_SIZE = 256
SCORING_IN_FLIGHT = 2
SCORING_WORKERS = 1
DASK_CONNECT_TIMEOUT = 10.0

# Machine-translation meta-evaluation (metaeval.mt, docs/mt.md).
# Tie calibration (Deutsch, Foster & Freitag 2023) enumerates pairs: at most this many (global level).
TIE_CALIBRATION_MAX_PAIRS = 20_000_000
MT_DARR_THRESHOLD = 25.0  # WMT DARR: segment pairs whose DA scores differ by at least this much
MT_SPA_PERMUTATIONS = 1000  # soft pairwise accuracy: permutations per system pair (Thompson et al. 2024)
# soft pairwise accuracy: a permuted sum counts as equal to the observed one within this share of the sums'
# operands (sum of |scores| of the two systems; docs/mt.md, "Tasks and their statistics"): above the rounding of
# the sums and of scores written with 6 decimals, below one step of a grid
MT_SPA_RTOL = 1e-8
MT_RECALIBRATE = False  # acc23 / tau23 in the resamples: the threshold calibrated once per metric
# The evaluation protocol of `metaeval mt` (docs/mt.md, "Protocols"): one of vocabulary.MT_PROTOCOLS.
MT_PROTOCOL = "wmt23"
# The protocols themselves (tasks, averaging, test, human-tie rule, p-values, gold) are data:
# metaeval.stats.mt.protocol.PROTOCOLS.
# Segments of `metaeval mt`: 'common' (every metric on the segments that all metrics and the human scored, as
# WMT; the paired tests need one set of segments) or 'per-metric' (each metric on its own segments).
MT_SEGMENTS = "common"
# The protocol audit (`metaeval mt audit`, docs/mt.md "Auditing the protocol"): the distinct values of the rounded
# sentinel, the grid of tasks (groupings none / item / system x statistics; global Kendall and acc-eq compare
# every pair of cells and are left to --task), and the segment subsamples of the ranking consistency (half of
# the segments each, without replacement).
MT_SENTINEL_LEVELS = 5
MT_AUDIT_TASKS = ("global/pearson", "summary/pearson", "summary/kendall-b", "summary/kendall-c", "summary/acc-eq",
                  "summary/acc23", "summary/pdp", "by-system/pearson", "by-system/kendall-b", "by-system/pdp",
                  "system/pearson", "system/kendall-b", "system/accuracy", "system/soft-accuracy")
MT_CONSISTENCY_RESAMPLES = 100
MT_CONSISTENCY_FRACTION = 0.5
# The delta-to-accuracy curve (Kocmi et al. 2024; docs/mt.md "The delta-to-accuracy curve"): the agreement
# levels whose metric delta is reported, what the band's bootstrap resamples, the points of the drawn curve and
# the bins of the empirical agreement drawn beside it.
DELTA_ACCURACY_TARGETS = (0.8, 0.9, 0.95)
DELTA_ACCURACY_METHOD = "both"
DELTA_ACCURACY_GRID = 60
DELTA_ACCURACY_BINS = 6
# Nugget F(beta) (TREC 2004 definition questions; Lin & Demner-Fushman 2005): beta, characters allowed per
# matched nugget, and the automatic matcher's share of a nugget's content terms that must occur in the text.
NUGGET_BETA = 3.0
NUGGET_ALLOWANCE = 100.0
NUGGET_THRESHOLD = 0.6
NUGGET_MATCH = "threshold"
# Extrinsic evaluation (Dorr et al. 2005): cell size and number of random partitions of the
# partition-averaged correlation.
PARTITION_SIZE = 4
PARTITION_REPEATS = 10000
FULL_TEXT_CONDITION = "full"
EXTRINSIC_UNIT = "document"

# Error spans (metaeval.spans, `metaeval spans`): the reference implementation's current defaults
# (sted19/span-mt-metaeval, scripts/meta_evaluate.py) unless docs/spans.md gives a reason.
SPAN_MEASURE = "partial"  # partial overlap with partial credit (Perrella et al. 2026's recommendation)
SPAN_AVERAGING = "micro"
SPAN_MACRO = "mean-f1"  # the reference's MacroMetrics(use_average_f_score=True)
SPAN_MATCHING = "optimal"  # the reference's default; --use-greedy-matching is its option
SPAN_SEVERITY_MODE = "ignore"
SPAN_CRITICAL = "major"  # the reference's --transform-critical-into-major (default True)
SPAN_ERRORS = "reference"  # the reference's standardize_human_error
SPAN_SOURCE_SPANS = True  # omissions are marked in the source and scored on their own side
SPAN_TASK = "error-free"
SPAN_GOLD_RULE = "both"
SPAN_ERROR_FREE_THRESHOLD = 0.0
SPAN_CRITICAL_THRESHOLD = -5.0  # one Major error's MQM weight
SPAN_N_FOLDS = 5
SPAN_FOLDS_BY = "segment"
