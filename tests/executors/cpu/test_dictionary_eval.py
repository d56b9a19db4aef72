"""quiver/executors/cpu/dictionary_eval.py: a filter over dictionary-encoded strings, evaluated per distinct
value, keeps exactly the rows the same filter keeps over decoded strings; encoded columns stay
encoded; columns with nulls, and expressions mixing columns, are evaluated on decoded values."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from quiver import functions as F
from quiver.engine.core import types as T
from quiver.engine.core.expressions import And, AttributeRef, Comparison, In, Literal, Or, ScalarFunction
from quiver.executors.cpu.dictionary_eval import decode_dictionaries, filter_encoded_batch
from quiver.executors.cpu.evaluate import filter_batch

MODE = AttributeRef("mode", T.StringType(), True, 201)
QTY = AttributeRef("qty", T.LongType(), True, 202)
MODES = ["AIR", "RAIL", "SHIP", "TRUCK", "AIR REG", "MAIL", "FOB"]


def _batch(modes, encode: bool = True) -> pa.RecordBatch:
    column = pa.array(modes, pa.string())
    return pa.RecordBatch.from_arrays([column.dictionary_encode() if encode else column,
                                       pa.array(range(len(modes)), pa.int64())],
                                      names=[MODE.internal_name, QTY.internal_name])


def _lit(v):
    return Literal(v, T.StringType())


CONDITIONS = {
    "in": In(MODE, (_lit("AIR"), _lit("AIR REG"))),
    "like_and_column": And(ScalarFunction("like", (MODE, _lit("%AI%"))),
                           Comparison(">", QTY, Literal(10, T.LongType()))),
    "or_across_columns": Or(Comparison("=", MODE, _lit("SHIP")), Comparison("<", QTY, Literal(3, T.LongType()))),
    "mixed_expression": Comparison("=", ScalarFunction("concat", (MODE, _lit("!"))), _lit("MAIL!")),
}


@pytest.mark.parametrize("name", list(CONDITIONS))
def test_same_rows_as_over_decoded_strings(name):
    modes = [MODES[(i * 5) % 7] for i in range(60)]
    condition = CONDITIONS[name]
    encoded = filter_encoded_batch(_batch(modes), condition)
    plain = filter_batch(_batch(modes, encode=False), condition)
    assert encoded.num_rows > 0
    assert pa.types.is_dictionary(encoded.column(0).type)  # the survivors are still encoded
    assert decode_dictionaries(encoded).to_pylist() == plain.to_pylist()


def test_nulls_take_the_decoded_path():
    modes = ["AIR", None, "SHIP", None, "AIR"]
    is_air_or_unknown = Or(Comparison("=", MODE, _lit("AIR")), ScalarFunction("isnull", (MODE,)))
    out = decode_dictionaries(filter_encoded_batch(_batch(modes), is_air_or_unknown))
    assert out.column(0).to_pylist() == ["AIR", None, None, "AIR"]


def test_parquet_strings_filtered_end_to_end(spark, tmp_path):
    n = 20000
    pq.write_table(pa.table({"mode": [MODES[i % 7] for i in range(n)], "qty": list(range(n))}), tmp_path / "l.parquet")
    df = spark.read.parquet(str(tmp_path / "l.parquet"))
    rows = df.filter(F.col("mode").isin("AIR", "FOB") & (F.col("qty") % 100 == 0)).orderBy("qty").collect()
    expected = [(MODES[i % 7], i) for i in range(0, n, 100) if MODES[i % 7] in ("AIR", "FOB")]
    assert [(r.mode, r.qty) for r in rows] == expected
    assert df.filter(F.col("mode").startswith("A")).schema["mode"].dataType == T.StringType()
