"""The leaderboard: published rows, visitor runs, boards and comparisons (issue 15)."""
