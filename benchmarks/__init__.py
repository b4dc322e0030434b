"""Benchmarks and test beds: run them as scripts (``python benchmarks/bench_routing.py``)."""
