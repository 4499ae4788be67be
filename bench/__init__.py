"""Benchmarks of the event-sourced core (`python bench/bench_core.py`, `make bench`)."""
