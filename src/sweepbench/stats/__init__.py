"""Statistics, pure and below every runs layer: bootstrap ranges (:mod:`.bootstrap`), paired
comparisons and McNemar (:mod:`.paired`), Holm, Wilcoxon, the detectable difference and
pass@k (:mod:`.significance`), and the best-value frontier (:mod:`.frontier`). Nothing here
imports the store, the engine, benchmarks, sweeps or the leaderboard."""
