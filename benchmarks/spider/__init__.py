"""The Spider dev benchmark: converter, official-metric reimplementation, agreement runner."""
