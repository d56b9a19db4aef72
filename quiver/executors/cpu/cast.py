"""CAST with Spark's non-ANSI semantics, on Arrow arrays: bad input becomes null, never an error.

Arrow's own casts differ from Spark's in many small ways (Arrow rejects ' 12', rounds
double->int differently, prints 1e20 as '1e+20', rounds decimals half-to-even or not at
all), so each source/target family has its own vectorised path here; `pc.cast` is used
only where its result is already Spark's.
"""
from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import types as T
from quiver.engine.core.ansi import ansi_enabled, try_mode
from quiver.engine.core.errors import (
    AnalysisException,
    cast_invalid_input,
    cast_overflow,
    numeric_value_out_of_range,
)
from quiver.engine.core.time_zones import local_to_utc, utc_to_local
from quiver.executors.cpu import datetime_format as dt
from quiver.executors.cpu.decimal import unscaled_int64

Value = pa.Array | pa.Scalar

_INT_BOUNDS = {T.ByteType: 2**7, T.ShortType: 2**15, T.IntegerType: 2**31, T.LongType: 2**63}
_NUMPY_INT = {T.ByteType: np.int8, T.ShortType: np.int16, T.IntegerType: np.int32, T.LongType: np.int64}
_TRUE_WORDS = ["t", "true", "y", "yes", "1"]
_FALSE_WORDS = ["f", "false", "n", "no", "0"]


def can_cast(from_: T.DataType, to: T.DataType) -> bool:
    """Whether Spark (non-ANSI) allows CAST(from_ AS to); the analyzer rejects the others."""
    if from_ == to or isinstance(from_, T.NullType) or isinstance(to, T.StringType):
        return True
    src, dst = _family(from_), _family(to)
    if isinstance(from_, T.ArrayType) and isinstance(to, T.ArrayType):
        return can_cast(from_.elementType, to.elementType)
    if isinstance(from_, T.MapType) and isinstance(to, T.MapType):
        return can_cast(from_.keyType, to.keyType) and can_cast(from_.valueType, to.valueType)
    if isinstance(from_, T.StructType) and isinstance(to, T.StructType):
        return len(from_.fields) == len(to.fields) and all(
            can_cast(a.dataType, b.dataType) for a, b in zip(from_.fields, to.fields))
    # which source families each target family accepts (Spark's Cast.canCast, non-ANSI)
    everything_scalar = {"string", "boolean", "numeric", "integral", "date", "timestamp"}
    allowed = {
        "binary": {"string", "integral"},
        "boolean": everything_scalar,
        "numeric": everything_scalar,
        "integral": everything_scalar,
        "date": {"string", "date", "timestamp"},
        "timestamp": everything_scalar,
    }
    return src in allowed.get(dst, set())


def _family(t: T.DataType) -> str:
    if isinstance(t, T.StringType):
        return "string"
    if isinstance(t, T.BinaryType):
        return "binary"
    if isinstance(t, T.BooleanType):
        return "boolean"
    if isinstance(t, T.IntegralType):
        return "integral"
    if isinstance(t, T.NumericType):
        return "numeric"
    if isinstance(t, T.DateType):
        return "date"
    if isinstance(t, (T.TimestampType, T.TimestampNTZType)):
        return "timestamp"
    return t.typeName()


def cast_array(arr: Value, to: T.DataType, time_zone: str | None = None, source: T.DataType | None = None) -> Value:
    """CAST(arr AS to) as Spark evaluates it in the query's ANSI mode; scalars stay scalars.

    `time_zone` is the session's, for a cast between an instant (TIMESTAMP) and a wall-clock time (a string,
    DATE, TIMESTAMP_NTZ), None for UTC; `source` is the Spark type of `arr` where its Arrow type does not say
    (an instant and a wall-clock time share a layout).
    """
    if isinstance(arr, pa.Scalar):
        return cast_array(pa.array([arr.as_py()], arr.type), to, time_zone, source)[0]
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    src = T.from_arrow(arr.type)
    if pa.types.is_timestamp(arr.type) and isinstance(source, T.TimestampNTZType):
        src = source
    if pa.types.is_timestamp(arr.type) and arr.type != pa.timestamp("us"):
        arr = arr.cast(pa.timestamp(arr.type.unit)).cast(pa.timestamp("us"))
    if time_zone not in (None, "UTC") and isinstance(src, T.TimestampType) != isinstance(to, T.TimestampType):
        return _cast_in_zone(arr, src, to, time_zone)
    if src == to and arr.type == to.to_arrow():
        return arr
    if not can_cast(src, to):
        raise AnalysisException(
            f"cannot cast {src.simpleString()} to {to.simpleString()}; "
            f"{src.simpleString()} casts to {', '.join(_targets(src))}"
        )
    if isinstance(src, T.NullType) or arr.null_count == len(arr):
        return pa.nulls(len(arr), to.to_arrow())
    out = _cast(arr, src, to)
    if ansi_enabled():
        _check_ansi(arr, src, to, out)
    elif try_mode() and isinstance(to, T.IntegralType):
        outside = _outside_integral_range(arr, src, to)
        if outside is not None and pc.any(outside).as_py():
            out = pc.if_else(outside, pa.scalar(None, out.type), out)
    return out


def _check_ansi(arr: pa.Array, src: T.DataType, to: T.DataType, out: pa.Array) -> None:
    """Under ANSI mode, raise Spark's error for the first value the cast could not keep: a malformed string
    (CAST_INVALID_INPUT), an integer out of its target's range (CAST_OVERFLOW), a number with more digits
    than its decimal target (NUMERIC_VALUE_OUT_OF_RANGE). Nested types are checked as their leaves are cast."""
    if isinstance(to, (T.ArrayType, T.MapType, T.StructType)) or out.null_count == arr.null_count:
        if isinstance(to, T.IntegralType) and not isinstance(src, (T.StringType, T.BooleanType)):
            _check_integral_range(arr, src, to)
        return
    lost = pc.and_(pc.is_valid(arr), pc.is_null(out))
    if not pc.any(lost).as_py():
        if isinstance(to, T.IntegralType) and not isinstance(src, (T.StringType, T.BooleanType)):
            _check_integral_range(arr, src, to)
        return
    first = arr.filter(lost)[0]
    if isinstance(src, T.StringType):
        raise cast_invalid_input(first.as_py(), "STRING", _type_name(to))
    if isinstance(to, T.DecimalType):
        raise numeric_value_out_of_range(_spark_text(first, src), to.precision, to.scale)
    raise cast_overflow(_spark_literal(first, src), _type_name(src), _type_name(to))


def _check_integral_range(arr: pa.Array, src: T.DataType, to: T.DataType) -> None:
    """CAST_OVERFLOW for the first number outside the integral target's range (Spark's ANSI cast does not
    wrap or saturate); NaN and infinities overflow too."""
    outside = _outside_integral_range(arr, src, to)
    if outside is not None and pc.any(outside).as_py():
        first = arr.filter(outside)[0]
        raise cast_overflow(_spark_literal(first, src), _type_name(src), _type_name(to))


def _outside_integral_range(arr: pa.Array, src: T.DataType, to: T.DataType) -> pa.Array | None:
    """Per row, whether a number is outside the integral type `to` (NaN and infinities are); None for a
    source that is no number."""
    low, high = -_INT_BOUNDS[type(to)], _INT_BOUNDS[type(to)] - 1
    if isinstance(src, (T.FloatType, T.DoubleType)):
        values = arr.cast(pa.float64())
        outside = pc.or_kleene(pc.is_nan(values), pc.or_(pc.less_equal(values, float(low) - 1.0),
                                                            pc.greater_equal(values, float(high) + 1.0)))
    elif isinstance(src, (T.IntegralType, T.DecimalType)):
        wide = arr.cast(pa.decimal256(76, src.scale if isinstance(src, T.DecimalType) else 0))
        truncated = pc.trunc(wide) if isinstance(src, T.DecimalType) else wide
        outside = pc.or_(pc.less(truncated, pa.scalar(Decimal(low), wide.type)),
                         pc.greater(truncated, pa.scalar(Decimal(high), wide.type)))
    else:
        return None
    return pc.fill_null(outside, False)


def _type_name(t: T.DataType) -> str:
    """The type as Spark's error messages name it: INT, BIGINT, DECIMAL(10,2), TIMESTAMP."""
    return t.simpleString().upper()


def _spark_text(value: pa.Scalar, t: T.DataType) -> str:
    """A number as Spark prints it in NUMERIC_VALUE_OUT_OF_RANGE: 12345.678, 1.0E20."""
    if isinstance(t, (T.FloatType, T.DoubleType)):
        return java_double_string(pa.array([value.as_py()], pa.float64()))[0].as_py()
    return str(value.as_py())


def _spark_literal(value: pa.Scalar, t: T.DataType) -> str:
    """A number as Spark writes it in CAST_OVERFLOW, with its SQL literal suffix: 3000000000L, 1.0E20D, 128."""
    suffix = {T.LongType: "L", T.ShortType: "S", T.ByteType: "Y", T.DoubleType: "D", T.FloatType: "F",
              T.DecimalType: "BD"}.get(type(t), "")
    return _spark_text(value, t) + suffix


def _targets(src: T.DataType) -> list[str]:
    candidates = [T.StringType(), T.BooleanType(), T.IntegerType(), T.LongType(), T.DoubleType(),
                  T.DecimalType(10, 0), T.DateType(), T.TimestampType(), T.BinaryType()]
    return [c.simpleString() for c in candidates if can_cast(src, c)]


def _cast_in_zone(arr: pa.Array, src: T.DataType, to: T.DataType, zone: str) -> Value:
    """CAST between an instant and anything else, through the instant's wall-clock time in `zone` where the other
    side is one (a string, DATE, TIMESTAMP_NTZ); the rest as `cast_array` casts them."""
    if isinstance(src, T.TimestampType) and isinstance(to, (T.StringType, T.DateType, T.TimestampNTZType)):
        return cast_array(utc_to_local(arr, zone), to, source=T.TimestampNTZType())
    if isinstance(to, T.TimestampType) and isinstance(src, (T.DateType, T.TimestampNTZType)):
        return local_to_utc(cast_array(arr, T.TimestampNTZType(), source=src), zone)
    if isinstance(to, T.TimestampType) and isinstance(src, T.StringType):
        parsed = dt.parse_timestamp(arr.cast(pa.string()), default_zone=zone)
        if ansi_enabled() and not try_mode():
            _check_ansi(arr, src, to, parsed)
        return parsed
    return cast_array(arr, to, source=src)


def _cast(arr: pa.Array, src: T.DataType, to: T.DataType) -> pa.Array:
    if isinstance(to, T.StringType):
        return to_string(arr, src)
    if isinstance(src, T.StringType):
        return _from_string(arr, to)
    if isinstance(to, T.BooleanType):
        return _to_boolean(arr, src)
    if isinstance(to, T.NumericType):
        return _to_numeric(arr, src, to)
    if isinstance(to, T.DateType):
        if isinstance(src, (T.TimestampType, T.TimestampNTZType)):
            return arr.cast(pa.timestamp("us")).cast(pa.date32())
        return arr.cast(pa.date32())
    if isinstance(to, (T.TimestampType, T.TimestampNTZType)):
        return _to_timestamp(arr, src)
    if isinstance(to, T.BinaryType):
        return _integral_to_binary(arr, src)
    if isinstance(to, T.ArrayType):
        return _rebuild_list(arr, cast_array(_list_values(arr), to.elementType), to)
    if isinstance(to, T.MapType):
        entries = _list_values(arr)
        keys = cast_array(entries.field(0), to.keyType)
        items = cast_array(entries.field(1), to.valueType)
        offsets = pc.subtract(arr.offsets, arr.offsets[0])
        return pa.MapArray.from_arrays(offsets, keys, items, type=to.to_arrow(), mask=arr.is_null())
    if isinstance(to, T.StructType):
        fields = [cast_array(arr.field(i), f.dataType) for i, f in enumerate(to.fields)]
        return pa.StructArray.from_arrays(fields, fields=[f.to_arrow_field() for f in to.fields], mask=arr.is_null())
    raise AnalysisException(f"cannot cast {src.simpleString()} to {to.simpleString()}")


def _list_values(arr: pa.ListArray) -> pa.Array:
    """The values a (possibly sliced) list or map array spans, including any behind null slots,
    so that they line up with its rebased offsets."""
    start = arr.offsets[0].as_py()
    return arr.values.slice(start, arr.offsets[-1].as_py() - start)


def _rebuild_list(arr: pa.ListArray, values: pa.Array, to: T.DataType) -> pa.Array:
    offsets = pc.subtract(arr.offsets, arr.offsets[0])
    return pa.ListArray.from_arrays(offsets, values, type=to.to_arrow(), mask=arr.is_null())


# ---------------------------------------------------------------- to string

def to_string(arr: pa.Array, src: T.DataType) -> pa.Array:
    """Spark's text for each value: 'true', '1.0E20', '2024-01-05 10:00:00.5', '[1, null]'."""
    if isinstance(src, T.StringType):
        return arr.cast(pa.string())
    if isinstance(src, T.BooleanType):
        return pc.if_else(arr, "true", "false")
    if isinstance(src, (T.FloatType, T.DoubleType)):
        return java_double_string(arr)
    if isinstance(src, T.NumericType):
        return arr.cast(pa.string())
    if isinstance(src, T.DateType):
        return _date_string(arr)
    if isinstance(src, (T.TimestampType, T.TimestampNTZType)):
        return _timestamp_string(arr.cast(pa.timestamp("us")))
    if isinstance(src, T.BinaryType):
        return _decode_utf8(arr)
    if isinstance(src, T.ArrayType):
        items = _null_word(to_string(_list_values(arr), src.elementType))
        joined = pc.binary_join(_rebuild_list(arr, items, T.ArrayType(T.StringType())), ", ")
        return pc.binary_join_element_wise("[", joined, "]", "")
    if isinstance(src, T.MapType):
        entries = _list_values(arr)
        keys = to_string(entries.field(0), src.keyType)
        items = _null_word(to_string(entries.field(1), src.valueType))
        pairs = pc.binary_join_element_wise(keys, items, " -> ")
        joined = pc.binary_join(_rebuild_list(arr, pairs, T.ArrayType(T.StringType())), ", ")
        return pc.binary_join_element_wise("{", joined, "}", "")
    if isinstance(src, T.StructType):
        if not src.fields:
            return pc.if_else(pc.is_valid(arr), "{}", pa.scalar(None, pa.string()))
        parts = [_null_word(to_string(arr.field(i), f.dataType)) for i, f in enumerate(src.fields)]
        joined = pc.binary_join_element_wise(*parts, ", ")
        text = pc.binary_join_element_wise("{", joined, "}", "")
        return pc.if_else(pc.is_valid(arr), text, pa.scalar(None, pa.string()))
    raise AnalysisException(f"cannot cast {src.simpleString()} to string")


def _null_word(text: pa.Array) -> pa.Array:
    return pc.fill_null(text, "null")


def _date_string(arr: pa.Array) -> pa.Array:
    text = arr.cast(pa.string())
    # java.time prints years past 9999 with an explicit sign
    return pc.replace_substring_regex(text, r"^(\d{5,})", r"+\1")


def _timestamp_string(ts: pa.Array) -> pa.Array:
    """'2024-01-05 10:00:00', with the fraction of a second only as long as it needs ('.5', '.123456')."""
    # Arrow's strftime is several times slower than printing the fields separately
    text = dt.format_with_pattern(ts, "yyyy-MM-dd HH:mm:ss", "cast")
    micros = pc.add(pc.multiply(pc.millisecond(ts), 1000), pc.microsecond(ts))
    fraction = pc.utf8_rtrim(pc.utf8_lpad(pc.cast(micros, pa.string()), 6, "0"), "0")
    return pc.if_else(pc.equal(micros, 0), text, pc.binary_join_element_wise(text, ".", fraction, ""))


def _decode_utf8(arr: pa.Array) -> pa.Array:
    text = arr.cast(pa.binary()).cast(pa.string(), safe=False)
    try:
        text.validate(full=True)
        return text
    except pa.ArrowInvalid:
        # Arrow has no lenient UTF-8 decoder; only invalid input takes this per-row path,
        # which replaces bad bytes with U+FFFD as Java's decoder does.
        return pa.array([None if b is None else b.decode("utf-8", "replace") for b in arr.to_pylist()], pa.string())


def java_double_string(arr: pa.Array) -> pa.Array:
    """Java's Double.toString / Float.toString for a float array: 1.0, 1.0E20, 9.99E-4, NaN, -Infinity.

    Arrow's float->string cast already yields the shortest round-trip digits, printed plain
    for magnitudes in [1e-6, 1e21); this re-lays them out as Java does: plain in
    [1e-3, 1e7) with at least one decimal, d.dddE<n> elsewhere.
    """
    text = arr.cast(pa.string())
    magnitude = pc.abs(arr.cast(pa.float64()))
    out = pc.if_else(pc.match_substring(text, "."), text, pc.binary_join_element_wise(text, ".0", ""))
    scientific = pc.fill_null(pc.and_(pc.is_finite(magnitude), pc.or_(
        pc.greater_equal(magnitude, 1e7), pc.and_(pc.less(magnitude, 1e-3), pc.greater(magnitude, 0.0)))), False)
    if pc.any(scientific).as_py():
        out = pc.replace_with_mask(out, scientific, _scientific(text.filter(scientific)))
    significant_bits = 24 if pa.types.is_float32(arr.type) else 53
    exact = pc.fill_null(pc.and_(pc.greater_equal(magnitude, float(2 ** significant_bits)),
                                 pc.less(magnitude, float(2 ** 63))), False)
    if pc.any(exact).as_py():
        out = pc.replace_with_mask(out, exact, _java_integer_digits(arr.filter(exact), significant_bits))
    zero = pc.if_else(pc.starts_with(text, "-"), "-0.0", "0.0")
    out = pc.if_else(pc.equal(magnitude, 0.0), zero, out)
    special = pc.if_else(pc.is_nan(arr), "NaN", pc.if_else(pc.greater(arr, 0), "Infinity", "-Infinity"))
    return pc.if_else(pc.is_finite(arr), out, special)


# FloatingDecimal.insignificantDigitsNumber: decimal digits below the precision of 2^p2
_INSIGNIFICANT_DIGITS = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7,
                                  8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14,
                                  14, 15, 15, 15, 15, 16, 16, 16, 17, 17, 17, 18, 18, 18, 19])


def _java_integer_digits(values: pa.Array, significant_bits: int) -> pa.Array:
    """Java 17's text for integral floats in [2^precision, 2^63): the integer's exact digits.

    FloatingDecimal prints such values from their long value, dropping only the digits
    below the float's precision (float 123456792 -> '1.23456792E8', where the shortest
    round-trip text would be '1.2345679E8'); Spark on Java 17 shows exactly this.
    """
    x = values.cast(pa.float64()).to_numpy(zero_copy_only=False)
    negative = np.signbit(x)
    magnitude = np.abs(x).astype(np.uint64)
    binary_exponent = np.frexp(np.abs(x))[1] - 1
    p2 = binary_exponent - significant_bits - 1
    dropped = np.where(p2 > 1, _INSIGNIFICANT_DIGITS[np.clip(p2, 0, len(_INSIGNIFICANT_DIGITS) - 1)], 0)
    scale = (np.uint64(10) ** dropped.astype(np.uint64))
    kept = magnitude // scale + (magnitude % scale >= scale // np.uint64(2)) * (dropped > 0)
    digits = pa.array(kept.astype(np.uint64)).cast(pa.string())
    exponent = pc.add(pc.subtract(pc.utf8_length(digits), 1), pa.array(dropped.astype(np.int32)))
    significant = pc.utf8_rtrim(digits, "0")
    tail = pc.utf8_slice_codeunits(significant, 1, None)
    return pc.binary_join_element_wise(
        pa.array(np.where(negative, "-", "")), pc.utf8_slice_codeunits(significant, 0, 1), ".",
        pc.if_else(pc.equal(tail, ""), "0", tail), "E", pc.cast(exponent, pa.string()), "")


def _scientific(text: pa.Array) -> pa.Array:
    """Arrow's shortest text ('1e+20', '12345678.9', '0.000999') as Java's d.dddE<n>."""
    parts = pc.extract_regex(text, r"^(?P<neg>-?)(?P<int>\d+)(?:\.(?P<frac>\d+))?(?:e(?P<exp>[-+]\d+))?$")
    neg, whole, frac, exp = (parts.field(n) for n in ("neg", "int", "frac", "exp"))
    digits = pc.utf8_rtrim(pc.utf8_ltrim(pc.binary_join_element_wise(whole, frac, ""), "0"), "0")
    zeros_after_point = pc.subtract(pc.utf8_length(frac), pc.utf8_length(pc.utf8_ltrim(frac, "0")))
    plain_exponent = pc.if_else(pc.equal(whole, "0"), pc.negate(pc.add(zeros_after_point, 1)),
                                pc.subtract(pc.utf8_length(whole), 1))
    arrow_exponent = pc.cast(pc.utf8_ltrim(pc.if_else(pc.equal(exp, ""), "0", exp), "+"), pa.int32())
    exponent = pc.if_else(pc.equal(exp, ""), plain_exponent.cast(pa.int32()), arrow_exponent)
    tail = pc.utf8_slice_codeunits(digits, 1, None)
    return pc.binary_join_element_wise(
        neg, pc.utf8_slice_codeunits(digits, 0, 1), ".", pc.if_else(pc.equal(tail, ""), "0", tail), "E",
        pc.cast(exponent, pa.string()), "")


# ---------------------------------------------------------------- from string

def _from_string(arr: pa.Array, to: T.DataType) -> pa.Array:
    text = arr.cast(pa.string())
    if isinstance(to, T.BooleanType):
        word = pc.utf8_lower(dt.trim_spaces(text))
        true = pc.is_in(word, value_set=pa.array(_TRUE_WORDS))
        false = pc.is_in(word, value_set=pa.array(_FALSE_WORDS))
        return pc.if_else(true, True, pc.if_else(false, False, pa.scalar(None, pa.bool_())))
    if isinstance(to, T.IntegralType):
        return _parse_integral(text, to)
    if isinstance(to, (T.FloatType, T.DoubleType)):
        return parse_double(text).cast(to.to_arrow())
    if isinstance(to, T.DecimalType):
        return _parse_decimal(text, to)
    if isinstance(to, T.DateType):
        return dt.parse_date(text)
    if isinstance(to, (T.TimestampType, T.TimestampNTZType)):
        return dt.parse_timestamp(text)
    if isinstance(to, T.BinaryType):
        return text.cast(pa.binary())
    raise AnalysisException(f"cannot cast string to {to.simpleString()}")


def _parse_integral(text: pa.Array, to: T.DataType) -> pa.Array:
    """Spark's UTF8String.toInt/toLong: optional sign, digits, an ignored '.digits' tail; overflow -> null."""
    parts = pc.extract_regex(dt.trim_spaces(text), r"^(?P<sign>[+-]?)(?P<body>(?P<int>\d*)(?:\.\d*)?)$")
    whole = pc.utf8_ltrim(parts.field("int"), "0")
    # Spark takes '.' as 0 but a bare sign as nothing
    fits = pc.and_(pc.not_equal(parts.field("body"), ""), pc.less_equal(pc.utf8_length(whole), 19))
    digits = pc.if_else(pc.equal(whole, ""), "0", whole)
    magnitude = pc.cast(pc.if_else(fits, digits, pa.scalar(None, pa.string())), pa.uint64())
    negative = pc.equal(parts.field("sign"), "-").to_numpy(zero_copy_only=False)
    valid = pc.fill_null(pc.is_valid(magnitude), False).to_numpy(zero_copy_only=False)
    values = pc.fill_null(magnitude, 0).to_numpy(zero_copy_only=False)
    bound = np.uint64(_INT_BOUNDS[type(to)])
    valid &= np.where(negative, values <= bound, values < bound)
    signed = np.where(negative, (~values + np.uint64(1)), values).view(np.int64)
    return pa.array(signed.astype(_NUMPY_INT[type(to)]), to.to_arrow(), mask=~valid)


_JAVA_DOUBLE = r"^[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?)$"


def parse_double(text: pa.Array) -> pa.Array:
    """Java's Double.parseDouble plus Spark's 'inf'/'nan' spellings; anything else is null.

    Hexadecimal floating literals ('0x1p3'), which Java also accepts, are not parsed.
    """
    trimmed = dt.trim_spaces(text)
    lower = pc.utf8_lower(trimmed)
    java = pc.fill_null(pc.match_substring_regex(trimmed, _JAVA_DOUBLE), False)
    body = pc.replace_substring_regex(trimmed, r"[fFdD]$", "")
    body = pc.replace_substring_regex(body, r"Infinity$", "inf")
    number = pc.cast(pc.if_else(java, body, pa.scalar(None, pa.string())), pa.float64())
    inf = pc.is_in(lower, value_set=pa.array(["inf", "+inf", "infinity", "+infinity"]))
    minus_inf = pc.is_in(lower, value_set=pa.array(["-inf", "-infinity"]))
    nan = pc.equal(lower, "nan")
    out = pc.if_else(inf, float("inf"), pc.if_else(minus_inf, float("-inf"), pc.if_else(nan, float("nan"), number)))
    return out


def _parse_decimal(text: pa.Array, to: T.DecimalType) -> pa.Array:
    """Java BigDecimal text rounded HALF_UP to the target scale; unparsable or overflowing -> null."""
    trimmed = dt.trim_spaces(text)
    ok = pc.fill_null(pc.match_substring_regex(trimmed, r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$"), False)
    # anything a float says is over 10^(p-s+1) certainly overflows; dropping it keeps the
    # exact path below inside Decimal256's range
    approx = pc.abs(pc.cast(pc.if_else(ok, trimmed, pa.scalar(None, pa.string())), pa.float64()))
    ok = pc.and_(ok, pc.less(approx, 10.0 ** (to.precision - to.scale + 1)))
    kept = pc.if_else(ok, trimmed, pa.scalar(None, pa.string()))
    # HALF_UP only looks at the first dropped digit, so truncating to scale+1 first is exact
    wide = pc.cast(kept, pa.decimal256(to.precision + 2, to.scale + 1), safe=False)
    return round_decimal(wide, to, "half_towards_infinity")


def round_decimal(arr: pa.Array, to: T.DecimalType, mode: str) -> pa.Array:
    """A decimal array rounded to `to`'s scale with Arrow round mode `mode`; values over its precision -> null."""
    src = arr.type
    # one integral digit more than either side, so that rounding up (999.99 -> 1000.0) cannot
    # overflow inside Arrow, which would wrap silently
    whole = max(src.precision - src.scale, to.precision - to.scale) + 1
    wide = arr.cast(pa.decimal256(min(76, whole + src.scale), src.scale))
    if to.scale < src.scale:
        wide = pc.round(wide, ndigits=to.scale, round_mode=mode)
    limit = pa.scalar(Decimal(10) ** (to.precision - to.scale), wide.type)
    kept = pc.if_else(pc.less(pc.abs(wide), limit), wide, pa.scalar(None, wide.type))
    return kept.cast(to.to_arrow(), safe=False)


# ---------------------------------------------------------------- numeric and boolean

def _to_boolean(arr: pa.Array, src: T.DataType) -> pa.Array:
    if isinstance(src, T.DateType):
        return pa.nulls(len(arr), pa.bool_())
    if isinstance(src, (T.TimestampType, T.TimestampNTZType)):
        return pc.not_equal(arr.cast(pa.int64()), 0)
    zero = Decimal(0) if isinstance(src, T.DecimalType) else 0
    return pc.not_equal(arr, pa.scalar(zero, arr.type))


def _to_numeric(arr: pa.Array, src: T.DataType, to: T.DataType) -> pa.Array:
    if isinstance(src, T.DateType):
        return pa.nulls(len(arr), to.to_arrow())
    if isinstance(src, T.BooleanType):
        return _to_numeric(arr.cast(pa.int8()), T.ByteType(), to)
    if isinstance(src, (T.TimestampType, T.TimestampNTZType)):
        return _timestamp_to_numeric(arr, to)
    if isinstance(to, T.DecimalType):
        return _to_decimal(arr, src, to)
    if isinstance(to, T.IntegralType):
        return _to_integral(arr, src, to)
    if isinstance(src, T.DecimalType):
        exact = _decimal_to_double(arr) if isinstance(to, T.DoubleType) else None
        if exact is not None:
            return exact
        # Arrow's decimal->float is not correctly rounded (2.55 -> 2.5500000000000003); text is
        return arr.cast(pa.string()).cast(pa.float64()).cast(to.to_arrow())
    return arr.cast(to.to_arrow(), safe=False)


def _decimal_to_double(arr: pa.Array) -> pa.Array | None:
    """Decimals as correctly rounded doubles where every unscaled value is below 2**53: it and the
    power of ten are then exact doubles, and IEEE division rounds their quotient correctly, as
    Java's BigDecimal.doubleValue does. None otherwise (the caller goes through text)."""
    scale = arr.type.scale
    unscaled = unscaled_int64(arr) if pa.types.is_decimal128(arr.type) and 0 <= scale <= 22 else None
    if unscaled is None or unscaled[1] >= 2**53:
        return None
    values = unscaled[0].astype(np.float64) / 10.0**scale
    return pa.array(values, pa.float64(), mask=_null_mask(arr))


def _to_integral(arr: pa.Array, src: T.DataType, to: T.DataType) -> pa.Array:
    """Integers wrap (Java's narrowing); floats truncate, NaN -> 0, and saturate at int/long first."""
    np_type = _NUMPY_INT[type(to)]
    if isinstance(src, T.IntegralType):
        values = arr.cast(pa.int64()).fill_null(0).to_numpy()
        return pa.array(values.astype(np_type), to.to_arrow(), mask=_null_mask(arr))
    if isinstance(src, T.DecimalType):
        as_long = pc.cast(arr, pa.int64(), safe=False)
        return _to_integral(as_long, T.LongType(), to)
    values = arr.cast(pa.float64()).fill_null(0).to_numpy()
    values = np.nan_to_num(np.trunc(values), nan=0.0)
    wide = T.LongType if isinstance(to, T.LongType) else T.IntegerType
    bound = float(_INT_BOUNDS[wide])
    inside = np.where((values < bound) & (values > -bound), values, 0.0).astype(np.int64)
    limits = np.iinfo(_NUMPY_INT[wide])
    as_int = np.where(values >= bound, limits.max, np.where(values <= -bound, limits.min, inside))
    return pa.array(as_int.astype(np.int64).astype(np_type), to.to_arrow(), mask=_null_mask(arr))


def _null_mask(arr: pa.Array) -> np.ndarray | None:
    return arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None


def _to_decimal(arr: pa.Array, src: T.DataType, to: T.DecimalType) -> pa.Array:
    if isinstance(src, T.DecimalType):
        return round_decimal(arr, to, "half_towards_infinity")
    if isinstance(src, T.IntegralType):
        return round_decimal(arr.cast(pa.decimal128(20, 0)), to, "half_towards_infinity")
    # Spark goes through the double's shortest decimal text (2.675 -> 2.68, not 2.67)
    text = java_double_string(arr.cast(pa.float64()))
    return _parse_decimal(text, to)


def _timestamp_to_numeric(arr: pa.Array, to: T.DataType) -> pa.Array:
    micros = arr.cast(pa.int64())
    if isinstance(to, (T.FloatType, T.DoubleType)):
        return pc.divide(micros.cast(pa.float64()), 1e6).cast(to.to_arrow())
    if isinstance(to, T.DecimalType):
        seconds = _rescale(micros.cast(pa.decimal128(38, 0)), 6)
        return round_decimal(seconds, to, "half_towards_infinity")
    values = micros.fill_null(0).to_numpy()
    seconds = np.floor_divide(values, 1_000_000)
    mask = arr.is_null().to_numpy(zero_copy_only=False)
    if not isinstance(to, T.LongType):
        bound = _INT_BOUNDS[type(to)]
        mask = mask | (seconds >= bound) | (seconds < -bound)
    return pa.array(seconds.astype(_NUMPY_INT[type(to)]), to.to_arrow(), mask=mask)


def _to_timestamp(arr: pa.Array, src: T.DataType) -> pa.Array:
    if isinstance(src, T.DateType):
        return arr.cast(pa.timestamp("us"))
    if isinstance(src, (T.TimestampType, T.TimestampNTZType)):
        return arr.cast(pa.timestamp("us"))
    if isinstance(src, T.BooleanType):
        return arr.cast(pa.int64()).cast(pa.timestamp("us"))
    if isinstance(src, T.DecimalType):
        if src.scale < 6:
            arr = arr.cast(pa.decimal128(min(38, src.precision + 6 - src.scale), 6))
        micros = _rescale(arr, arr.type.scale - 6)
        return pc.cast(micros, pa.int64(), safe=False).cast(pa.timestamp("us"))
    if isinstance(src, T.IntegralType):
        seconds = arr.cast(pa.int64()).fill_null(0).to_numpy()
        limit = np.iinfo(np.int64).max // 1_000_000
        micros = np.clip(seconds, -limit, limit) * 1_000_000
        return pa.array(micros, pa.timestamp("us"), mask=_null_mask(arr))
    seconds = arr.cast(pa.float64())
    micros = _to_integral(pc.multiply(seconds, 1e6), T.DoubleType(), T.LongType())
    return _mask_null_where(micros, pc.invert(pc.is_finite(seconds))).cast(pa.timestamp("us"))


def _mask_null_where(values: pa.Array, condition: pa.Array) -> pa.Array:
    return pc.if_else(pc.fill_null(condition, False), pa.scalar(None, values.type), values)


def _rescale(arr: pa.Array, scale: int) -> pa.Array:
    """The same unscaled integers read at another scale: multiplies by 10^(old - new) without arithmetic."""
    return pa.Array.from_buffers(pa.decimal128(arr.type.precision, scale), len(arr), arr.buffers(), arr.null_count,
                                 arr.offset)


def _integral_to_binary(arr: pa.Array, src: T.DataType) -> pa.Array:
    """Big-endian two's complement bytes of the value's own width, as Spark's cast does."""
    np_type = _NUMPY_INT[type(src)]
    values = arr.fill_null(0).to_numpy().astype(np_type).astype(np.dtype(np_type).newbyteorder(">"))
    width = values.dtype.itemsize
    data = pa.py_buffer(values.tobytes())
    fixed = pa.Array.from_buffers(pa.binary(width), len(arr), [None, data])
    return pc.if_else(arr.is_valid(), fixed.cast(pa.binary()), pa.scalar(None, pa.binary()))
