"""The ``sweepbench`` command line."""

from sweepbench.cli.app import app, main

__all__ = ["app", "main"]
