"""Random samples of a DataFrame (`sample`, `randomSplit`, `sampleBy`) and `df.stat`'s statistics
(`corr`, `cov`, `crosstab`, `freqItems`, `approxQuantile`).

Samples are filters on `rand(seed)` (engine: quiver/executors/cpu/kernels/row_position.py), so like Spark's they are
deterministic for a seed and a partitioning, and the splits of `randomSplit` are disjoint and
cover every row; the rows chosen differ from Spark's, whose generator differs. A sample with
replacement repeats each row a Poisson(fraction) number of times.
"""
from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from quiver.engine.api import functions as F
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException

if TYPE_CHECKING:
    from quiver.engine.api.dataframe import DataFrame

_UNIFORM = "__sample_uniform"


def _seed(seed: Any) -> int:
    return random.randint(-(1 << 63), (1 << 63) - 1) if seed is None else int(seed)


def sample_arguments(withReplacement: Any, fraction: Any, seed: Any) -> tuple[bool, float, int]:  # noqa: N803
    """PySpark's reading of sample(fraction), sample(fraction, seed) and sample(withReplacement, fraction, seed)."""
    def number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    if number(withReplacement):
        if fraction is not None:
            seed = fraction
        withReplacement, fraction = False, withReplacement
    if not number(fraction) or not (withReplacement is None or isinstance(withReplacement, bool)):
        raise TypeError("sample() takes (fraction), (fraction, seed) or (withReplacement, fraction, seed); "
                        f"got withReplacement={withReplacement!r}, fraction={fraction!r}, seed={seed!r}")
    fraction = float(fraction)
    if fraction < 0 or math.isnan(fraction):
        raise AnalysisException(f"sample(): the fraction must be at least 0, got {fraction}")
    if not withReplacement and fraction > 1:
        raise AnalysisException(f"sample() without replacement takes a fraction between 0 and 1, got {fraction}")
    return bool(withReplacement), fraction, _seed(seed)


def sample(df: DataFrame, withReplacement: Any = None, fraction: Any = None, seed: Any = None) -> DataFrame:  # noqa: N803
    with_replacement, fraction, seed = sample_arguments(withReplacement, fraction, seed)
    if not with_replacement:
        return df.filter(F.rand(seed) < F.lit(fraction))
    schema = df.schema
    names = list(df.columns)

    def repeat_rows(batches: Any) -> Any:
        for batch in batches:
            u = batch.column(batch.num_columns - 1).to_numpy(zero_copy_only=False)
            counts = poisson_counts(u, fraction)
            rows = pa.array(np.repeat(np.arange(batch.num_rows), counts))
            picked = batch.select(list(range(batch.num_columns - 1))).take(rows)
            yield pa.RecordBatch.from_arrays(picked.columns, names=names)

    return df.withColumn(_UNIFORM, F.rand(seed)).mapInArrow(repeat_rows, schema)


def poisson_counts(u: np.ndarray, mean: float) -> np.ndarray:
    """The Poisson(mean) count whose CDF first exceeds each uniform u (inverse-CDF sampling)."""
    k = np.zeros(len(u), np.int64)
    p = np.full(len(u), math.exp(-mean))
    cdf = p.copy()
    todo = u >= cdf
    while todo.any() and k.max() < 10_000:
        k[todo] += 1
        p[todo] *= mean / k[todo]
        cdf[todo] += p[todo]
        todo &= u >= cdf
    return k


def random_split(df: DataFrame, weights: Sequence[float], seed: Any = None) -> list[DataFrame]:
    """Disjoint samples of the rows in proportion to `weights` (normalized), together every row once."""
    if not weights or any(w < 0 for w in weights) or sum(weights) <= 0:
        raise AnalysisException(f"randomSplit() takes non-negative weights with a positive sum, got {list(weights)}")
    total = float(sum(weights))
    bounds = np.cumsum([0.0] + [w / total for w in weights])
    seed = _seed(seed)
    u = F.rand(seed)
    out = []
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        upper = u < F.lit(float(hi)) if i < len(weights) - 1 else F.lit(True)
        out.append(df.filter((u >= F.lit(float(lo))) & upper))
    return out


def sample_by(df: DataFrame, col: Any, fractions: dict, seed: Any = None) -> DataFrame:
    """A sample without replacement taking each stratum (value of `col`) with its own fraction (0 if absent)."""
    if not isinstance(fractions, dict):
        raise TypeError(f"sampleBy() fractions must be a dict of value -> fraction, got {type(fractions).__name__}")
    for k, v in fractions.items():
        if not 0 <= float(v) <= 1:
            raise AnalysisException(f"sampleBy(): the fraction for {k!r} must be between 0 and 1, got {v}")
    column = F.col(col) if isinstance(col, str) else col
    chosen = F.lit(0.0)
    for value, fraction in fractions.items():
        chosen = F.when(column == F.lit(value), F.lit(float(fraction))).otherwise(chosen)
    return df.filter(F.rand(_seed(seed)) < chosen)


class DataFrameStatFunctions:
    """`df.stat`: statistics of a DataFrame's columns, as PySpark's DataFrameStatFunctions.

    >>> df.stat.corr("age", "age")
    1.0
    """

    def __init__(self, df: DataFrame):
        self.df = df

    def _numeric(self, name: str, what: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{what}() takes column names, got {type(name).__name__}")
        dtype = {f.name: f.dataType for f in self.df.schema.fields}.get(name)
        if dtype is None:
            raise AnalysisException(f"{what}(): column '{name}' does not exist; columns are "
                                    f"{', '.join(self.df.columns)}")
        if not isinstance(dtype, T.NumericType):
            raise AnalysisException(f"{what}(): column '{name}' is {dtype.simpleString()}, not numeric")

    def _centered_sums(self, col1: str, col2: str) -> tuple[int, float, float, float]:
        """Rows, and the sums of (x-mx)(y-my), (x-mx)^2 and (y-my)^2 (two passes for precision).

        A null counts as 0.0, as in Spark's df.stat.corr and df.stat.cov (unlike the corr aggregate).
        """
        x, y = (F.coalesce(F.col(c).cast("double"), F.lit(0.0)) for c in (col1, col2))
        both = self.df
        first = both.agg(F.count(F.lit(1)), F.avg(x), F.avg(y)).collect()[0]
        n, mx, my = first[0], first[1], first[2]
        if n == 0:
            return 0, math.nan, math.nan, math.nan
        dx, dy = x - F.lit(mx), y - F.lit(my)
        sums = both.agg(F.sum(dx * dy), F.sum(dx * dx), F.sum(dy * dy)).collect()[0]
        return n, sums[0], sums[1], sums[2]

    def corr(self, col1: str, col2: str, method: str | None = None) -> float:
        """Pearson correlation of two numeric columns (rows where either is null are skipped).

        >>> round(spark.createDataFrame([(1, 2), (2, 4), (3, 7)], ["x", "y"]).stat.corr("x", "y"), 6)
        0.993399
        """
        if method not in (None, "pearson"):
            raise AnalysisException(f"corr(): only the pearson method is supported, got {method!r}")
        self._numeric(col1, "corr")
        self._numeric(col2, "corr")
        n, sxy, sxx, syy = self._centered_sums(col1, col2)
        if n == 0 or sxx == 0 or syy == 0:
            return math.nan
        return sxy / math.sqrt(sxx * syy)

    def cov(self, col1: str, col2: str) -> float:
        """Sample covariance of two numeric columns.

        >>> spark.createDataFrame([(1, 2), (2, 4), (3, 7)], ["x", "y"]).stat.cov("x", "y")
        2.5
        """
        self._numeric(col1, "cov")
        self._numeric(col2, "cov")
        n, sxy, _, _ = self._centered_sums(col1, col2)
        if n < 2:
            return math.nan
        return sxy / (n - 1)

    def crosstab(self, col1: str, col2: str) -> DataFrame:
        """A contingency table: one row per value of col1, one bigint column per value of col2.

        >>> frame = spark.createDataFrame([(1, "a"), (1, "b"), (2, "a")], ["k", "v"])
        >>> frame.stat.crosstab("k", "v").orderBy("k_v").collect()
        [Row(k_v='1', a=1, b=1), Row(k_v='2', a=1, b=0)]
        """
        counts = self.df.groupBy(F.col(col1).cast("string").alias("a"), F.col(col2).cast("string").alias("b")).count()
        table: dict[Any, dict[str, int]] = {}
        seen: set[str] = set()
        for row in counts.collect():
            b = "null" if row[1] is None else row[1]
            table.setdefault(row[0], {})[b] = row[2]
            seen.add(b)
        names = sorted(seen)
        schema = T.StructType([T.StructField(f"{col1}_{col2}", T.StringType(), True)]
                              + [T.StructField(n, T.LongType(), False) for n in names])
        rows = [tuple([("null" if a is None else a)] + [cells.get(n, 0) for n in names]) for a, cells in table.items()]
        return self.df.sparkSession.createDataFrame(rows, schema)

    def freqItems(self, cols: Sequence[str], support: float | None = None) -> DataFrame:  # noqa: N802
        """Items of each column found in at least `support` (default 1%) of the rows, as `<col>_freqItems`.

        Exact counts, so the arrays hold exactly the frequent items; Spark's one-pass sketch may also
        return some infrequent ones, and orders them its own way.

        >>> spark.createDataFrame([(1,), (1,), (2,)], ["v"]).stat.freqItems(["v"], 0.6).collect()
        [Row(v_freqItems=[1])]
        """
        support = 0.01 if support is None else float(support)
        if not 1e-4 <= support <= 1:
            raise AnalysisException(f"freqItems(): support must be between 1e-4 and 1, got {support}")
        if isinstance(cols, str):
            cols = [cols]
        total = self.df.count()
        values: list[list[Any]] = []
        fields = []
        types = {f.name: f.dataType for f in self.df.schema.fields}
        for c in cols:
            counts = self.df.groupBy(F.col(c).alias("v")).count().collect()
            values.append(sorted((r[0] for r in counts if r[1] >= support * total),
                                 key=lambda v: (v is not None, v)))
            fields.append(T.StructField(f"{c}_freqItems", T.ArrayType(types[c], True), True))
        return self.df.sparkSession.createDataFrame([tuple(values)], T.StructType(fields))

    def approxQuantile(self, col: str | Sequence[str], probabilities: Sequence[float],  # noqa: N802
                       relativeError: float) -> list:  # noqa: N803
        """Quantiles of numeric columns (nulls and NaN skipped); exact ranks, which are within any relativeError.

        >>> spark.range(1, 101).stat.approxQuantile("id", [0.25, 0.5], 0.0)
        [25.0, 50.0]
        """
        if relativeError < 0:
            raise AnalysisException(f"approxQuantile(): relativeError must be at least 0, got {relativeError}")
        for p in probabilities:
            if not 0 <= p <= 1:
                raise AnalysisException(f"approxQuantile(): probabilities must be between 0 and 1, got {p}")
        names = [col] if isinstance(col, str) else list(col)
        out: list[list[float]] = []
        for name in names:
            self._numeric(name, "approxQuantile")
            table = self.df.select(name).toArrow()
            values = table.column(0).cast(pa.float64()).drop_null().to_numpy(zero_copy_only=False)
            values = np.sort(values[~np.isnan(values)])
            if len(values) == 0:
                out.append([])
                continue
            ranks = [max(0, min(len(values) - 1, math.ceil(p * len(values)) - 1)) for p in probabilities]
            out.append([float(values[r]) for r in ranks])
        return out[0] if isinstance(col, str) else out

    def sampleBy(self, col: Any, fractions: dict, seed: int | None = None) -> DataFrame:  # noqa: N802
        """A stratified sample without replacement: each row whose `col` (a name or Column) has the value `v` is kept
        with probability `fractions[v]` (0 for a value not in `fractions`), drawn by `rand(seed)`. The rows chosen
        for a seed differ from Spark's, whose generator differs.

        >>> df.stat.sampleBy("name", {"Alice": 1.0, "Bob": 0.0}, seed=0).collect()
        [Row(age=2, name='Alice')]
        >>> spark.range(1000).stat.sampleBy("id", {0: 1.0}).collect()
        [Row(id=0)]
        """
        return sample_by(self.df, col, fractions, seed)
