"""Reproducible side-by-side comparisons of Quiver with its peers.

A benchmark's processes are Quiver's own, so Quiver tunes their allocators as `quiver-submit` does
(`quiver.memory.tuneAllocator`; here the environment variable, set before anything imports pyarrow, so
that mimalloc's options apply too, and inherited by the benchmarks' child processes).
"""
import os

os.environ.setdefault("QUIVER_TUNE_ALLOCATOR", "1")
