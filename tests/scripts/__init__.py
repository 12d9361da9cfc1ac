"""Smoke tests of the scripts of ``scripts/`` (benchmarks and figures) at tiny sizes."""
