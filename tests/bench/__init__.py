"""Benchmarks (`make bench`): numbers to watch, never assertions."""
