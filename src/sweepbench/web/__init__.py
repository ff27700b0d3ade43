"""The local web app (``sweepbench serve``): Dash + Mantine pages over the same engine as the
CLI. :func:`sweepbench.web.app.create_app` builds it."""
