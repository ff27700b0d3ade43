"""The judge contract, below both runs layers (``bench`` and ``sweeps`` import it; it imports
neither): :mod:`~sweepbench.judging.contract` holds the shapes, the request and the verdict
reading; :mod:`~sweepbench.judging.reply` finds the JSON object in a model's reply."""
