//! Generated from the function registry (`kiln::expr::registry`) by the test
//! `functions::tests::generated_helpers_match_the_registry` (`KILN_BLESS=1` rewrites it).

use super::{call, Column};

/// `acos(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn acos(c: Column) -> Column {
    call("acos", vec![c], false)
}

/// `acosh(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn acosh(c: Column) -> Column {
    call("acosh", vec![c], false)
}

/// `any(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn any(c: Column) -> Column {
    call("any", vec![c], false)
}

/// `approx_count_distinct(1 to 2 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn approx_count_distinct(args: impl IntoIterator<Item = Column>) -> Column {
    call("approx_count_distinct", args.into_iter().collect(), false)
}

/// `approx_percentile(2 to 3 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn approx_percentile(args: impl IntoIterator<Item = Column>) -> Column {
    call("approx_percentile", args.into_iter().collect(), false)
}

/// `array_agg(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn array_agg(c: Column) -> Column {
    call("array_agg", vec![c], false)
}

/// `array_join(2 to 3 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn array_join(args: impl IntoIterator<Item = Column>) -> Column {
    call("array_join", args.into_iter().collect(), false)
}

/// `array_max(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn array_max(c: Column) -> Column {
    call("array_max", vec![c], false)
}

/// `array_min(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn array_min(c: Column) -> Column {
    call("array_min", vec![c], false)
}

/// `array_position(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn array_position(a: Column, b: Column) -> Column {
    call("array_position", vec![a, b], false)
}

/// `array_remove(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn array_remove(a: Column, b: Column) -> Column {
    call("array_remove", vec![a, b], false)
}

/// `array_repeat(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn array_repeat(a: Column, b: Column) -> Column {
    call("array_repeat", vec![a, b], false)
}

/// `array_sort(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn array_sort(c: Column) -> Column {
    call("array_sort", vec![c], false)
}

/// `asin(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn asin(c: Column) -> Column {
    call("asin", vec![c], false)
}

/// `asinh(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn asinh(c: Column) -> Column {
    call("asinh", vec![c], false)
}

/// `atan(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn atan(c: Column) -> Column {
    call("atan", vec![c], false)
}

/// `atan2(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn atan2(a: Column, b: Column) -> Column {
    call("atan2", vec![a, b], false)
}

/// `atanh(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn atanh(c: Column) -> Column {
    call("atanh", vec![c], false)
}

/// `bigint(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn bigint(c: Column) -> Column {
    call("bigint", vec![c], false)
}

/// `bin(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn bin(c: Column) -> Column {
    call("bin", vec![c], false)
}

/// `binary(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn binary(c: Column) -> Column {
    call("binary", vec![c], false)
}

/// `bit_and(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn bit_and(c: Column) -> Column {
    call("bit_and", vec![c], false)
}

/// `bit_count(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn bit_count(c: Column) -> Column {
    call("bit_count", vec![c], false)
}

/// `bit_get(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn bit_get(a: Column, b: Column) -> Column {
    call("bit_get", vec![a, b], false)
}

/// `bit_length(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn bit_length(c: Column) -> Column {
    call("bit_length", vec![c], false)
}

/// `bit_or(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn bit_or(c: Column) -> Column {
    call("bit_or", vec![c], false)
}

/// `bit_xor(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn bit_xor(c: Column) -> Column {
    call("bit_xor", vec![c], false)
}

/// `bool_and(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn bool_and(c: Column) -> Column {
    call("bool_and", vec![c], false)
}

/// `bool_or(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn bool_or(c: Column) -> Column {
    call("bool_or", vec![c], false)
}

/// `boolean(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn boolean(c: Column) -> Column {
    call("boolean", vec![c], false)
}

/// `bround(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn bround(a: Column, b: Column) -> Column {
    call("bround", vec![a, b], false)
}

/// `btrim(1 to 2 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn btrim(args: impl IntoIterator<Item = Column>) -> Column {
    call("btrim", args.into_iter().collect(), false)
}

/// `cbrt(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn cbrt(c: Column) -> Column {
    call("cbrt", vec![c], false)
}

/// `chr(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn chr(c: Column) -> Column {
    call("chr", vec![c], false)
}

/// `contains(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn contains(a: Column, b: Column) -> Column {
    call("contains", vec![a, b], false)
}

/// `conv(a, b, c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn conv(a: Column, b: Column, c: Column) -> Column {
    call("conv", vec![a, b, c], false)
}

/// `cos(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn cos(c: Column) -> Column {
    call("cos", vec![c], false)
}

/// `cosh(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn cosh(c: Column) -> Column {
    call("cosh", vec![c], false)
}

/// `cot(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn cot(c: Column) -> Column {
    call("cot", vec![c], false)
}

/// `covar_pop(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn covar_pop(a: Column, b: Column) -> Column {
    call("covar_pop", vec![a, b], false)
}

/// `covar_samp(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn covar_samp(a: Column, b: Column) -> Column {
    call("covar_samp", vec![a, b], false)
}

/// `crc32(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn crc32(c: Column) -> Column {
    call("crc32", vec![c], false)
}

/// `csc(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn csc(c: Column) -> Column {
    call("csc", vec![c], false)
}

/// `date(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn date(c: Column) -> Column {
    call("date", vec![c], false)
}

/// `date_from_unix_date(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn date_from_unix_date(c: Column) -> Column {
    call("date_from_unix_date", vec![c], false)
}

/// `day(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn day(c: Column) -> Column {
    call("day", vec![c], false)
}

/// `decimal(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn decimal(c: Column) -> Column {
    call("decimal", vec![c], false)
}

/// `decode(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn decode(a: Column, b: Column) -> Column {
    call("decode", vec![a, b], false)
}

/// `degrees(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn degrees(c: Column) -> Column {
    call("degrees", vec![c], false)
}

/// `double(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn double(c: Column) -> Column {
    call("double", vec![c], false)
}

/// `e()`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn e() -> Column {
    call("e", vec![], false)
}

/// `element_at(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn element_at(a: Column, b: Column) -> Column {
    call("element_at", vec![a, b], false)
}

/// `elt(2 or more arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn elt(args: impl IntoIterator<Item = Column>) -> Column {
    call("elt", args.into_iter().collect(), false)
}

/// `encode(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn encode(a: Column, b: Column) -> Column {
    call("encode", vec![a, b], false)
}

/// `endswith(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn endswith(a: Column, b: Column) -> Column {
    call("endswith", vec![a, b], false)
}

/// `every(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn every(c: Column) -> Column {
    call("every", vec![c], false)
}

/// `factorial(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn factorial(c: Column) -> Column {
    call("factorial", vec![c], false)
}

/// `find_in_set(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn find_in_set(a: Column, b: Column) -> Column {
    call("find_in_set", vec![a, b], false)
}

/// `first_value(1 to 2 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn first_value(args: impl IntoIterator<Item = Column>) -> Column {
    call("first_value", args.into_iter().collect(), false)
}

/// `float(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn float(c: Column) -> Column {
    call("float", vec![c], false)
}

/// `format_number(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn format_number(a: Column, b: Column) -> Column {
    call("format_number", vec![a, b], false)
}

/// `format_string(1 or more arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn format_string(args: impl IntoIterator<Item = Column>) -> Column {
    call("format_string", args.into_iter().collect(), false)
}

/// `from_csv(2 to 3 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn from_csv(args: impl IntoIterator<Item = Column>) -> Column {
    call("from_csv", args.into_iter().collect(), false)
}

/// `from_json(2 to 3 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn from_json(args: impl IntoIterator<Item = Column>) -> Column {
    call("from_json", args.into_iter().collect(), false)
}

/// `from_unixtime(1 to 2 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn from_unixtime(args: impl IntoIterator<Item = Column>) -> Column {
    call("from_unixtime", args.into_iter().collect(), false)
}

/// `from_utc_timestamp(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn from_utc_timestamp(a: Column, b: Column) -> Column {
    call("from_utc_timestamp", vec![a, b], false)
}

/// `get(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn get(a: Column, b: Column) -> Column {
    call("get", vec![a, b], false)
}

/// `get_json_object(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn get_json_object(a: Column, b: Column) -> Column {
    call("get_json_object", vec![a, b], false)
}

/// `hash(1 or more arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn hash(args: impl IntoIterator<Item = Column>) -> Column {
    call("hash", args.into_iter().collect(), false)
}

/// `histogram_numeric(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn histogram_numeric(a: Column, b: Column) -> Column {
    call("histogram_numeric", vec![a, b], false)
}

/// `inline(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn inline(c: Column) -> Column {
    call("inline", vec![c], false)
}

/// `inline_outer(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn inline_outer(c: Column) -> Column {
    call("inline_outer", vec![c], false)
}

/// `instr(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn instr(a: Column, b: Column) -> Column {
    call("instr", vec![a, b], false)
}

/// `int(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn int(c: Column) -> Column {
    call("int", vec![c], false)
}

/// `is_valid_utf8(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn is_valid_utf8(c: Column) -> Column {
    call("is_valid_utf8", vec![c], false)
}

/// `isnan(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn isnan(c: Column) -> Column {
    call("isnan", vec![c], false)
}

/// `json_tuple(2 or more arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn json_tuple(args: impl IntoIterator<Item = Column>) -> Column {
    call("json_tuple", args.into_iter().collect(), false)
}

/// `kurtosis(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn kurtosis(c: Column) -> Column {
    call("kurtosis", vec![c], false)
}

/// `last_value(1 to 2 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn last_value(args: impl IntoIterator<Item = Column>) -> Column {
    call("last_value", args.into_iter().collect(), false)
}

/// `left(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn left(a: Column, b: Column) -> Column {
    call("left", vec![a, b], false)
}

/// `levenshtein(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn levenshtein(a: Column, b: Column) -> Column {
    call("levenshtein", vec![a, b], false)
}

/// `listagg(1 to 2 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn listagg(args: impl IntoIterator<Item = Column>) -> Column {
    call("listagg", args.into_iter().collect(), false)
}

/// `localtimestamp()`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn localtimestamp() -> Column {
    call("localtimestamp", vec![], false)
}

/// `locate(2 to 3 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn locate(args: impl IntoIterator<Item = Column>) -> Column {
    call("locate", args.into_iter().collect(), false)
}

/// `log(1 to 2 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn log(args: impl IntoIterator<Item = Column>) -> Column {
    call("log", args.into_iter().collect(), false)
}

/// `log10(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn log10(c: Column) -> Column {
    call("log10", vec![c], false)
}

/// `log2(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn log2(c: Column) -> Column {
    call("log2", vec![c], false)
}

/// `luhn_check(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn luhn_check(c: Column) -> Column {
    call("luhn_check", vec![c], false)
}

/// `make_date(a, b, c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn make_date(a: Column, b: Column, c: Column) -> Column {
    call("make_date", vec![a, b, c], false)
}

/// `make_dt_interval(0 to 4 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn make_dt_interval(args: impl IntoIterator<Item = Column>) -> Column {
    call("make_dt_interval", args.into_iter().collect(), false)
}

/// `make_interval(0 to 7 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn make_interval(args: impl IntoIterator<Item = Column>) -> Column {
    call("make_interval", args.into_iter().collect(), false)
}

/// `make_timestamp(6 to 7 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn make_timestamp(args: impl IntoIterator<Item = Column>) -> Column {
    call("make_timestamp", args.into_iter().collect(), false)
}

/// `make_valid_utf8(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn make_valid_utf8(c: Column) -> Column {
    call("make_valid_utf8", vec![c], false)
}

/// `make_ym_interval(0 to 2 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn make_ym_interval(args: impl IntoIterator<Item = Column>) -> Column {
    call("make_ym_interval", args.into_iter().collect(), false)
}

/// `map(0 or more arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn map(args: impl IntoIterator<Item = Column>) -> Column {
    call("map", args.into_iter().collect(), false)
}

/// `map_concat(0 or more arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn map_concat(args: impl IntoIterator<Item = Column>) -> Column {
    call("map_concat", args.into_iter().collect(), false)
}

/// `map_contains_key(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn map_contains_key(a: Column, b: Column) -> Column {
    call("map_contains_key", vec![a, b], false)
}

/// `map_entries(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn map_entries(c: Column) -> Column {
    call("map_entries", vec![c], false)
}

/// `map_from_arrays(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn map_from_arrays(a: Column, b: Column) -> Column {
    call("map_from_arrays", vec![a, b], false)
}

/// `map_from_entries(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn map_from_entries(c: Column) -> Column {
    call("map_from_entries", vec![c], false)
}

/// `map_keys(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn map_keys(c: Column) -> Column {
    call("map_keys", vec![c], false)
}

/// `map_values(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn map_values(c: Column) -> Column {
    call("map_values", vec![c], false)
}

/// `mask(1 to 5 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn mask(args: impl IntoIterator<Item = Column>) -> Column {
    call("mask", args.into_iter().collect(), false)
}

/// `max_by(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn max_by(a: Column, b: Column) -> Column {
    call("max_by", vec![a, b], false)
}

/// `min_by(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn min_by(a: Column, b: Column) -> Column {
    call("min_by", vec![a, b], false)
}

/// `mode(1 to 2 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn mode(args: impl IntoIterator<Item = Column>) -> Column {
    call("mode", args.into_iter().collect(), false)
}

/// `months_between(2 to 3 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn months_between(args: impl IntoIterator<Item = Column>) -> Column {
    call("months_between", args.into_iter().collect(), false)
}

/// `named_struct(0 or more arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn named_struct(args: impl IntoIterator<Item = Column>) -> Column {
    call("named_struct", args.into_iter().collect(), false)
}

/// `nanvl(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn nanvl(a: Column, b: Column) -> Column {
    call("nanvl", vec![a, b], false)
}

/// `next_day(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn next_day(a: Column, b: Column) -> Column {
    call("next_day", vec![a, b], false)
}

/// `nth_value(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn nth_value(a: Column, b: Column) -> Column {
    call("nth_value", vec![a, b], false)
}

/// `octet_length(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn octet_length(c: Column) -> Column {
    call("octet_length", vec![c], false)
}

/// `overlay(3 to 4 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn overlay(args: impl IntoIterator<Item = Column>) -> Column {
    call("overlay", args.into_iter().collect(), false)
}

/// `parse_url(2 to 3 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn parse_url(args: impl IntoIterator<Item = Column>) -> Column {
    call("parse_url", args.into_iter().collect(), false)
}

/// `percentile(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn percentile(a: Column, b: Column) -> Column {
    call("percentile", vec![a, b], false)
}

/// `percentile_cont(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn percentile_cont(a: Column, b: Column) -> Column {
    call("percentile_cont", vec![a, b], false)
}

/// `percentile_disc(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn percentile_disc(a: Column, b: Column) -> Column {
    call("percentile_disc", vec![a, b], false)
}

/// `pi()`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn pi() -> Column {
    call("pi", vec![], false)
}

/// `power(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn power(a: Column, b: Column) -> Column {
    call("power", vec![a, b], false)
}

/// `radians(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn radians(c: Column) -> Column {
    call("radians", vec![c], false)
}

/// `regexp_count(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn regexp_count(a: Column, b: Column) -> Column {
    call("regexp_count", vec![a, b], false)
}

/// `regexp_extract_all(2 to 3 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn regexp_extract_all(args: impl IntoIterator<Item = Column>) -> Column {
    call("regexp_extract_all", args.into_iter().collect(), false)
}

/// `regexp_instr(2 to 3 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn regexp_instr(args: impl IntoIterator<Item = Column>) -> Column {
    call("regexp_instr", args.into_iter().collect(), false)
}

/// `regexp_substr(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn regexp_substr(a: Column, b: Column) -> Column {
    call("regexp_substr", vec![a, b], false)
}

/// `regr_intercept(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn regr_intercept(a: Column, b: Column) -> Column {
    call("regr_intercept", vec![a, b], false)
}

/// `regr_r2(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn regr_r2(a: Column, b: Column) -> Column {
    call("regr_r2", vec![a, b], false)
}

/// `regr_slope(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn regr_slope(a: Column, b: Column) -> Column {
    call("regr_slope", vec![a, b], false)
}

/// `regr_sxx(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn regr_sxx(a: Column, b: Column) -> Column {
    call("regr_sxx", vec![a, b], false)
}

/// `regr_sxy(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn regr_sxy(a: Column, b: Column) -> Column {
    call("regr_sxy", vec![a, b], false)
}

/// `regr_syy(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn regr_syy(a: Column, b: Column) -> Column {
    call("regr_syy", vec![a, b], false)
}

/// `repeat(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn repeat(a: Column, b: Column) -> Column {
    call("repeat", vec![a, b], false)
}

/// `right(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn right(a: Column, b: Column) -> Column {
    call("right", vec![a, b], false)
}

/// `rlike(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn rlike(a: Column, b: Column) -> Column {
    call("rlike", vec![a, b], false)
}

/// `sec(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn sec(c: Column) -> Column {
    call("sec", vec![c], false)
}

/// `sequence(2 to 3 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn sequence(args: impl IntoIterator<Item = Column>) -> Column {
    call("sequence", args.into_iter().collect(), false)
}

/// `sha2(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn sha2(a: Column, b: Column) -> Column {
    call("sha2", vec![a, b], false)
}

/// `shiftleft(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn shiftleft(a: Column, b: Column) -> Column {
    call("shiftleft", vec![a, b], false)
}

/// `shiftright(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn shiftright(a: Column, b: Column) -> Column {
    call("shiftright", vec![a, b], false)
}

/// `shiftrightunsigned(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn shiftrightunsigned(a: Column, b: Column) -> Column {
    call("shiftrightunsigned", vec![a, b], false)
}

/// `sin(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn sin(c: Column) -> Column {
    call("sin", vec![c], false)
}

/// `sinh(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn sinh(c: Column) -> Column {
    call("sinh", vec![c], false)
}

/// `skewness(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn skewness(c: Column) -> Column {
    call("skewness", vec![c], false)
}

/// `slice(a, b, c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn slice(a: Column, b: Column, c: Column) -> Column {
    call("slice", vec![a, b, c], false)
}

/// `smallint(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn smallint(c: Column) -> Column {
    call("smallint", vec![c], false)
}

/// `some(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn some(c: Column) -> Column {
    call("some", vec![c], false)
}

/// `sort_array(1 to 2 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn sort_array(args: impl IntoIterator<Item = Column>) -> Column {
    call("sort_array", args.into_iter().collect(), false)
}

/// `soundex(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn soundex(c: Column) -> Column {
    call("soundex", vec![c], false)
}

/// `space(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn space(c: Column) -> Column {
    call("space", vec![c], false)
}

/// `split_part(a, b, c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn split_part(a: Column, b: Column, c: Column) -> Column {
    call("split_part", vec![a, b, c], false)
}

/// `stack(2 or more arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn stack(args: impl IntoIterator<Item = Column>) -> Column {
    call("stack", args.into_iter().collect(), false)
}

/// `startswith(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn startswith(a: Column, b: Column) -> Column {
    call("startswith", vec![a, b], false)
}

/// `std(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn std(c: Column) -> Column {
    call("std", vec![c], false)
}

/// `str_to_map(1 to 3 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn str_to_map(args: impl IntoIterator<Item = Column>) -> Column {
    call("str_to_map", args.into_iter().collect(), false)
}

/// `string(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn string(c: Column) -> Column {
    call("string", vec![c], false)
}

/// `string_agg(1 to 2 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn string_agg(args: impl IntoIterator<Item = Column>) -> Column {
    call("string_agg", args.into_iter().collect(), false)
}

/// `struct(0 or more arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn r#struct(args: impl IntoIterator<Item = Column>) -> Column {
    call("struct", args.into_iter().collect(), false)
}

/// `substring_index(a, b, c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn substring_index(a: Column, b: Column, c: Column) -> Column {
    call("substring_index", vec![a, b, c], false)
}

/// `tan(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn tan(c: Column) -> Column {
    call("tan", vec![c], false)
}

/// `tanh(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn tanh(c: Column) -> Column {
    call("tanh", vec![c], false)
}

/// `timestamp(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn timestamp(c: Column) -> Column {
    call("timestamp", vec![c], false)
}

/// `timestamp_micros(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn timestamp_micros(c: Column) -> Column {
    call("timestamp_micros", vec![c], false)
}

/// `timestamp_millis(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn timestamp_millis(c: Column) -> Column {
    call("timestamp_millis", vec![c], false)
}

/// `timestamp_seconds(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn timestamp_seconds(c: Column) -> Column {
    call("timestamp_seconds", vec![c], false)
}

/// `timestampadd(a, b, c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn timestampadd(a: Column, b: Column, c: Column) -> Column {
    call("timestampadd", vec![a, b, c], false)
}

/// `timestampdiff(a, b, c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn timestampdiff(a: Column, b: Column, c: Column) -> Column {
    call("timestampdiff", vec![a, b, c], false)
}

/// `tinyint(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn tinyint(c: Column) -> Column {
    call("tinyint", vec![c], false)
}

/// `to_binary(1 to 2 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn to_binary(args: impl IntoIterator<Item = Column>) -> Column {
    call("to_binary", args.into_iter().collect(), false)
}

/// `to_char(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn to_char(a: Column, b: Column) -> Column {
    call("to_char", vec![a, b], false)
}

/// `to_number(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn to_number(a: Column, b: Column) -> Column {
    call("to_number", vec![a, b], false)
}

/// `to_utc_timestamp(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn to_utc_timestamp(a: Column, b: Column) -> Column {
    call("to_utc_timestamp", vec![a, b], false)
}

/// `translate(a, b, c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn translate(a: Column, b: Column, c: Column) -> Column {
    call("translate", vec![a, b, c], false)
}

/// `trunc(a, b)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn trunc(a: Column, b: Column) -> Column {
    call("trunc", vec![a, b], false)
}

/// `typeof(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn r#typeof(c: Column) -> Column {
    call("typeof", vec![c], false)
}

/// `unbase64(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn unbase64(c: Column) -> Column {
    call("unbase64", vec![c], false)
}

/// `unhex(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn unhex(c: Column) -> Column {
    call("unhex", vec![c], false)
}

/// `unix_date(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn unix_date(c: Column) -> Column {
    call("unix_date", vec![c], false)
}

/// `unix_micros(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn unix_micros(c: Column) -> Column {
    call("unix_micros", vec![c], false)
}

/// `unix_millis(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn unix_millis(c: Column) -> Column {
    call("unix_millis", vec![c], false)
}

/// `unix_seconds(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn unix_seconds(c: Column) -> Column {
    call("unix_seconds", vec![c], false)
}

/// `unix_timestamp(0 to 2 arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn unix_timestamp(args: impl IntoIterator<Item = Column>) -> Column {
    call("unix_timestamp", args.into_iter().collect(), false)
}

/// `url_decode(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn url_decode(c: Column) -> Column {
    call("url_decode", vec![c], false)
}

/// `url_encode(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn url_encode(c: Column) -> Column {
    call("url_encode", vec![c], false)
}

/// `uuid()`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn uuid() -> Column {
    call("uuid", vec![], false)
}

/// `validate_utf8(c)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn validate_utf8(c: Column) -> Column {
    call("validate_utf8", vec![c], false)
}

/// `width_bucket(a, b, c, d)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn width_bucket(a: Column, b: Column, c: Column, d: Column) -> Column {
    call("width_bucket", vec![a, b, c, d], false)
}

/// `xxhash64(1 or more arguments)`, the registry's function of that name (as [`super::call_function`] calls it).
pub fn xxhash64(args: impl IntoIterator<Item = Column>) -> Column {
    call("xxhash64", args.into_iter().collect(), false)
}
