"""Stage fragments run by a native vectorised engine (DuckDB) behind Quiver's planner, scheduler and shuffle.

`sql` says which fragments translate exactly (Spark's answers, to the last bit) and writes their SQL;
`executor` runs them, one DuckDB connection per worker thread, and hands Arrow batches to the operators
above. `quiver.native.engine` (`duckdb`, the default, or `none`) chooses it.
"""
