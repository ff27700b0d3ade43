"""The leaderboard (spec §17): published ELBench figures and stored runs on judge boards,
priced, filtered, with the best-value frontier and a takeaway."""
