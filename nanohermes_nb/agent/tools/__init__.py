"""The agent's tools: ``toolbox`` (running them), ``specs`` (their schemas and caps),
``processes`` (subprocesses that cannot escape) and ``web`` (fetching and reading pages)."""
