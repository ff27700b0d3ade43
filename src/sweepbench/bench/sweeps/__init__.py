"""Benchmark sweeps (issue 16): one benchmark under several settings on the same items —
planned (:mod:`.plan`), run (:mod:`.run`), stored (:mod:`.store`), compared with paired
tests (:mod:`.compare`, figures from :mod:`sweepbench.stats`), read back (:mod:`.result`)
and said (:mod:`.verdict`, :mod:`.wording`); :mod:`.api` is the Python entry point."""
