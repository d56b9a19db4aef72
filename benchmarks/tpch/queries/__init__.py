"""The 22 TPC-H queries as SQL text, written from the TPC-H specification with its substitution defaults."""
from __future__ import annotations

from pathlib import Path

QUERY_NUMBERS = tuple(range(1, 23))
_HERE = Path(__file__).resolve().parent


def sql_text(number: int) -> str:
    """The SQL of TPC-H query `number` (1–22)."""
    if number not in QUERY_NUMBERS:
        raise ValueError(f"TPC-H has queries 1 to 22, not {number}")
    return (_HERE / f"q{number:02d}.sql").read_text()


def has_order_by(number: int) -> bool:
    """Whether the query's outermost SELECT orders its rows (every TPC-H query but Q6, Q14, Q17 and Q19)."""
    return number not in (6, 14, 17, 19)
