//! More of Spark's scalar built-ins (issue 12): the try_ arithmetic, digests and hashes, hex /
//! base64 / bin / conv, and date, number and string helpers. Each is one `MoreFn`, reached
//! through `Builtin::More` (name, arity, casts, type and evaluation as the other builtins).
//! Functions that take BINARY in Spark read bytes (a string argument is cast to its UTF-8
//! bytes); unhex / unbase64 return BINARY.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Date32Array, Float64Array, Int32Array, Int64Array, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Date32Type, Decimal128Type, Float64Type, Int32Type, Int64Type, TimestampMicrosecondType};

use super::{BinaryOp, Builtin, Expr, ScalarFunc};
use super::builtins::sized_strings;
use crate::error::{KilnError, Result};
use crate::expr::eval::{bround_integral, half_even};
use crate::types::timestamp::{civil, from_civil, MICROS_PER_DAY};
use crate::types::time_zone::Zone;
use crate::types::ScalarValue;

/// The functions of this file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum MoreFn {
    /// try_add(a, b) and the others hold one argument, the operation `a op b`: it is
    /// evaluated as usual, and rows where it fails are NULL (Spark's TryEval).
    TryAdd, TrySubtract, TryMultiply, TryDivide, TryMod,
    /// try_to_timestamp, try_to_date, try_make_timestamp: one argument, the function call
    /// (to_timestamp, ...) whose failing rows are NULL, as the try_ arithmetic.
    TryToTimestamp, TryToDate, TryMakeTimestamp, TryMakeInterval,
    /// One argument, an operation evaluated with `spark.sql.ansi.enabled=false`: as usual,
    /// and rows where it fails get Spark's legacy value (`eval::legacy`). Printed as the
    /// operation; not callable by name.
    Legacy,
    Md5, Sha1, Sha2, Crc32, Hash, XxHash64, Hex, Unhex, Base64, Unbase64, Bin, Conv,
    UnixDate, DateFromUnixDate, UnixSeconds, UnixMillis, UnixMicros, TimestampSeconds, TimestampMillis, TimestampMicros,
    MakeDate, MakeTimestamp(Zone), MonthsBetween(Zone), Elt, LuhnCheck, Soundex, WidthBucket, Bround, FormatNumber, FormatString,
    /// (unit, n, timestamp) and (unit, start, end); the parser makes the unit a string.
    TimestampAdd(Zone), TimestampDiff(Zone),
    /// make_ym_interval(years, months), make_dt_interval(days, hours, mins, secs).
    MakeYmInterval, MakeDtInterval,
    /// make_interval(years, months, weeks, days, hours, mins, secs): a calendar interval.
    MakeInterval,
    /// sequence(start, stop[, step]) over integers, dates and timestamps (`expr::sequence`).
    Sequence(Zone),
    /// mask(s[, upperChar, lowerChar, digitChar, otherChar]): each a one-character literal or NULL (keep).
    Mask,
    /// to_number / try_to_number(s, fmt) and to_char / to_varchar(x, fmt) with Spark's number formats.
    ToNumber, TryToNumber, ToChar,
    /// overlay(s, replace, pos[, len]): `s` with `len` characters from `pos` (1-based; by default
    /// the replacement's length) replaced by `replace`, as Spark's Overlay.
    Overlay,
    /// (field, interval): `extract(field FROM i)` of an interval; made by the analyzer from
    /// year / month / day / hour / minute / second over an interval.
    ExtractInterval,
    /// (date, calendar interval): `date + make_interval(...)`, Spark's DateAddInterval; made by the
    /// analyzer, not callable by name.
    DateAddInterval,
    /// (end, start): `end - start` of two dates or two timestamps as a calendar interval, Spark's
    /// SubtractDates / SubtractTimestamps under `spark.sql.legacy.interval.enabled` (dates: the
    /// months and days of Java's Period.between; timestamps: microseconds); made by the analyzer.
    CalendarDifference,
    /// url_encode / url_decode / try_url_decode: Java's URLEncoder / URLDecoder in UTF-8.
    UrlEncode, UrlDecode, TryUrlDecode,
    /// isnan(x): never NULL (NULL is false).
    IsNan,
    /// (pattern, escape): `pattern` of `LIKE pattern ESCAPE 'c'` rewritten with kiln's `\`
    /// escape; made by the parser, not callable by name.
    LikeEscape,
    /// next_day(date, dayOfWeek): the first later date on that day (`MO`, `Mon`, `Monday`).
    NextDay,
    /// bit_get / getbit(x, pos): bit `pos` of an integral value, as a tinyint.
    BitGet,
    /// to_binary / try_to_binary(str[, fmt]): `fmt` hex (the default), utf-8 / utf8 or base64.
    ToBinary, TryToBinary,
    /// encode(str, charset) / decode(bin, charset) over the charsets of `codecs::CHARSETS`.
    Encode, Decode,
    /// parse_url / try_parse_url(url, part[, key]): a part of the URL as java.net.URI reads it.
    ParseUrl, TryParseUrl,
    /// uuid(): a random version-4 UUID per row (not deterministic).
    Uuid,
    /// Over a string's bytes (BINARY arguments are read as the bytes they hold).
    IsValidUtf8, MakeValidUtf8, ValidateUtf8, TryValidateUtf8,
    /// get_json_object(json, path): the value at a JSON path (`super::json`).
    GetJsonObject,
    /// from_utc_timestamp(ts, zone) / to_utc_timestamp(ts, zone): the timestamp moved by the
    /// zone's offset, from UTC to the zone's wall clock or back (`types::time_zone`).
    FromUtcTimestamp, ToUtcTimestamp,
    /// from_json(json, schema[, options]) / from_csv(csv, schema[, options]): the schema, a DDL
    /// string, arrives as a NULL of its type (the parser reads it); `super::from_text`.
    FromJson(Zone), FromCsv(Zone),
}

use MoreFn::*;

const ALL: &[MoreFn] = &[
    TryAdd, TrySubtract, TryMultiply, TryDivide, TryMod, TryToTimestamp, TryToDate, TryMakeTimestamp, TryMakeInterval, Md5, Sha1, Sha2, Crc32, Hash, XxHash64, Hex, Unhex, Base64, Unbase64, Bin, Conv,
    UnixDate, DateFromUnixDate, UnixSeconds, UnixMillis, UnixMicros, TimestampSeconds, TimestampMillis, TimestampMicros, MakeDate,
    MakeTimestamp(Zone::UTC), MonthsBetween(Zone::UTC), Elt, LuhnCheck, Soundex, WidthBucket, Bround, FormatNumber, FormatString, TimestampAdd(Zone::UTC), TimestampDiff(Zone::UTC),
    MakeYmInterval, MakeDtInterval, MakeInterval, Sequence(Zone::UTC), Mask, ToNumber, TryToNumber, ToChar, Overlay, UrlEncode, UrlDecode, TryUrlDecode, IsNan,
    NextDay, BitGet, ToBinary, TryToBinary, Encode, Decode, ParseUrl, TryParseUrl, Uuid, IsValidUtf8, MakeValidUtf8, ValidateUtf8,
    TryValidateUtf8, GetJsonObject, FromUtcTimestamp, ToUtcTimestamp, FromJson(Zone::UTC), FromCsv(Zone::UTC),
];

impl MoreFn {
    /// Spark's name.
    pub fn name(&self) -> &'static str {
        match self {
            TryAdd => "try_add", TrySubtract => "try_subtract", TryMultiply => "try_multiply", TryDivide => "try_divide", TryMod => "try_mod",
            TryToTimestamp => "try_to_timestamp", TryToDate => "try_to_date", TryMakeTimestamp => "try_make_timestamp", TryMakeInterval => "try_make_interval", Legacy => "legacy",
            Md5 => "md5", Sha1 => "sha1", Sha2 => "sha2", Crc32 => "crc32", Hash => "hash", XxHash64 => "xxhash64", Hex => "hex",
            Unhex => "unhex", Base64 => "base64", Unbase64 => "unbase64", Bin => "bin", Conv => "conv",
            UnixDate => "unix_date", DateFromUnixDate => "date_from_unix_date", UnixSeconds => "unix_seconds", UnixMillis => "unix_millis",
            UnixMicros => "unix_micros", TimestampSeconds => "timestamp_seconds", TimestampMillis => "timestamp_millis",
            TimestampMicros => "timestamp_micros", MakeDate => "make_date", MakeTimestamp(_) => "make_timestamp",
            MonthsBetween(_) => "months_between", Elt => "elt", LuhnCheck => "luhn_check", Soundex => "soundex", WidthBucket => "width_bucket",
            Bround => "bround", FormatNumber => "format_number", FormatString => "format_string",
            TimestampAdd(_) => "timestampadd", TimestampDiff(_) => "timestampdiff",
            MakeYmInterval => "make_ym_interval", MakeDtInterval => "make_dt_interval", MakeInterval => "make_interval", Sequence(_) => "sequence", ExtractInterval => "extract", DateAddInterval => "date_add_interval", CalendarDifference => "calendar_difference", Mask => "mask",
            ToNumber => "to_number", TryToNumber => "try_to_number", ToChar => "to_char", Overlay => "overlay",
            UrlEncode => "url_encode", UrlDecode => "url_decode", TryUrlDecode => "try_url_decode", IsNan => "isnan", LikeEscape => "like_escape",
            NextDay => "next_day", BitGet => "bit_get", ToBinary => "to_binary", TryToBinary => "try_to_binary", Encode => "encode",
            Decode => "decode", ParseUrl => "parse_url", TryParseUrl => "try_parse_url", Uuid => "uuid", IsValidUtf8 => "is_valid_utf8",
            MakeValidUtf8 => "make_valid_utf8", ValidateUtf8 => "validate_utf8", TryValidateUtf8 => "try_validate_utf8",
            GetJsonObject => "get_json_object", FromUtcTimestamp => "from_utc_timestamp", ToUtcTimestamp => "to_utc_timestamp",
            FromJson(_) => "from_json", FromCsv(_) => "from_csv",
        }
    }

    /// By name or alias (lower case).
    pub fn from_name(n: &str) -> Option<MoreFn> {
        match n {
            "sha" => Some(Sha1),
            "printf" => Some(FormatString),
            "to_varchar" => Some(ToChar),
            "getbit" => Some(BitGet),
            _ => ALL.iter().copied().find(|f| f.name() == n),
        }
    }

    /// Names for suggestions.
    pub fn names() -> impl Iterator<Item = &'static str> {
        ALL.iter().map(|f| f.name())
    }

    /// This function reading and writing TIMESTAMP wall-clock times in `zone`.
    pub fn with_zone(self, zone: Zone) -> MoreFn {
        match self {
            MakeTimestamp(_) => MakeTimestamp(zone),
            MonthsBetween(_) => MonthsBetween(zone),
            TimestampAdd(_) => TimestampAdd(zone),
            TimestampDiff(_) => TimestampDiff(zone),
            Sequence(_) => Sequence(zone),
            FromJson(_) => FromJson(zone),
            FromCsv(_) => FromCsv(zone),
            other => other,
        }
    }

    /// The try_ arithmetic, made by `rewrite` (one argument: the operation).
    pub fn is_try(&self) -> bool {
        matches!(self, TryAdd | TrySubtract | TryMultiply | TryDivide | TryMod | TryToTimestamp | TryToDate | TryMakeTimestamp | TryMakeInterval)
    }

    /// The fewest and most arguments (as called).
    pub fn arity(&self) -> (usize, usize) {
        match self {
            TryAdd | TrySubtract | TryMultiply | TryDivide | TryMod | TryToTimestamp | TryToDate | TryMakeTimestamp | TryMakeInterval | Legacy => (1, 1),
            Sha2 | Bround | FormatNumber | ToNumber | TryToNumber | ToChar => (2, 2),
            Hash | XxHash64 => (1, usize::MAX),
            Conv | MakeDate | TimestampAdd(_) | TimestampDiff(_) => (3, 3),
            MakeTimestamp(_) => (6, 7),
            MonthsBetween(_) => (2, 3),
            Elt => (2, usize::MAX),
            WidthBucket => (4, 4),
            FormatString => (1, usize::MAX),
            MakeYmInterval => (0, 2),
            MakeDtInterval => (0, 4),
            MakeInterval => (0, 7),
            Sequence(_) => (2, 3),
            ExtractInterval | LikeEscape | DateAddInterval | CalendarDifference => (2, 2),
            Mask => (1, 5),
            Overlay => (3, 4),
            NextDay | BitGet | Encode | Decode | GetJsonObject | FromUtcTimestamp | ToUtcTimestamp => (2, 2),
            ToBinary | TryToBinary => (1, 2),
            FromJson(_) | FromCsv(_) => (2, 3),
            ParseUrl | TryParseUrl => (2, 3),
            Uuid => (0, 0),
            _ => (1, 1),
        }
    }

    /// NULL whenever an argument is NULL.
    pub fn null_intolerant(&self) -> bool {
        !matches!(self, TryAdd | TrySubtract | TryMultiply | TryDivide | TryMod | TryToTimestamp | TryToDate | TryMakeTimestamp | TryMakeInterval | Legacy | Hash | XxHash64 | Elt | FormatString | Mask | IsNan | Uuid | FromJson(_) | FromCsv(_))
    }

    /// False for a function whose every call may answer differently (uuid()).
    pub fn deterministic(&self) -> bool {
        *self != Uuid
    }

    /// Whether the result may be NULL, given which arguments may be.
    pub fn nullable(&self, args: &[bool]) -> bool {
        match self {
            Hash | XxHash64 | IsNan | Uuid => false,
            FormatString | Mask => args.first().copied().unwrap_or(false),
            TryAdd | TrySubtract | TryMultiply | TryDivide | TryMod | TryToTimestamp | TryToDate | TryMakeTimestamp | TryMakeInterval | Legacy | Sha2 | Unhex | Unbase64 | Conv | TimestampSeconds | WidthBucket | Elt
            | FormatNumber | TryToNumber | TryUrlDecode | ToBinary | TryToBinary | ParseUrl | TryParseUrl | TryValidateUtf8 | GetJsonObject | FromJson(_) | FromCsv(_) => true,
            _ => args.iter().any(|n| *n),
        }
    }

    /// The arguments with Spark's implicit casts.
    pub fn coerce(&self, b: Builtin, args: Vec<Expr>) -> Result<Vec<Expr>> {
        let cast_to = |e: Expr, t: &DataType| -> Result<Expr> {
            Ok(if &e.data_type()? == t { e } else { Expr::Cast { child: Box::new(e), to: t.clone(), zone: None } })
        };
        let each = |args: Vec<Expr>, types: &[DataType]| -> Result<Vec<Expr>> {
            args.into_iter().enumerate().map(|(i, a)| cast_to(a, types.get(i).or(types.last()).unwrap_or(&DataType::Utf8))).collect()
        };
        let ts = crate::types::timestamp_type(false);
        let numeric = |e: &Expr| -> Result<()> {
            let t = e.data_type()?;
            if crate::types::is_numeric(&t) || crate::types::is_string(&t) || t == DataType::Null { Ok(()) } else { Err(type_error(b, e, "NUMERIC", &t)) }
        };
        let to_ts = |e: Expr| -> Result<Expr> {
            let t = e.data_type()?;
            match t {
                DataType::Timestamp(..) => Ok(e),
                DataType::Date32 | DataType::Null => cast_to(e, &ts),
                ref s if crate::types::is_string(s) => cast_to(e, &ts),
                other => Err(type_error(b, &e, "TIMESTAMP", &other)),
            }
        };
        Ok(match self {
            TryAdd | TrySubtract | TryMultiply | TryDivide | TryMod | TryToTimestamp | TryToDate | TryMakeTimestamp | TryMakeInterval | Legacy | ExtractInterval | DateAddInterval | CalendarDifference => args,
            Mask => {
                let names = ["input", "upperChar", "lowerChar", "digitChar", "otherChar"];
                let shown = args.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ");
                let mut out = vec![];
                for (i, a) in args.into_iter().enumerate() {
                    if i == 0 {
                        out.push(cast_to(a, &DataType::Utf8)?);
                        continue;
                    }
                    // Spark's Mask: each replacement a foldable string of one character, or NULL.
                    match &a {
                        Expr::Literal(ScalarValue::Null(_)) => out.push(Expr::Literal(ScalarValue::Null(DataType::Utf8))),
                        Expr::Literal(ScalarValue::Utf8(c)) if c.chars().count() == 1 => out.push(a),
                        Expr::Literal(ScalarValue::Utf8(_)) => {
                            return Err(KilnError::analysis(
                                "DATATYPE_MISMATCH.INPUT_SIZE_NOT_ONE",
                                format!("Cannot resolve \"mask({shown})\" due to data type mismatch: Length of `{}` should be 1.", names[i]),
                            ))
                        }
                        other => {
                            return Err(KilnError::analysis(
                                "DATATYPE_MISMATCH.NON_FOLDABLE_INPUT",
                                format!("Cannot resolve \"mask({shown})\" due to data type mismatch: the input `{}` should be a foldable \"STRING\" expression; however, got {other}.", names[i]),
                            ))
                        }
                    }
                }
                out
            }
            // The format: a foldable, valid number format (checked here, as Spark's checkInputDataTypes).
            ToNumber | TryToNumber | ToChar => {
                let mut it = args.into_iter();
                let (x, f) = (it.next().ok_or_else(|| KilnError::internal("to_number arity"))?, it.next().ok_or_else(|| KilnError::internal("to_number arity"))?);
                match &f {
                    Expr::Literal(ScalarValue::Utf8(text)) => {
                        super::number_format::NumberFormat::new(text)?;
                    }
                    Expr::Literal(ScalarValue::Null(_)) => {}
                    other => {
                        return Err(KilnError::analysis(
                            "DATATYPE_MISMATCH.NON_FOLDABLE_INPUT",
                            format!("Cannot resolve \"{}({x}, {other})\" due to data type mismatch: the input `format` should be a foldable \"STRING\" expression; however, got {other}.", self.name()),
                        ))
                    }
                }
                let f = cast_to(f, &DataType::Utf8)?;
                let t = x.data_type()?;
                let x = match self {
                    ToChar => match &t {
                        DataType::Decimal128(..) => x,
                        DataType::Null => cast_to(x, &DataType::Decimal128(10, 0))?,
                        t if crate::types::is_integral(t) => {
                            let (p, s) = crate::types::decimal_for_integral(t).unwrap_or((20, 0));
                            cast_to(x, &DataType::Decimal128(p, s))?
                        }
                        // Spark's implicit cast of a double to a decimal: DecimalType.forType(DoubleType).
                        DataType::Float32 | DataType::Float64 => cast_to(x, &DataType::Decimal128(30, 15))?,
                        other => return Err(type_error(b, &x, "DECIMAL", other)),
                    },
                    _ => cast_to(x, &DataType::Utf8)?,
                };
                vec![x, f]
            }
            // Spark's implicit casts: any number (or string) to int.
            MakeYmInterval => {
                args.iter().try_for_each(numeric)?;
                each(args, &[DataType::Int32])?
            }
            MakeDtInterval => {
                args.iter().try_for_each(numeric)?;
                each(args, &[DataType::Int32, DataType::Int32, DataType::Int32, DataType::Decimal128(18, 6)])?
            }
            MakeInterval => {
                args.iter().try_for_each(numeric)?;
                let int = DataType::Int32;
                each(args, &[int.clone(), int.clone(), int.clone(), int.clone(), int.clone(), int, DataType::Decimal128(18, 6)])?
            }
            Sequence(_) => super::sequence::coerce(args)?,
            Hash | XxHash64 => {
                for a in &args {
                    let t = a.data_type()?;
                    let ok = crate::types::is_numeric(&t) || crate::types::is_string(&t) || crate::types::is_timestamp(&t)
                        || matches!(t, DataType::Boolean | DataType::Date32 | DataType::Null | DataType::Binary);
                    if !ok {
                        return Err(KilnError::unsupported(format!("{}(...) of a {} value", self.name(), crate::types::spark_type_name(&t))));
                    }
                }
                args
            }
            Hex => {
                let mut out = vec![];
                for a in args {
                    let t = a.data_type()?;
                    out.push(if crate::types::is_numeric(&t) { cast_to(a, &DataType::Int64)? } else { cast_to(a, &DataType::Binary)? });
                }
                out
            }
            // Spark's digests and base64 read bytes: a string is cast to its UTF-8 bytes.
            Sha2 => each(args, &[DataType::Binary, DataType::Int32])?,
            Md5 | Sha1 | Crc32 | Base64 => each(args, &[DataType::Binary])?,
            Bin => each(args, &[DataType::Int64])?,
            Conv => each(args, &[DataType::Utf8, DataType::Int32, DataType::Int32])?,
            UnixDate => each(args, &[DataType::Date32])?,
            DateFromUnixDate => each(args, &[DataType::Int32])?,
            UnixSeconds | UnixMillis | UnixMicros => args.into_iter().map(to_ts).collect::<Result<_>>()?,
            TimestampSeconds => {
                let mut out = vec![];
                for a in args {
                    numeric(&a)?;
                    let t = a.data_type()?;
                    out.push(if crate::types::is_integral(&t) || t == DataType::Null { cast_to(a, &DataType::Int64)? } else { cast_to(a, &DataType::Float64)? });
                }
                out
            }
            TimestampMillis | TimestampMicros => {
                for a in &args {
                    let t = a.data_type()?;
                    if !crate::types::is_integral(&t) && t != DataType::Null {
                        return Err(type_error(b, a, "INTEGRAL", &t));
                    }
                }
                each(args, &[DataType::Int64])?
            }
            MakeDate => each(args, &[DataType::Int32])?,
            MakeTimestamp(_) => each(args, &[DataType::Int32, DataType::Int32, DataType::Int32, DataType::Int32, DataType::Int32, DataType::Decimal128(16, 6), DataType::Utf8])?,
            MonthsBetween(_) => {
                let mut it = args.into_iter();
                let mut out = vec![];
                for a in it.by_ref().take(2) {
                    out.push(to_ts(a)?);
                }
                for a in it {
                    out.push(cast_to(a, &DataType::Boolean)?);
                }
                out
            }
            Elt => each(args, &[DataType::Int32, DataType::Utf8])?,
            WidthBucket => {
                args.iter().take(3).try_for_each(numeric)?;
                each(args, &[DataType::Float64, DataType::Float64, DataType::Float64, DataType::Int64])?
            }
            Bround => {
                let mut it = args.into_iter();
                let x = it.next().ok_or_else(|| KilnError::internal("bround arity"))?;
                numeric(&x)?;
                let t = x.data_type()?;
                let x = match t {
                    DataType::Decimal128(..) | DataType::Int64 | DataType::Int32 | DataType::Int16 | DataType::Int8 | DataType::Float32 => x,
                    _ => cast_to(x, &DataType::Float64)?,
                };
                let d = it.next().ok_or_else(|| KilnError::internal("bround arity"))?;
                if constant_int(&d).is_none() {
                    return Err(KilnError::analysis(
                        "DATATYPE_MISMATCH.NON_FOLDABLE_INPUT",
                        format!("Cannot resolve \"bround({x}, {d})\": the scale {d} must be an integer literal."),
                    ));
                }
                vec![x, d]
            }
            FormatNumber => {
                numeric(&args[0])?;
                let mut it = args.into_iter();
                let x = it.next().ok_or_else(|| KilnError::internal("format_number arity"))?;
                let x = if matches!(x.data_type()?, DataType::Decimal128(..)) { x } else { cast_to(x, &DataType::Float64)? };
                let d = it.next().ok_or_else(|| KilnError::internal("format_number arity"))?;
                // An int of decimal places, or a DecimalFormat pattern.
                let d = if crate::types::is_string(&d.data_type()?) { cast_to(d, &DataType::Utf8)? } else { cast_to(d, &DataType::Int32)? };
                vec![x, d]
            }
            FormatString => {
                let mut it = args.into_iter();
                let f = it.next().ok_or_else(|| KilnError::internal("format_string arity"))?;
                std::iter::once(cast_to(f, &DataType::Utf8)).chain(it.map(Ok)).collect::<Result<_>>()?
            }
            Unhex | Unbase64 | LuhnCheck | Soundex | UrlEncode | UrlDecode | TryUrlDecode | LikeEscape => each(args, &[DataType::Utf8])?,
            Encode | ParseUrl | TryParseUrl | Uuid | GetJsonObject => each(args, &[DataType::Utf8])?,
            FromJson(_) | FromCsv(_) => from_text_args(b, *self, args)?,
            FromUtcTimestamp | ToUtcTimestamp => {
                let mut it = args.into_iter();
                let t = it.next().ok_or_else(|| KilnError::internal("from_utc_timestamp arity"))?;
                // A TIMESTAMP_NTZ is read as the TIMESTAMP of the same wall clock.
                let t = if matches!(t.data_type()?, DataType::Timestamp(..)) { cast_to(t, &ts)? } else { to_ts(t)? };
                std::iter::once(Ok(t)).chain(it.map(|z| cast_to(z, &DataType::Utf8))).collect::<Result<_>>()?
            }
            NextDay => {
                let mut it = args.into_iter();
                let d = it.next().ok_or_else(|| KilnError::internal("next_day arity"))?;
                let t = d.data_type()?;
                if !(matches!(t, DataType::Date32 | DataType::Null | DataType::Timestamp(..)) || crate::types::is_string(&t)) {
                    return Err(type_error(b, &d, "DATE", &t));
                }
                std::iter::once(cast_to(d, &DataType::Date32)).chain(it.map(|a| cast_to(a, &DataType::Utf8))).collect::<Result<_>>()?
            }
            BitGet => {
                let mut it = args.into_iter();
                let x = it.next().ok_or_else(|| KilnError::internal("bit_get arity"))?;
                let t = x.data_type()?;
                if !crate::types::is_integral(&t) && t != DataType::Null {
                    return Err(type_error(b, &x, "INTEGRAL", &t));
                }
                std::iter::once(Ok(x)).chain(it.map(|a| cast_to(a, &DataType::Int32))).collect::<Result<_>>()?
            }
            ToBinary | TryToBinary => {
                let mut args = args;
                if args.len() == 1 {
                    args.push(Expr::lit(ScalarValue::Utf8("hex".into())));
                }
                // Spark's ToBinary: the format a string literal naming a known format (try_ answers NULL instead).
                if *self == ToBinary {
                    let bad = match &args[1] {
                        Expr::Literal(ScalarValue::Utf8(f)) => (binary_format(f).is_none()).then(|| f.clone()),
                        Expr::Literal(ScalarValue::Null(_)) => None,
                        Expr::Literal(other) => Some(other.to_string()),
                        _ => None,
                    };
                    if let Some(f) = bad {
                        return Err(KilnError::analysis(
                            "DATATYPE_MISMATCH.INVALID_ARG_VALUE",
                            format!("Cannot resolve \"to_binary({}, {f})\" due to data type mismatch: The fmt value must to be a case-insensitive \"STRING\" literal of 'hex', 'utf-8', 'utf8', or 'base64', but got '{f}'.", args[0]),
                        ));
                    }
                }
                each(args, &[DataType::Utf8])?
            }
            Decode => {
                let mut it = args.into_iter();
                let x = it.next().ok_or_else(|| KilnError::internal("decode arity"))?;
                let t = x.data_type()?;
                if !(matches!(t, DataType::Binary | DataType::Null) || crate::types::is_string(&t)) {
                    return Err(type_error(b, &x, "BINARY", &t));
                }
                std::iter::once(cast_to(x, &DataType::Binary)).chain(it.map(|a| cast_to(a, &DataType::Utf8))).collect::<Result<_>>()?
            }
            // Bytes stay bytes (they may be ill-formed UTF-8); anything else is its string.
            IsValidUtf8 | MakeValidUtf8 | ValidateUtf8 | TryValidateUtf8 => {
                args.into_iter().map(|a| if a.data_type()? == DataType::Binary { Ok(a) } else { cast_to(a, &DataType::Utf8) }).collect::<Result<_>>()?
            }
            IsNan => {
                args.iter().try_for_each(numeric)?;
                each(args, &[DataType::Float64])?
            }
            // The length defaults to -1: the replacement's length.
            Overlay => {
                let mut args = args;
                if args.len() == 3 {
                    args.push(Expr::lit(ScalarValue::Int32(-1)));
                }
                each(args, &[DataType::Utf8, DataType::Utf8, DataType::Int32, DataType::Int32])?
            }
            TimestampAdd(_) | TimestampDiff(_) => {
                let mut it = args.into_iter();
                let unit = it.next().ok_or_else(|| KilnError::internal("timestampadd arity"))?;
                let unit_name = match &unit {
                    Expr::Literal(ScalarValue::Utf8(u)) => u.clone(),
                    other => return Err(KilnError::analysis("INVALID_PARAMETER_VALUE.DATETIME_UNIT", format!("The value of parameter(s) `unit` in `{}` is invalid: expects a unit name such as DAY, got {other}.", self.name()))),
                };
                let units: &[&str] = &["MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY", "DAYOFYEAR", "WEEK", "MONTH", "QUARTER", "YEAR"];
                if !units.contains(&unit_name.as_str()) || (matches!(self, TimestampDiff(_)) && unit_name == "DAYOFYEAR") {
                    return Err(KilnError::analysis(
                        "INVALID_PARAMETER_VALUE.DATETIME_UNIT",
                        format!("The value of parameter(s) `unit` in `{}` is invalid: expects one of the units without quotes YEAR, QUARTER, MONTH, WEEK, DAY, DAYOFYEAR, HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND, but got the string literal '{unit_name}'.", self.name()),
                    ));
                }
                let mut out = vec![unit];
                for (i, a) in it.enumerate() {
                    out.push(if matches!(self, TimestampAdd(_)) && i == 0 { cast_to(a, &DataType::Int64)? } else { to_ts(a)? });
                }
                out
            }
        })
    }

    /// The result type over the (coerced) arguments.
    pub fn return_type(&self, exprs: &[Expr], args: &[DataType]) -> DataType {
        match self {
            TryAdd | TrySubtract | TryMultiply | TryDivide | TryMod | TryToTimestamp | TryToDate | TryMakeTimestamp | TryMakeInterval | Legacy => args.first().cloned().unwrap_or(DataType::Null),
            Crc32 | XxHash64 | UnixSeconds | UnixMillis | UnixMicros | WidthBucket | TimestampDiff(_) => DataType::Int64,
            TimestampAdd(_) => args.get(2).cloned().unwrap_or_else(|| crate::types::timestamp_type(false)),
            MakeYmInterval => crate::types::interval::YEAR_MONTH,
            // The schema's type, carried by the second argument.
            FromJson(_) | FromCsv(_) => args.get(1).cloned().unwrap_or(DataType::Null),
            ToNumber | TryToNumber => match exprs.get(1) {
                Some(Expr::Literal(ScalarValue::Utf8(f))) => match super::number_format::NumberFormat::new(f) {
                    Ok(f) => {
                        let (p, s) = f.precision_scale();
                        DataType::Decimal128(p.clamp(1, 38) as u8, s.min(38) as i8)
                    }
                    Err(_) => DataType::Decimal128(38, 0),
                },
                _ => DataType::Decimal128(38, 0),
            },
            MakeDtInterval => crate::types::interval::DAY_TIME,
            MakeInterval => crate::types::interval::CALENDAR,
            Sequence(_) => crate::types::list_type(args.first().cloned().unwrap_or(DataType::Int32)),
            DateAddInterval => DataType::Date32,
            CalendarDifference => crate::types::interval::CALENDAR,
            // Spark's ExtractIntervalMonths / Hours / Minutes are bytes, seconds decimal(8,6).
            ExtractInterval => match exprs.first() {
                Some(Expr::Literal(ScalarValue::Utf8(f))) => match f.as_str() {
                    "MONTH" | "HOUR" | "MINUTE" => DataType::Int8,
                    "SECOND" => DataType::Decimal128(8, 6),
                    _ => DataType::Int32,
                },
                _ => DataType::Int32,
            },
            Hash | UnixDate => DataType::Int32,
            DateFromUnixDate | MakeDate => DataType::Date32,
            TimestampSeconds | TimestampMillis | TimestampMicros | MakeTimestamp(_) | FromUtcTimestamp | ToUtcTimestamp => crate::types::timestamp_type(false),
            MonthsBetween(_) => DataType::Float64,
            LuhnCheck | IsNan | IsValidUtf8 => DataType::Boolean,
            Unhex | Unbase64 | ToBinary | TryToBinary | Encode => DataType::Binary,
            NextDay => DataType::Date32,
            BitGet => DataType::Int8,
            Bround => match args.first() {
                Some(DataType::Decimal128(p, s)) => {
                    let d = exprs.get(1).and_then(constant_int).unwrap_or(0);
                    let integral = *p as i32 - *s as i32 + 1;
                    let (p, s) = if d < 0 { crate::types::bounded_decimal(integral.max(1 - d), 0) } else {
                        let s = d.min(*s as i32);
                        crate::types::bounded_decimal(integral + s, s)
                    };
                    DataType::Decimal128(p, s)
                }
                Some(t) => t.clone(),
                None => DataType::Null,
            },
            _ => DataType::Utf8,
        }
    }

    /// Evaluates over argument arrays of `rows` rows (none of type NULL when null-intolerant).
    pub fn eval(&self, args: &[ArrayRef], rows: usize, result: &DataType) -> Result<ArrayRef> {
        let arg = |i: usize| args.get(i).ok_or_else(|| KilnError::internal(format!("{} lacks argument {i}", self.name())));
        let strs = |i: usize| -> Result<StringArray> { Ok(arg(i)?.as_string::<i32>().clone()) };
        let map_str = |f: &dyn Fn(&str) -> Option<String>| -> Result<ArrayRef> { Ok(Arc::new(strs(0)?.iter().map(|s| s.and_then(f)).collect::<StringArray>())) };
        let bytes = |i: usize| -> Result<arrow::array::BinaryArray> { Ok(arg(i)?.as_binary::<i32>().clone()) };
        let map_bytes = |f: &dyn Fn(&[u8]) -> Option<String>| -> Result<ArrayRef> { Ok(Arc::new(bytes(0)?.iter().map(|s| s.and_then(f)).collect::<StringArray>())) };
        let i64s = |i: usize| -> Result<Int64Array> { Ok(arg(i)?.as_primitive::<Int64Type>().clone()) };
        let i32s = |i: usize| -> Result<Int32Array> { Ok(arg(i)?.as_primitive::<Int32Type>().clone()) };
        let micros = |i: usize| -> Result<Vec<Option<i64>>> { Ok(arg(i)?.as_primitive::<TimestampMicrosecondType>().iter().collect()) };
        let to_ts = |v: Vec<Option<i64>>| -> ArrayRef { Arc::new(TimestampMicrosecondArray::from(v).with_data_type(result.clone())) };
        let zone = match self {
            MakeTimestamp(z) | MonthsBetween(z) | TimestampAdd(z) | TimestampDiff(z) | FromJson(z) | FromCsv(z) | Sequence(z) => *z,
            _ => Zone::UTC,
        };
        // A timestamp argument's wall-clock times in `zone` (a TIMESTAMP_NTZ's as they are).
        let local = |i: usize| -> Result<Vec<Option<i64>>> {
            let ltz = matches!(arg(i)?.data_type(), DataType::Timestamp(_, Some(_)));
            Ok(micros(i)?.into_iter().map(|v| if ltz { v.and_then(|v| zone.from_utc(v)) } else { v }).collect())
        };
        // The result's value for a wall-clock time: a TIMESTAMP's instant in `zone`.
        let overflow = || KilnError::exec(format!("[DATETIME_OVERFLOW] Datetime operation overflow in {}. SQLSTATE: 22008", self.name()));
        let instant = |v: i64| -> Result<i64> { if matches!(result, DataType::Timestamp(_, Some(_))) { zone.to_utc(v).ok_or_else(overflow) } else { Ok(v) } };
        Ok(match self {
            TryAdd | TrySubtract | TryMultiply | TryDivide | TryMod | TryToTimestamp | TryToDate | TryMakeTimestamp | TryMakeInterval | Legacy => return Err(KilnError::internal(format!("{} evaluated over values", self.name()))),
            Md5 => {
                use md5::Digest;
                map_bytes(&|s| Some(hex_lower(&md5::Md5::digest(s))))?
            }
            Sha1 => {
                use sha1::Digest;
                map_bytes(&|s| Some(hex_lower(&sha1::Sha1::digest(s))))?
            }
            Sha2 => {
                use sha2::Digest;
                let (s, n) = (bytes(0)?, i32s(1)?);
                Arc::new(s.iter().zip(n.iter()).map(|(s, n)| {
                    let b = s?;
                    Some(match n? {
                        0 | 256 => hex_lower(&sha2::Sha256::digest(b)),
                        224 => hex_lower(&sha2::Sha224::digest(b)),
                        384 => hex_lower(&sha2::Sha384::digest(b)),
                        512 => hex_lower(&sha2::Sha512::digest(b)),
                        _ => return None,
                    })
                }).collect::<StringArray>())
            }
            Crc32 => Arc::new(bytes(0)?.iter().map(|s| s.map(|s| crc32fast::hash(s) as i64)).collect::<Int64Array>()),
            Hash => Arc::new(Int32Array::from(crate::common::hash::spark_hash(args, rows)?)),
            XxHash64 => {
                let mut h = vec![42u64; rows];
                for a in args {
                    crate::common::hash::xxhash64_fold(a, &mut h).ok_or_else(|| KilnError::unsupported(format!("xxhash64 of a {} value", a.data_type())))?;
                }
                Arc::new(h.into_iter().map(|h| h as i64).collect::<Int64Array>())
            }
            Hex => match arg(0)?.data_type() {
                DataType::Int64 => Arc::new(i64s(0)?.iter().map(|v| v.map(|v| format!("{:X}", v as u64))).collect::<StringArray>()),
                _ => map_bytes(&|s| Some(s.iter().map(|b| format!("{b:02X}")).collect()))?,
            },
            Unhex => Arc::new(strs(0)?.iter().map(|s| s.and_then(unhex_bytes)).collect::<arrow::array::BinaryArray>()),
            Base64 => map_bytes(&|s| Some(crate::format::base64_encode(s)))?,
            Unbase64 => Arc::new(strs(0)?.iter().map(|s| s.and_then(base64_decode)).collect::<arrow::array::BinaryArray>()),
            Bin => Arc::new(i64s(0)?.iter().map(|v| v.map(|v| format!("{:b}", v as u64))).collect::<StringArray>()),
            Conv => {
                let (s, from, to) = (strs(0)?, i32s(1)?, i32s(2)?);
                let mut out = Vec::with_capacity(rows);
                for i in 0..rows {
                    out.push(if s.is_null(i) || from.is_null(i) || to.is_null(i) { None } else { conv(s.value(i), from.value(i), to.value(i))? });
                }
                Arc::new(StringArray::from(out))
            }
            UnixDate => Arc::new(arg(0)?.as_primitive::<Date32Type>().reinterpret_cast::<Int32Type>()),
            DateFromUnixDate => Arc::new(i32s(0)?.reinterpret_cast::<Date32Type>()),
            UnixSeconds => Arc::new(micros(0)?.into_iter().map(|v| v.map(|v| v.div_euclid(1_000_000))).collect::<Int64Array>()),
            UnixMillis => Arc::new(micros(0)?.into_iter().map(|v| v.map(|v| v.div_euclid(1_000))).collect::<Int64Array>()),
            UnixMicros => Arc::new(micros(0)?.into_iter().map(|v| v).collect::<Int64Array>()),
            TimestampSeconds | TimestampMillis | TimestampMicros => {
                let scale = match self {
                    TimestampSeconds => 1_000_000,
                    TimestampMillis => 1_000,
                    _ => 1,
                };
                match arg(0)?.data_type() {
                    DataType::Float64 => {
                        // Spark: NaN and infinities are NULL; the product is truncated to a long.
                        let v = arg(0)?.as_primitive::<Float64Type>().iter().map(|x| x.filter(|x| x.is_finite()).map(|x| (x * 1e6) as i64)).collect();
                        to_ts(v)
                    }
                    _ => {
                        let mut v = Vec::with_capacity(rows);
                        for x in i64s(0)?.iter() {
                            v.push(match x {
                                None => None,
                                Some(x) => Some(x.checked_mul(scale).ok_or_else(|| {
                                    let unit = match scale {
                                        1_000_000 => "seconds",
                                        1_000 => "milliseconds",
                                        _ => "microseconds",
                                    };
                                    KilnError::exec(format!("[DATETIME_OVERFLOW] Datetime operation overflow: create a TIMESTAMP from {x}L {unit} since the epoch. SQLSTATE: 22008"))
                                })?),
                            });
                        }
                        to_ts(v)
                    }
                }
            }
            MakeDate => {
                let (y, m, d) = (i32s(0)?, i32s(1)?, i32s(2)?);
                let mut out = Vec::with_capacity(rows);
                for i in 0..rows {
                    if y.is_null(i) || m.is_null(i) || d.is_null(i) {
                        out.push(None);
                        continue;
                    }
                    let us = civil_micros(y.value(i), m.value(i), d.value(i), 0, 0, 0)?;
                    out.push(Some((us / MICROS_PER_DAY) as i32));
                }
                Arc::new(Date32Array::from(out))
            }
            MakeTimestamp(_) => {
                let f: Vec<Int32Array> = (0..5).map(i32s).collect::<Result<_>>()?;
                let sec = arg(5)?.as_primitive::<Decimal128Type>();
                // make_timestamp(..., timezone): the fields are a wall-clock time in that zone.
                let zones = if args.len() > 6 { Some(strs(6)?) } else { None };
                let mut out = Vec::with_capacity(rows);
                for i in 0..rows {
                    if f.iter().any(|a| a.is_null(i)) || sec.is_null(i) || zones.as_ref().is_some_and(|z| z.is_null(i)) {
                        out.push(None);
                        continue;
                    }
                    let s = sec.value(i);
                    // Seconds are decimal(16, 6); 60 is the next minute when it has no fraction.
                    if s > 60_000_000 && s < 61_000_000 {
                        let shown = crate::types::format_decimal(s, 6);
                        return Err(KilnError::exec(format!(
                            "[INVALID_FRACTION_OF_SECOND] Valid range for seconds is [0, 60] (inclusive), but the provided value is {}. To avoid this error, use `try_make_timestamp`, which returns NULL on error. SQLSTATE: 22023",
                            shown.trim_end_matches('0')
                        )));
                    }
                    if !(0..=60_000_000).contains(&s) {
                        return Err(KilnError::exec(format!(
                            "[DATETIME_FIELD_OUT_OF_BOUNDS.WITHOUT_SUGGESTION] Invalid value for SecondOfMinute (valid values 0 - 59): {}. SQLSTATE: 22023",
                            s.div_euclid(1_000_000)
                        )));
                    }
                    let wall = civil_micros(f[0].value(i), f[1].value(i), f[2].value(i), f[3].value(i), f[4].value(i), 0)? + s as i64;
                    out.push(Some(match &zones {
                        Some(z) => {
                            let id = z.value(i);
                            Zone::parse(id).ok_or_else(|| crate::types::time_zone::invalid_zone(id))?.to_utc(wall).ok_or_else(overflow)?
                        }
                        None => instant(wall)?,
                    }));
                }
                to_ts(out)
            }
            MonthsBetween(_) => {
                let (a, b) = (local(0)?, local(1)?);
                let round: Vec<Option<bool>> = if args.len() > 2 { arg(2)?.as_boolean().iter().collect() } else { vec![Some(true); rows] };
                let out: Float64Array = a.iter().zip(b).zip(round).map(|((a, b), r)| Some(months_between((*a)?, b?, r?))).collect();
                Arc::new(out)
            }
            Elt => {
                let n = i32s(0)?;
                let values: Vec<StringArray> = (1..args.len()).map(strs).collect::<Result<_>>()?;
                let mut out = Vec::with_capacity(rows);
                for i in 0..rows {
                    if n.is_null(i) {
                        out.push(None);
                        continue;
                    }
                    let k = n.value(i);
                    let Some(v) = usize::try_from(k).ok().filter(|k| *k >= 1).and_then(|k| values.get(k - 1)) else {
                        return Err(KilnError::exec(format!(
                            "[INVALID_ARRAY_INDEX] The index {k} is out of bounds. The array has {} elements. Use the SQL function `get()` to tolerate accessing element at invalid index and return NULL instead. SQLSTATE: 22003",
                            values.len()
                        )));
                    };
                    out.push(v.is_valid(i).then(|| v.value(i).to_string()));
                }
                Arc::new(StringArray::from(out))
            }
            LuhnCheck => Arc::new(strs(0)?.iter().map(|s| s.map(luhn)).collect::<BooleanArray>()),
            Overlay => {
                let (s, r, p, n) = (strs(0)?, strs(1)?, i32s(2)?, i32s(3)?);
                let out: StringArray = (0..rows)
                    .map(|i| {
                        if s.is_null(i) || r.is_null(i) || p.is_null(i) || n.is_null(i) {
                            return None;
                        }
                        Some(overlay(s.value(i), r.value(i), p.value(i), n.value(i)))
                    })
                    .collect();
                Arc::new(out)
            }
            Soundex => map_str(&|s| Some(soundex(s)))?,
            WidthBucket => {
                let f: Vec<Vec<Option<f64>>> = (0..3).map(|i| Ok(arg(i)?.as_primitive::<Float64Type>().iter().collect())).collect::<Result<_>>()?;
                let n = i64s(3)?;
                Arc::new((0..rows).map(|i| width_bucket(f[0][i]?, f[1][i]?, f[2][i]?, n.is_valid(i).then(|| n.value(i))?)).collect::<Int64Array>())
            }
            Bround => {
                let d = match args.get(1).map(|a| a.as_primitive::<Int32Type>()) {
                    Some(d) if d.is_valid(0) => d.value(0),
                    _ => return Ok(arrow::array::new_null_array(result, rows)),
                };
                bround(arg(0)?, d, result)?
            }
            FormatNumber => {
                let x = arg(0)?;
                // One pattern per row: from the int of decimal places, or the pattern string.
                let patterns: Vec<Option<DecimalPattern>> = match arg(1)?.data_type() {
                    DataType::Utf8 => {
                        let mut cache: Option<(String, DecimalPattern)> = None;
                        let mut out = Vec::with_capacity(rows);
                        for p in strs(1)?.iter() {
                            out.push(match p {
                                None => None,
                                Some(p) => {
                                    if cache.as_ref().is_none_or(|(t, _)| t != p) {
                                        cache = Some((p.to_string(), DecimalPattern::new(p)?));
                                    }
                                    cache.as_ref().map(|(_, d)| d.clone())
                                }
                            });
                        }
                        out
                    }
                    _ => i32s(1)?.iter().map(|d| d.filter(|d| *d >= 0).map(|d| DecimalPattern::fixed(d as usize))).collect(),
                };
                let text = |i: usize| -> Option<String> {
                    match x.data_type() {
                        DataType::Decimal128(_, s) => Some(crate::types::format_decimal(x.as_primitive::<Decimal128Type>().value(i), *s)),
                        _ => {
                            let v = x.as_primitive::<Float64Type>().value(i);
                            v.is_finite().then(|| format!("{v:e}"))
                        }
                    }
                };
                sized_strings("format_number", (0..rows).map(|i| {
                    let Some(pattern) = patterns[i].as_ref().filter(|_| x.is_valid(i)) else {
                        return Ok(None);
                    };
                    Ok(Some(match text(i) {
                        Some(t) => pattern.format(&t),
                        // Java's DecimalFormat prints NaN and infinities with their own symbols.
                        None => { let v = x.as_primitive::<Float64Type>().value(i); if v.is_nan() { "NaN".into() } else if v > 0.0 { "\u{221E}".into() } else { "-\u{221E}".into() } }
                    }))
                }))?
            }
            TimestampAdd(_) | TimestampDiff(_) => {
                let unit = strs(0)?;
                let x = arg(1)?;
                let ltz = matches!(arg(2)?.data_type(), DataType::Timestamp(_, Some(_)));
                let (y, y_local) = (micros(2)?, local(2)?);
                let x_local = if matches!(self, TimestampDiff(_)) { local(1)? } else { vec![] };
                let mut out = Vec::with_capacity(rows);
                for i in 0..rows {
                    out.push(match (unit.is_valid(i).then(|| unit.value(i)), x.is_valid(i), y[i], y_local[i]) {
                        (Some(u), true, Some(t), Some(wall)) if matches!(self, TimestampAdd(_)) => {
                            Some(timestamp_add(u, x.as_primitive::<Int64Type>().value(i), t, wall, |w| if ltz { zone.to_utc(w) } else { Some(w) })?)
                        }
                        // Spark counts the units between the wall-clock times.
                        (Some(u), true, _, Some(end)) => x_local.get(i).copied().flatten().map(|start| timestamp_diff(u, start, end)),
                        _ => None,
                    });
                }
                match self {
                    TimestampAdd(_) => to_ts(out),
                    _ => Arc::new(Int64Array::from(out)),
                }
            }
            MakeYmInterval => {
                let (y, m) = (if args.is_empty() { Int32Array::from(vec![0; rows]) } else { i32s(0)? }, if args.len() < 2 { Int32Array::from(vec![0; rows]) } else { i32s(1)? });
                let overflow = || crate::expr::eval::interval::interval_overflow(None);
                let mut out = Vec::with_capacity(rows);
                for i in 0..rows {
                    out.push(if y.is_null(i) || m.is_null(i) { None } else { Some(y.value(i).checked_mul(12).and_then(|v| v.checked_add(m.value(i))).ok_or_else(overflow)?) });
                }
                crate::expr::eval::interval::year_month_array(Int32Array::from(out), result)
            }
            MakeDtInterval => {
                let ints: Vec<Int32Array> = (0..3).map(|i| if i < args.len() { i32s(i) } else { Ok(Int32Array::from(vec![0; rows])) }).collect::<Result<_>>()?;
                let secs: Vec<Option<i128>> = if args.len() > 3 { arg(3)?.as_primitive::<Decimal128Type>().iter().collect() } else { vec![Some(0); rows] };
                let overflow = || crate::expr::eval::interval::interval_overflow(None);
                let mut out = Vec::with_capacity(rows);
                for i in 0..rows {
                    if ints.iter().any(|a| a.is_null(i)) || secs[i].is_none() {
                        out.push(None);
                        continue;
                    }
                    let parts = [(ints[0].value(i) as i128, MICROS_PER_DAY as i128), (ints[1].value(i) as i128, 3_600_000_000), (ints[2].value(i) as i128, 60_000_000)];
                    let us = parts.iter().map(|(v, u)| v * u).sum::<i128>() + secs[i].unwrap_or(0);
                    out.push(Some(i64::try_from(us).map_err(|_| overflow())?));
                }
                crate::expr::eval::interval::day_time_array(Int64Array::from(out), result)?
            }
            ExtractInterval => crate::expr::eval::interval::extract(arg(0)?, arg(1)?, result)?,
            DateAddInterval => crate::expr::eval::interval::date_add_calendar(arg(0)?, arg(1)?)?,
            CalendarDifference => crate::expr::eval::interval::calendar_difference(arg(0)?, arg(1)?)?,
            MakeInterval => crate::expr::eval::interval::make_interval(args, rows)?,
            Sequence(_) => super::sequence::eval(args, result, zone)?,
            ToNumber | TryToNumber | ToChar => {
                let f = strs(1)?;
                if f.is_null(0) {
                    return Ok(arrow::array::new_null_array(result, rows));
                }
                let fmt = super::number_format::NumberFormat::new(f.value(0))?;
                let mismatch = |input: &str, ty: &str| {
                    KilnError::exec(format!(
                        "[INVALID_FORMAT.MISMATCH_INPUT] The format is invalid: '{}'. The input {ty} '{input}' does not match the format. SQLSTATE: 42601",
                        f.value(0)
                    ))
                };
                if *self == ToChar {
                    let x = arg(0)?;
                    let DataType::Decimal128(_, scale) = x.data_type() else { return Err(KilnError::internal("to_char of a non-decimal")) };
                    let d = x.as_primitive::<Decimal128Type>();
                    Arc::new(d.iter().map(|v| v.map(|v| fmt.format(v, *scale))).collect::<StringArray>())
                } else {
                    let (p, _) = fmt.precision_scale();
                    if p > 38 {
                        return Err(KilnError::unsupported(format!("{} with a format of {p} digits (a decimal holds at most 38)", self.name())));
                    }
                    let s = strs(0)?;
                    let mut out = Vec::with_capacity(rows);
                    for v in s.iter() {
                        out.push(match v {
                            None => None,
                            Some(text) => match fmt.parse(text) {
                                Some(x) => Some(x),
                                None if *self == TryToNumber => None,
                                None => return Err(mismatch(text, "\"STRING\"")),
                            },
                        });
                    }
                    Arc::new(arrow::array::Decimal128Array::from(out).with_data_type(result.clone()))
                }
            }
            Mask => {
                // The replacement of each class (None: keep the character); defaults X x n.
                let char_at = |i: usize, default: Option<char>| -> Option<char> {
                    match args.get(i) {
                        None => default,
                        Some(a) if a.is_null(0) || a.data_type() == &DataType::Null => None,
                        Some(a) => a.as_string::<i32>().value(0).chars().next(),
                    }
                };
                let (up, low, dig, other) = (char_at(1, Some('X')), char_at(2, Some('x')), char_at(3, Some('n')), char_at(4, None));
                let input = if arg(0)?.data_type() == &DataType::Null { StringArray::new_null(rows) } else { strs(0)? };
                Arc::new(input.iter().map(|s| s.map(|s| s.chars().map(|c| {
                    let r = if c.is_uppercase() { up } else if c.is_lowercase() { low } else if c.is_ascii_digit() { dig } else { other };
                    r.unwrap_or(c)
                }).collect::<String>())).collect::<StringArray>())
            }
            UrlEncode => map_str(&|s| Some(url_encode(s)))?,
            UrlDecode | TryUrlDecode => {
                let mut out = Vec::with_capacity(rows);
                for s in strs(0)?.iter() {
                    out.push(match s.map(|s| (s, url_decode(s))) {
                        None => None,
                        Some((_, Some(d))) => Some(d),
                        Some(_) if *self == TryUrlDecode => None,
                        Some((s, None)) => {
                            return Err(KilnError::exec(format!(
                                "[CANNOT_DECODE_URL] The provided URL cannot be decoded: {s}. Please ensure that the URL is properly formatted and try again. SQLSTATE: 22546"
                            )))
                        }
                    });
                }
                Arc::new(StringArray::from(out))
            }
            IsNan => {
                let x = arg(0)?;
                let x = if x.data_type() == &DataType::Null { Arc::new(Float64Array::new_null(rows)) as ArrayRef } else { x.clone() };
                Arc::new(x.as_primitive::<Float64Type>().iter().map(|v| Some(v.is_some_and(f64::is_nan))).collect::<BooleanArray>())
            }
            LikeEscape => {
                let (p, e) = (strs(0)?, strs(1)?);
                let mut out = Vec::with_capacity(rows);
                for (p, e) in p.iter().zip(e.iter()) {
                    out.push(match (p, e.and_then(|e| e.chars().next())) {
                        (Some(p), Some(e)) => Some(like_with_backslash(p, e)?),
                        _ => None,
                    });
                }
                Arc::new(StringArray::from(out))
            }
            FormatString => {
                let f = strs(0)?;
                sized_strings("format_string", (0..rows).map(|i| if f.is_null(i) { Ok(None) } else { format_string(f.value(i), &args[1..], i).map(Some) }))?
            }
            NextDay => {
                let (d, dow) = (arg(0)?.as_primitive::<Date32Type>().clone(), strs(1)?);
                let mut out = Vec::with_capacity(rows);
                for i in 0..rows {
                    if d.is_null(i) || dow.is_null(i) {
                        out.push(None);
                        continue;
                    }
                    let target = day_of_week(dow.value(i)).ok_or_else(|| {
                        KilnError::exec(format!("[ILLEGAL_DAY_OF_WEEK] Illegal input for day of week: {}. SQLSTATE: 22009", dow.value(i)))
                    })?;
                    // 1970-01-01 was a Thursday (3 with Monday 0).
                    let today = (d.value(i) as i64 + 3).rem_euclid(7);
                    let ahead = (target - today - 1).rem_euclid(7) + 1;
                    out.push(Some(d.value(i) + ahead as i32));
                }
                Arc::new(Date32Array::from(out))
            }
            BitGet => {
                let x = arrow::compute::cast(arg(0)?, &DataType::Int64)?;
                let bits = match arg(0)?.data_type() {
                    DataType::Int8 => 8,
                    DataType::Int16 => 16,
                    DataType::Int32 => 32,
                    _ => 64,
                };
                let (x, pos) = (x.as_primitive::<Int64Type>(), i32s(1)?);
                let mut out = Vec::with_capacity(rows);
                for i in 0..rows {
                    if x.is_null(i) || pos.is_null(i) {
                        out.push(None);
                        continue;
                    }
                    let p = pos.value(i);
                    if !(0..bits).contains(&p) {
                        return Err(KilnError::exec(format!(
                            "[INVALID_PARAMETER_VALUE.BIT_POSITION_RANGE] The value of parameter(s) `pos` in `bit_get` is invalid: expects an integer value in [0, {bits}), but got {p}. SQLSTATE: 22023"
                        )));
                    }
                    out.push(Some(((x.value(i) >> p) & 1) as i8));
                }
                Arc::new(arrow::array::Int8Array::from(out))
            }
            ToBinary | TryToBinary => {
                let (s, f) = (strs(0)?, strs(1)?);
                let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(rows);
                for i in 0..rows {
                    if s.is_null(i) || f.is_null(i) {
                        out.push(None);
                        continue;
                    }
                    let (text, fmt) = (s.value(i), f.value(i));
                    let bytes = match binary_format(fmt) {
                        Some("hex") => unhex_bytes(text),
                        Some("base64") => super::codecs::strict_base64(text).then(|| base64_decode(text)).flatten(),
                        Some(_) => Some(text.as_bytes().to_vec()),
                        None if *self == TryToBinary => None,
                        None => {
                            return Err(KilnError::exec(format!(
                                "[DATATYPE_MISMATCH.INVALID_ARG_VALUE] The fmt value must to be a case-insensitive \"STRING\" literal of 'hex', 'utf-8', 'utf8', or 'base64', but got '{fmt}'."
                            )))
                        }
                    };
                    if bytes.is_none() && *self == ToBinary {
                        return Err(KilnError::exec(format!(
                            "[CONVERSION_INVALID_INPUT] The value '{text}' ('{}') cannot be converted to \"BINARY\" because it is malformed. Correct the value as per the syntax, or change its format. Use `try_to_binary` to tolerate malformed input and return NULL instead. SQLSTATE: 22018",
                            fmt.to_ascii_uppercase()
                        )));
                    }
                    out.push(bytes);
                }
                Arc::new(out.iter().map(|b| b.as_deref()).collect::<arrow::array::BinaryArray>())
            }
            Encode | Decode => {
                let charsets = strs(1)?;
                let texts = if *self == Encode { Some(strs(0)?) } else { None };
                let raw = if *self == Decode { Some(bytes(0)?) } else { None };
                let mut encoded: Vec<Option<Vec<u8>>> = vec![];
                let mut decoded: Vec<Option<String>> = vec![];
                for i in 0..rows {
                    let given = charsets.is_valid(i).then(|| charsets.value(i));
                    let input_null = texts.as_ref().map_or(false, |t| t.is_null(i)) || raw.as_ref().map_or(false, |r| r.is_null(i));
                    let Some(given) = given.filter(|_| !input_null) else {
                        encoded.push(None);
                        decoded.push(None);
                        continue;
                    };
                    let cs = super::codecs::charset(given).ok_or_else(|| {
                        KilnError::exec(format!(
                            "[INVALID_PARAMETER_VALUE.CHARSET] The value of parameter(s) `charset` in `{}` is invalid: expects one of the {}, but got {given}. SQLSTATE: 22023",
                            self.name(),
                            super::codecs::CHARSETS.join(", ")
                        ))
                    })?;
                    let malformed = || KilnError::exec(format!("[MALFORMED_CHARACTER_CODING] Invalid value found when performing `{}` with {given} SQLSTATE: 22000", self.name()));
                    match (&texts, &raw) {
                        (Some(t), _) => encoded.push(Some(super::codecs::encode(t.value(i), cs).ok_or_else(malformed)?)),
                        (_, Some(r)) => decoded.push(Some(super::codecs::decode(r.value(i), cs).ok_or_else(malformed)?)),
                        _ => return Err(KilnError::internal("encode/decode input")),
                    }
                }
                if *self == Encode {
                    Arc::new(encoded.iter().map(|b| b.as_deref()).collect::<arrow::array::BinaryArray>())
                } else {
                    Arc::new(StringArray::from(decoded))
                }
            }
            ParseUrl | TryParseUrl => {
                let (url, part) = (strs(0)?, strs(1)?);
                let key = if args.len() > 2 { Some(strs(2)?) } else { None };
                let mut patterns: std::collections::HashMap<String, regex::Regex> = std::collections::HashMap::new();
                let mut out = Vec::with_capacity(rows);
                for i in 0..rows {
                    if url.is_null(i) || part.is_null(i) || key.as_ref().is_some_and(|k| k.is_null(i)) {
                        out.push(None);
                        continue;
                    }
                    let Some(parsed) = super::codecs::Url::parse(url.value(i)) else {
                        if *self == TryParseUrl {
                            out.push(None);
                            continue;
                        }
                        return Err(KilnError::exec(format!(
                            "[INVALID_URL] The url is invalid: {}. Use `try_parse_url` to tolerate invalid URL and return NULL instead. SQLSTATE: 22P02",
                            url.value(i)
                        )));
                    };
                    let value = parsed.part(part.value(i));
                    out.push(match (&key, value) {
                        (None, v) => v,
                        (Some(_), _) if part.value(i) != "QUERY" => None,
                        (Some(_), None) => None,
                        // Spark's pattern `(&|^)key=([^&]*)`, the key read as a regular expression.
                        (Some(k), Some(query)) => {
                            let k = k.value(i);
                            if !patterns.contains_key(k) {
                                let re = regex::Regex::new(&format!("(&|^){k}=([^&]*)")).map_err(|e| {
                                    KilnError::exec(format!("[INVALID_PARAMETER_VALUE.PATTERN] The value of parameter(s) `key` in `parse_url` is invalid: '{k}' ({e}). SQLSTATE: 22023"))
                                })?;
                                patterns.insert(k.to_string(), re);
                            }
                            patterns.get(k).and_then(|re| re.captures(&query)).and_then(|c| c.get(2)).map(|m| m.as_str().to_string())
                        }
                    });
                }
                Arc::new(StringArray::from(out))
            }
            FromJson(_) | FromCsv(_) => {
                let options = super::from_text::ReadOptions::new(args.get(2), zone)?;
                match (self, result) {
                    (FromCsv(_), DataType::Struct(fields)) => super::from_text::from_csv(&strs(0)?, fields, &options)?,
                    (FromCsv(_), other) => return Err(KilnError::internal(format!("from_csv into {other}"))),
                    _ => super::from_text::from_json(&strs(0)?, result, &options)?,
                }
            }
            GetJsonObject => {
                let (json, path) = (strs(0)?, strs(1)?);
                // The path is a literal in most queries: parsed once per distinct text.
                let mut parsed: Option<(&str, Option<super::json::JsonPath>)> = None;
                let mut out = Vec::with_capacity(rows);
                for (j, p) in json.iter().zip(path.iter()) {
                    let (Some(j), Some(p)) = (j, p) else {
                        out.push(None);
                        continue;
                    };
                    if parsed.as_ref().is_none_or(|(text, _)| *text != p) {
                        parsed = Some((p, super::json::JsonPath::parse(p)));
                    }
                    out.push(parsed.as_ref().and_then(|(_, path)| path.as_ref()).and_then(|path| path.extract(j)));
                }
                Arc::new(StringArray::from(out))
            }
            FromUtcTimestamp | ToUtcTimestamp => {
                use crate::types::time_zone::{invalid_zone, Zone};
                let (t, zones) = (micros(0)?, strs(1)?);
                let mut zone: Option<(&str, Zone)> = None;
                let mut out = Vec::with_capacity(rows);
                for (t, z) in t.into_iter().zip(zones.iter()) {
                    let (Some(t), Some(z)) = (t, z) else {
                        out.push(None);
                        continue;
                    };
                    if zone.is_none_or(|(id, _)| id != z) {
                        zone = Some((z, Zone::parse(z).ok_or_else(|| invalid_zone(z))?));
                    }
                    let Some((_, tz)) = zone else { continue };
                    let moved = if *self == FromUtcTimestamp { tz.from_utc(t) } else { tz.to_utc(t) };
                    out.push(Some(moved.ok_or_else(|| KilnError::exec(format!("[DATETIME_OVERFLOW] Datetime operation overflow: {}({t}, {z}). SQLSTATE: 22008", self.name())))?));
                }
                to_ts(out)
            }
            Uuid => Arc::new((0..rows).map(|_| Some(random_uuid())).collect::<StringArray>()),
            IsValidUtf8 | MakeValidUtf8 | ValidateUtf8 | TryValidateUtf8 => {
                let x = arg(0)?;
                let owned;
                let rows_bytes: Vec<Option<&[u8]>> = match x.data_type() {
                    DataType::Binary => {
                        owned = x.as_binary::<i32>().clone();
                        owned.iter().collect()
                    }
                    _ => {
                        let s = x.as_string::<i32>();
                        (0..rows).map(|i| s.is_valid(i).then(|| s.value(i).as_bytes())).collect()
                    }
                };
                match self {
                    IsValidUtf8 => Arc::new(rows_bytes.iter().map(|b| b.map(|b| std::str::from_utf8(b).is_ok())).collect::<BooleanArray>()),
                    MakeValidUtf8 => Arc::new(rows_bytes.iter().map(|b| b.map(super::codecs::make_valid_utf8)).collect::<StringArray>()),
                    _ => {
                        let mut out = Vec::with_capacity(rows);
                        for b in rows_bytes {
                            out.push(match b.map(std::str::from_utf8) {
                                None => None,
                                Some(Ok(s)) => Some(s.to_string()),
                                Some(Err(_)) if *self == TryValidateUtf8 => None,
                                Some(Err(_)) => {
                                    return Err(KilnError::exec(format!(
                                        "[INVALID_UTF8_STRING] Invalid UTF8 byte sequence found in string: {}. SQLSTATE: 22029",
                                        super::codecs::show_bytes(b.unwrap_or_default())
                                    )))
                                }
                            });
                        }
                        Arc::new(StringArray::from(out))
                    }
                }
            }
        })
    }
}

/// Java's URLEncoder.encode(s, "UTF-8"): letters, digits and `.-*_` kept, space as `+`, every
/// other byte `%XX`.
fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Java's URLDecoder.decode(s, "UTF-8"): `+` is a space, `%XX` a byte (bad UTF-8 becomes
/// U+FFFD); None where a `%` is not followed by two hex digits.
fn url_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = b.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok()).and_then(|h| u8::from_str_radix(h, 16).ok())?;
                out.push(hex);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// A LIKE pattern with escape character `esc` rewritten with `\\` as the escape (Spark's
/// StringUtils.escapeLikeRegex rules: the escape precedes `_`, `%` or itself).
fn like_with_backslash(p: &str, esc: char) -> Result<String> {
    let mut out = String::with_capacity(p.len());
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == esc {
            match chars.next() {
                Some(n @ ('_' | '%')) => {
                    out.push('\\');
                    out.push(n);
                }
                Some(n) if n == esc => {
                    if n == '\\' {
                        out.push('\\');
                    }
                    out.push(n);
                }
                Some(n) => {
                    return Err(KilnError::exec(format!(
                        "[INVALID_FORMAT.ESC_IN_THE_MIDDLE] The format is invalid: '{p}'. The escape character is not allowed to precede '{n}'. SQLSTATE: 42601"
                    )))
                }
                None => {
                    return Err(KilnError::exec(format!(
                        "[INVALID_FORMAT.ESC_AT_THE_END] The format is invalid: '{p}'. The escape character is not allowed to end with. SQLSTATE: 42601"
                    )))
                }
            }
        } else if c == '\\' {
            out.push_str("\\\\");
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

/// to_binary's format by any case: `hex`, `utf-8` (also `utf8`) or `base64`.
fn binary_format(f: &str) -> Option<&'static str> {
    match f.to_ascii_lowercase().as_str() {
        "hex" => Some("hex"),
        "utf-8" | "utf8" => Some("utf-8"),
        "base64" => Some("base64"),
        _ => None,
    }
}

/// Spark's day-of-week names (DateTimeUtils.getDayOfWeekFromString): two letters, three, or
/// the whole name, any case; 0 is Monday.
fn day_of_week(s: &str) -> Option<i64> {
    let names = ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"];
    let u = s.to_ascii_uppercase();
    names.iter().position(|n| u == *n || (u.len() == 2 || u.len() == 3) && n.starts_with(u.as_str())).map(|p| p as i64)
}

/// A version-4 UUID from the process's random hash keys, a per-thread counter and the clock.
fn random_uuid() -> String {
    use std::cell::Cell;
    use std::hash::{BuildHasher, Hasher};
    thread_local!(static KEYS: (std::collections::hash_map::RandomState, Cell<u64>) = (std::collections::hash_map::RandomState::new(), Cell::new(0)));
    let (hi, lo) = KEYS.with(|(keys, n)| {
        let draw = |salt: u64| {
            let mut h = keys.build_hasher();
            n.set(n.get() + 1);
            h.write_u64(n.get() ^ salt);
            h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
            h.finish()
        };
        (draw(0x5bd1_e995), draw(0x9e37_79b9))
    });
    let hi = (hi & !0xF000) | 0x4000;
    let lo = (lo & !(0b11 << 62)) | (0b10 << 62);
    format!("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xFFFF, hi & 0xFFFF, lo >> 48, lo & 0xFFFF_FFFF_FFFF)
}

/// An integer literal (a folded scale argument).
fn constant_int(e: &Expr) -> Option<i32> {
    match e {
        Expr::Literal(ScalarValue::Int32(v)) => Some(*v),
        Expr::Literal(ScalarValue::Int64(v)) => i32::try_from(*v).ok(),
        Expr::Cast { child, .. } => constant_int(child),
        _ => None,
    }
}

/// from_json / from_csv's arguments as Spark's checks take them: a string, the schema (a NULL
/// of its type, from a string literal), and options made with `map()` of strings.
fn from_text_args(b: Builtin, f: MoreFn, args: Vec<Expr>) -> Result<Vec<Expr>> {
    let mut it = args.into_iter();
    let text = it.next().ok_or_else(|| KilnError::internal("from_json arity"))?;
    let t = text.data_type()?;
    let text = match t {
        DataType::Null => Expr::Cast { child: Box::new(text), to: DataType::Utf8, zone: None },
        DataType::Utf8 => text,
        ref s if crate::types::is_string(s) => Expr::Cast { child: Box::new(text), to: DataType::Utf8, zone: None },
        other => return Err(type_error(b, &text, "STRING", &other)),
    };
    let schema = it.next().ok_or_else(|| KilnError::internal("from_json arity"))?;
    let t = match &schema {
        Expr::Literal(ScalarValue::Null(t)) if !matches!(t, DataType::Null | DataType::Utf8) => t.clone(),
        other => {
            return Err(KilnError::analysis(
                "INVALID_SCHEMA.NON_STRING_LITERAL",
                format!("The input schema \"{}\" is not a valid schema string. The input expression must be string literal and not null.", crate::expr::sql_name(other)),
            ))
        }
    };
    let readable = match (f, &t) {
        (FromCsv(_), DataType::Struct(fields)) => fields.iter().find(|x| !super::from_text::readable(x.data_type(), false)).map(|x| x.data_type().clone()),
        (FromCsv(_), other) => Some(other.clone()),
        (_, DataType::Struct(_) | DataType::List(_) | DataType::Map(..)) if super::from_text::readable(&t, true) => None,
        (_, other) => Some(other.clone()),
    };
    if let Some(bad) = readable {
        return Err(KilnError::analysis("UNSUPPORTED_DATATYPE", format!("Unsupported data type \"{}\" in {}.", crate::types::sql_type_name(&bad), f.name())));
    }
    let mut out = vec![text, schema];
    if let Some(options) = it.next() {
        match options.data_type()? {
            DataType::Map(..) if options.foldable() => out.push(options),
            _ => return Err(KilnError::analysis("INVALID_OPTIONS.NON_MAP_FUNCTION", "Must use the `map()` function for options.")),
        }
    }
    Ok(out)
}

fn type_error(b: Builtin, e: &Expr, wanted: &str, t: &DataType) -> KilnError {
    KilnError::analysis(
        "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
        format!(
            "Cannot resolve \"{}({e})\" due to data type mismatch: the parameter requires the \"{wanted}\" type, however \"{e}\" has the type \"{}\".",
            b.name(),
            crate::types::sql_type_name(t)
        ),
    )
}

/// Spark's shorthands among these that are other expressions: the try_ arithmetic (the
/// operation under a `MoreFn` that makes failing rows NULL), nullifzero, zeroifnull,
/// equal_null. `Err(args)` when `name` is none of them.
pub(crate) fn rewrite(name: &str, args: Vec<Expr>) -> Result<std::result::Result<Expr, Vec<Expr>>> {
    let n = name.to_ascii_lowercase();
    let wrapped = match n.as_str() {
        "try_to_timestamp" => Some((TryToTimestamp, Builtin::ToTimestamp(crate::types::time_zone::Zone::UTC))),
        "try_to_date" => Some((TryToDate, Builtin::ToDate(Zone::UTC))),
        "try_make_timestamp" => Some((TryMakeTimestamp, Builtin::More(MakeTimestamp(Zone::UTC)))),
        "try_make_interval" => Some((TryMakeInterval, Builtin::More(MakeInterval))),
        _ => None,
    };
    if let Some((f, inner)) = wrapped {
        let (min, max) = inner.arity();
        if args.len() < min || args.len() > max {
            let expected = if min == max { min.to_string() } else { format!("[{}]", (min..=max).map(|k| k.to_string()).collect::<Vec<_>>().join(", ")) };
            return Err(KilnError::analysis("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", format!("The `{n}` requires {expected} parameters but the actual number is {}. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix.", args.len())));
        }
        let call = Expr::Function { func: ScalarFunc::Builtin(inner), args };
        return Ok(Ok(Expr::Function { func: ScalarFunc::Builtin(Builtin::More(f)), args: vec![call] }));
    }
    let (op, wanted) = match n.as_str() {
        "try_add" => (Some((TryAdd, BinaryOp::Plus)), 2),
        "try_subtract" => (Some((TrySubtract, BinaryOp::Minus)), 2),
        "try_multiply" => (Some((TryMultiply, BinaryOp::Multiply)), 2),
        "try_divide" => (Some((TryDivide, BinaryOp::Divide)), 2),
        "try_mod" => (Some((TryMod, BinaryOp::Modulo)), 2),
        "mod" => (None, 2),
        "nullifzero" | "zeroifnull" => (None, 1),
        "equal_null" => (None, 2),
        "div" => (None, 2),
        "positive" | "negative" => (None, 1),
        _ => return Ok(Err(args)),
    };
    if args.len() != wanted {
        return Err(KilnError::analysis("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", format!("The `{n}` requires {wanted} parameters but the actual number is {}. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix.", args.len())));
    }
    let mut it = args.into_iter();
    let (Some(a), b) = (it.next(), it.next()) else { return Err(KilnError::internal("rewrite arity")) };
    let zero = Expr::Literal(ScalarValue::Int32(0));
    Ok(Ok(match (op, b) {
        (Some((f, op)), Some(b)) => Expr::Function { func: ScalarFunc::Builtin(Builtin::More(f)), args: vec![a.binary(op, b)] },
        (None, Some(b)) if n == "mod" => a.binary(BinaryOp::Modulo, b),
        (None, Some(b)) if n == "div" => a.binary(BinaryOp::IntDivide, b),
        (_, None) if n == "negative" => Expr::Negative(Box::new(a)),
        // Spark's UnaryPositive: a number or interval as it is, a string read as a double.
        (_, None) if n == "positive" => {
            let t = a.data_type()?;
            if crate::types::is_string(&t) || t == DataType::Null {
                Expr::Cast { child: Box::new(a), to: DataType::Float64, zone: None }
            } else if crate::types::is_numeric(&t) || crate::types::interval::is_interval(&t) || t == crate::types::interval::CALENDAR {
                a
            } else {
                return Err(KilnError::analysis(
                    "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                    format!("Cannot resolve \"(+ {a})\" due to data type mismatch: The first parameter requires the (\"NUMERIC\" or \"INTERVAL DAY TO SECOND\" or \"INTERVAL YEAR TO MONTH\" or \"INTERVAL\") type, however \"{a}\" has the type \"{}\".", crate::types::sql_type_name(&t)),
                ));
            }
        }
        (None, Some(b)) => a.binary(BinaryOp::EqNullSafe, b),
        (_, None) if n == "zeroifnull" => Expr::Function { func: ScalarFunc::Coalesce, args: vec![a, zero] },
        _ => {
            let null = Expr::Literal(ScalarValue::Null(DataType::Null));
            Expr::CaseWhen { branches: vec![(a.clone().binary(BinaryOp::Eq, zero), null)], else_expr: Some(Box::new(a)), if_form: false }
        }
    }))
}

fn hex_lower(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Spark's unhex (and `X'...'` literals): an odd count reads a leading 0; None for a non-hex character.
pub(crate) fn unhex_bytes(s: &str) -> Option<Vec<u8>> {
    let digits: Vec<u8> = s.chars().map(|c| c.to_digit(16).map(|d| d as u8)).collect::<Option<_>>()?;
    let padded: Vec<u8> = if digits.len() % 2 == 1 { std::iter::once(0).chain(digits).collect() } else { digits };
    Some(padded.chunks(2).map(|p| p[0] * 16 + p[1]).collect())
}

/// Lenient as Spark's (commons-codec): characters outside the alphabet are skipped, decoding
/// stops at padding.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = vec![];
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes() {
        if c == b'=' {
            break;
        }
        let Some(v) = crate::format::BASE64_ALPHABET.iter().position(|&x| x == c) else { continue };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Spark's NumberConverter: the leading digits valid in `from` as an unsigned 64-bit value,
/// written in `|to|` (signed when `to` < 0); NULL for a base outside 2..36 or empty input;
/// ANSI: overflow is an error.
fn conv(s: &str, from: i32, to: i32) -> Result<Option<String>> {
    if !(2..=36).contains(&from) || !(2..=36).contains(&to.abs()) {
        return Ok(None);
    }
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    let (mut negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let mut v: u64 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(from as u32) else { break };
        v = v.checked_mul(from as u64).and_then(|v| v.checked_add(d as u64)).ok_or_else(|| {
            KilnError::exec("[ARITHMETIC_OVERFLOW] Overflow in function conv(). If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error. SQLSTATE: 22003")
        })?;
    }
    let mut v = v as i64;
    if negative && to > 0 {
        v = if v < 0 { -1 } else { -v };
    }
    if to < 0 && v < 0 {
        v = -v;
        negative = true;
    }
    let mut u = v as u64;
    let base = to.unsigned_abs() as u64;
    let mut out = vec![];
    loop {
        out.push(std::char::from_digit((u % base) as u32, base as u32).unwrap_or('0').to_ascii_uppercase());
        u /= base;
        if u == 0 {
            break;
        }
    }
    if negative && to < 0 {
        out.push('-');
    }
    Ok(Some(out.into_iter().rev().collect()))
}

/// Microseconds of a wall-clock time, or Spark's ANSI error naming the bad field.
fn civil_micros(y: i32, m: i32, d: i32, hh: i32, mm: i32, ss: i32) -> Result<i64> {
    let bad = |field: &str, range: &str, v: i32| {
        KilnError::exec(format!(
            "[DATETIME_FIELD_OUT_OF_BOUNDS.WITHOUT_SUGGESTION] Invalid value for {field} (valid values {range}): {v}. SQLSTATE: 22023"
        ))
    };
    let checks = [("Year", "-999999999 - 999999999", y, -999_999_999, 999_999_999), ("MonthOfYear", "1 - 12", m, 1, 12), ("DayOfMonth", "1 - 28/31", d, 1, 31), ("HourOfDay", "0 - 23", hh, 0, 23), ("MinuteOfHour", "0 - 59", mm, 0, 59), ("SecondOfMinute", "0 - 59", ss, 0, 59)];
    for (field, range, v, lo, hi) in checks {
        if v < lo || v > hi {
            return Err(bad(field, range, v));
        }
    }
    from_civil(y as i64, m as u32, d as u32, hh as u32, mm as u32, ss as u32, 0).ok_or_else(|| {
        KilnError::exec(format!("[DATETIME_FIELD_OUT_OF_BOUNDS.WITHOUT_SUGGESTION] Invalid date '{} {d}'. SQLSTATE: 22023", month_name(m)))
    })
}

fn month_name(m: i32) -> &'static str {
    ["JANUARY", "FEBRUARY", "MARCH", "APRIL", "MAY", "JUNE", "JULY", "AUGUST", "SEPTEMBER", "OCTOBER", "NOVEMBER", "DECEMBER"].get(m as usize - 1).copied().unwrap_or("")
}

/// Spark's DateTimeUtils.monthsBetween over wall-clock times: whole months when the days of month match or
/// both are month ends, else the difference in seconds over 31-day months; rounded to 8
/// digits when asked.
fn months_between(a: i64, b: i64, round: bool) -> f64 {
    let (x, y) = (civil(a), civil(b));
    let last = |c: &crate::types::timestamp::Civil| from_civil(c.year, c.month, c.day + 1, 0, 0, 0, 0).is_none();
    let months = (x.year - y.year) * 12 + x.month as i64 - y.month as i64;
    if x.day == y.day || (last(&x) && last(&y)) {
        return months as f64;
    }
    let sec = |c: &crate::types::timestamp::Civil| (c.hour * 3600 + c.minute * 60 + c.second) as i64;
    let diff = (x.day as i64 - y.day as i64) * 86_400 + sec(&x) - sec(&y);
    let v = months as f64 + diff as f64 / 2_678_400.0;
    if round { (v * 1e8).round() / 1e8 } else { v }
}

/// Spark's DateTimeUtils.timestampAdd: units up to hours move the instant `t`, days and longer
/// the wall-clock time `wall` (whose instant `instant` gives); months keep the day of month,
/// clamped to the month's end; ANSI: overflow is an error.
fn timestamp_add(unit: &str, n: i64, t: i64, wall: i64, instant: impl Fn(i64) -> Option<i64>) -> Result<i64> {
    let overflow = || KilnError::exec("[DATETIME_OVERFLOW] Datetime operation overflow. SQLSTATE: 22008");
    let micros = |per: i64| n.checked_mul(per).and_then(|d| t.checked_add(d)).ok_or_else(overflow);
    let days = |per: i64| n.checked_mul(per).and_then(|d| wall.checked_add(d)).and_then(&instant).ok_or_else(overflow);
    let months = |per: i64| -> Result<i64> {
        let m = n.checked_mul(per).ok_or_else(overflow)?;
        let c = civil(wall);
        let total = c.year * 12 + c.month as i64 - 1 + m;
        let (y, mo) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
        let day = (1..=c.day).rev().find(|d| from_civil(y, mo, *d, 0, 0, 0, 0).is_some()).unwrap_or(1);
        from_civil(y, mo, day, c.hour, c.minute, c.second, c.micros).and_then(&instant).ok_or_else(overflow)
    };
    match unit {
        "MICROSECOND" => micros(1),
        "MILLISECOND" => micros(1_000),
        "SECOND" => micros(1_000_000),
        "MINUTE" => micros(60_000_000),
        "HOUR" => micros(3_600_000_000),
        "DAY" | "DAYOFYEAR" => days(MICROS_PER_DAY),
        "WEEK" => days(7 * MICROS_PER_DAY),
        "MONTH" => months(1),
        "QUARTER" => months(3),
        _ => months(12),
    }
}

/// Spark's DateTimeUtils.timestampDiff: Java's ChronoUnit.between on the wall clock, whole
/// units truncated toward zero (a month counts once its day and time of day are reached).
fn timestamp_diff(unit: &str, start: i64, end: i64) -> i64 {
    let d = end - start;
    let months = || {
        let (a, b) = (civil(start), civil(end));
        let pack = |c: &crate::types::timestamp::Civil| (c.year * 12 + c.month as i64) * 32 + c.day as i64;
        let tod = |c: &crate::types::timestamp::Civil| (c.hour as i64 * 3600 + c.minute as i64 * 60 + c.second as i64) * 1_000_000 + c.micros as i64;
        // LocalDateTime.until: the end date moves a day back (forward) when its time of day is
        // before (after) the start's.
        let shift = if b.days > a.days && tod(&b) < tod(&a) { -1 } else if b.days < a.days && tod(&b) > tod(&a) { 1 } else { 0 };
        let b = civil((b.days + shift) * MICROS_PER_DAY);
        (pack(&b) - pack(&a)) / 32
    };
    match unit {
        "MICROSECOND" => d,
        "MILLISECOND" => d / 1_000,
        "SECOND" => d / 1_000_000,
        "MINUTE" => d / 60_000_000,
        "HOUR" => d / 3_600_000_000,
        "DAY" => d / MICROS_PER_DAY,
        "WEEK" => d / (7 * MICROS_PER_DAY),
        "MONTH" => months(),
        "QUARTER" => months() / 3,
        _ => months() / 12,
    }
}

/// Spark's `Overlay.calculate`: the characters before `pos`, the replacement, then the rest from
/// `pos + len` (`len` < 0: the replacement's length), each cut as `substring` cuts.
fn overlay(s: &str, replace: &str, pos: i32, len: i32) -> String {
    let len = if len >= 0 { len } else { i32::try_from(replace.chars().count()).unwrap_or(i32::MAX) };
    let head = super::eval::substring_sql(s, 1, pos.saturating_sub(1));
    let tail = super::eval::substring_sql(s, pos.saturating_add(len), i32::MAX);
    format!("{head}{replace}{tail}")
}

fn luhn(s: &str) -> bool {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let sum: u32 = s.bytes().rev().enumerate().map(|(i, b)| {
        let d = (b - b'0') as u32;
        if i % 2 == 1 { if d * 2 > 9 { d * 2 - 9 } else { d * 2 } } else { d }
    }).sum();
    sum % 10 == 0
}

/// Spark's UTF8String.soundex: unchanged unless it starts with an ASCII letter; H and W do not
/// separate equal codes, other non-coded letters do.
fn soundex(s: &str) -> String {
    const CODES: &[u8; 26] = b"01230127022455012623017202";
    let b = s.as_bytes();
    let Some(first) = b.first().map(|c| c.to_ascii_uppercase()).filter(|c| c.is_ascii_uppercase()) else { return s.to_string() };
    let mut out = vec![first, b'0', b'0', b'0'];
    let mut n = 1;
    let mut last = CODES[(first - b'A') as usize];
    for c in &b[1..] {
        let c = c.to_ascii_uppercase();
        if !c.is_ascii_uppercase() {
            last = b'0';
            continue;
        }
        let code = CODES[(c - b'A') as usize];
        if code == b'7' {
            continue;
        }
        if code != b'0' && code != last {
            out[n] = code;
            n += 1;
            if n > 3 {
                break;
            }
        }
        last = code;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Spark's WidthBucket.computeBucketNumber.
fn width_bucket(v: f64, min: f64, max: f64, n: i64) -> Option<i64> {
    if n <= 0 || n == i64::MAX || v.is_nan() || min == max || !min.is_finite() || !max.is_finite() {
        return None;
    }
    let (lo, hi) = (min.min(max), min.max(max));
    Some(if min < max {
        if v < lo { 0 } else if v >= hi { n + 1 } else { (n as f64 * (v - lo) / (hi - lo)) as i64 + 1 }
    } else if v > hi {
        0
    } else if v <= lo {
        n + 1
    } else {
        (n as f64 * (hi - v) / (hi - lo)) as i64 + 1
    })
}

/// bround: HALF_EVEN rounding to `d` digits (doubles through their shortest decimal form).
fn bround(a: &ArrayRef, d: i32, result: &DataType) -> Result<ArrayRef> {
    Ok(match (a.data_type(), result) {
        (DataType::Decimal128(_, s), DataType::Decimal128(rp, rs)) => {
            let (s, rs) = (*s as i32, *rs as i32);
            let out = a.as_primitive::<Decimal128Type>().iter().map(|v| {
                let v = v?;
                let r = if d < s { half_even(v, (s - d) as u32) } else { v };
                // Back to the result scale (d < 0: scale 0, a multiple of 10^-d).
                let at = d.min(s);
                Some(if at < rs { r * 10i128.pow((rs - at) as u32) } else { r / 10i128.pow((at - rs) as u32) })
            });
            Arc::new(out.collect::<arrow::array::Decimal128Array>().with_precision_and_scale(*rp, rs as i8)?)
        }
        (DataType::Float64, _) => Arc::new(a.as_primitive::<Float64Type>().iter().map(|x| x.map(|x| bround_double(x, d))).collect::<Float64Array>()),
        // Spark rounds a float through its double value.
        (DataType::Float32, _) => Arc::new(a.as_primitive::<arrow::datatypes::Float32Type>().unary::<_, arrow::datatypes::Float32Type>(|x| bround_double(x as f64, d) as f32)),
        (DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64, _) => crate::expr::eval::round_integers(a, |x| bround_integral(x, d))?,
        (other, _) => return Err(KilnError::internal(format!("bround of {other}"))),
    })
}

/// A double's shortest decimal digits as (unscaled, scale): 2.5 is (25, 1).
fn shortest(x: f64) -> Option<(i128, i32)> {
    let t = format!("{x:e}");
    let (mantissa, exp) = t.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    let frac = mantissa.split_once('.').map_or(0, |(_, f)| f.len() as i32);
    let digits: i128 = mantissa.replace('.', "").parse().ok()?;
    Some((digits, frac - exp))
}

fn bround_double(x: f64, d: i32) -> f64 {
    let Some((v, s)) = shortest(x).filter(|_| x.is_finite()) else { return x };
    if s <= d {
        return x;
    }
    let r = half_even(v, (s - d) as u32);
    format!("{r}e{}", -d).parse().unwrap_or(x)
}

/// Java's DecimalFormat("#,###,###,##0.00..."): HALF_EVEN to `d` decimals, grouped by three.
/// `text` is a plain or scientific decimal.
/// A java.text.DecimalFormat pattern (Locale.US) as format_number reads it: literal prefix and
/// suffix around `#`/`0` integer digits with `,` grouping, then `.` and `0`/`#` fraction digits.
#[derive(Debug, Clone, PartialEq)]
struct DecimalPattern {
    prefix: String,
    suffix: String,
    min_int: usize,
    grouping: Option<usize>,
    min_frac: usize,
    max_frac: usize,
    point_always: bool,
}

/// Spark's pattern for format_number(x, d): `#,###,###,###,###,###,##0` and d zeros after the point.
const DEFAULT_NUMBER_PATTERN: &str = "#,###,###,###,###,###,##0";

impl DecimalPattern {
    fn new(pattern: &str) -> Result<DecimalPattern> {
        let pattern = if pattern.is_empty() { DEFAULT_NUMBER_PATTERN } else { pattern };
        let unsupported = || KilnError::unsupported(format!("the format_number pattern '{pattern}' (kiln reads # 0 , . and literal text around them)"));
        let is_num = |c: char| matches!(c, '#' | '0' | ',' | '.');
        let first = pattern.find(is_num).ok_or_else(unsupported)?;
        let last = pattern.rfind(is_num).ok_or_else(unsupported)?;
        let (prefix, body, suffix) = (&pattern[..first], &pattern[first..=last], &pattern[last + 1..]);
        let special = |t: &str| t.chars().any(|c| matches!(c, '#' | '0' | ',' | '.' | '%' | '\u{2030}' | '\u{a4}' | '\'' | ';' | 'E' | '-'));
        if special(prefix) || special(suffix) || !body.chars().all(is_num) || body.matches('.').count() > 1 {
            return Err(unsupported());
        }
        let (int, frac) = body.split_once('.').map_or((body, None), |(i, f)| (i, Some(f)));
        let frac = frac.unwrap_or("");
        if frac.contains(',') {
            return Err(unsupported());
        }
        let grouping = int.rfind(',').map(|k| int[k + 1..].chars().filter(|c| *c != ',').count()).filter(|g| *g > 0);
        Ok(DecimalPattern {
            prefix: prefix.to_string(),
            suffix: suffix.to_string(),
            min_int: int.matches('0').count(),
            grouping,
            min_frac: frac.matches('0').count(),
            max_frac: frac.len(),
            point_always: body.ends_with('.'),
        })
    }

    fn fixed(d: usize) -> DecimalPattern {
        DecimalPattern { prefix: String::new(), suffix: String::new(), min_int: 1, grouping: Some(3), min_frac: d, max_frac: d, point_always: false }
    }

    /// The number written as plain or `e` text (a double's shortest digits), rounded HALF_EVEN.
    fn format(&self, text: &str) -> String {
        let (v, s) = match text.split_once('e') {
            Some(_) => text.parse::<f64>().ok().and_then(shortest).unwrap_or((0, 0)),
            None => {
                let frac = text.split_once('.').map_or(0, |(_, f)| f.len() as i32);
                (text.replace('.', "").parse().unwrap_or(0), frac)
            }
        };
        let d = self.max_frac as i32;
        // Rounding shortens the digits; scaling up appends zeros to their text (1e300, or a
        // 38-digit decimal with decimals added, is past any i128).
        let (r, s) = if s > d { (half_even(v, (s - d) as u32), d) } else { (v, s) };
        let fixed = fixed_text(r.unsigned_abs().to_string() + &"0".repeat((d - s) as usize), self.max_frac, false);
        let (int, frac) = fixed.split_once('.').unwrap_or((fixed.as_str(), ""));
        let frac = frac.trim_end_matches('0');
        let frac = if frac.len() < self.min_frac { &fixed[fixed.len() - self.max_frac..][..self.min_frac] } else { frac };
        let int = int.trim_start_matches('0');
        let int = format!("{}{int}", "0".repeat(self.min_int.saturating_sub(int.len())));
        let int = match self.grouping {
            Some(g) => group_digits(&int, g),
            None => int,
        };
        // DecimalFormat writes a zero when no digit would show, and keeps the sign of a
        // negative value that rounds to zero ("-0").
        let int = if int.is_empty() && frac.is_empty() { "0".to_string() } else { int };
        let point = if !frac.is_empty() || self.point_always { "." } else { "" };
        format!("{}{}{int}{point}{frac}{}", if v < 0 { "-" } else { "" }, self.prefix, self.suffix)
    }
}

/// |r|·10^-p with `p` decimals; the integer part grouped by thousands when asked.
fn unsigned_fixed(r: i128, p: usize, grouped: bool) -> String {
    fixed_text(r.unsigned_abs().to_string(), p, grouped)
}

/// The digits of an unsigned integer, read with `p` decimals, as `unsigned_fixed` writes them.
fn fixed_text(digits: String, p: usize, grouped: bool) -> String {
    let digits = if digits.len() <= p { format!("{}{digits}", "0".repeat(p + 1 - digits.len())) } else { digits };
    let (int, frac) = digits.split_at(digits.len() - p);
    let int = if grouped { group_thousands(int) } else { int.to_string() };
    if p == 0 { int } else { format!("{int}.{frac}") }
}

fn group_thousands(int: &str) -> String {
    group_digits(int, 3)
}

/// `int` with a `,` before every `size` digits from the right.
fn group_digits(int: &str, size: usize) -> String {
    let mut g = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % size == 0 {
            g.push(',');
        }
        g.push(c);
    }
    g
}

/// Java's Formatter for the common conversions: %s %d %f %e %g %x %o %c %b %% %n with flags
/// `-+0 ,(#`, a width and a precision; NULL arguments print "null".
fn format_string(fmt: &str, args: &[ArrayRef], row: usize) -> Result<String> {
    let bad = |msg: String| KilnError::exec(format!("[FORMAT_STRING] format_string('{fmt}'): {msg}"));
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    let mut next_arg = 0usize;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_ascii_digit() || "-+ 0,(.$#".contains(c) {
                spec.push(c);
                chars.next();
            } else {
                break;
            }
        }
        let conv = chars.next().ok_or_else(|| bad("the format ends inside a conversion".into()))?;
        if conv == '%' {
            out.push('%');
            continue;
        }
        if conv == 'n' {
            out.push('\n');
            continue;
        }
        // An explicit argument index: `%2$s`.
        let (index, spec) = match spec.split_once('$') {
            Some((i, rest)) => (Some(i.parse::<usize>().map_err(|_| bad(format!("bad argument index in %{spec}{conv}")))?), rest.to_string()),
            None => (None, spec),
        };
        let k = match index {
            Some(i) if i >= 1 => i - 1,
            Some(_) => return Err(bad("argument index 0".into())),
            None => {
                next_arg += 1;
                next_arg - 1
            }
        };
        let a = args.get(k).ok_or_else(|| bad(format!("missing an argument for %{spec}{conv}")))?;
        let flags: String = spec.chars().take_while(|c| "-+ 0,(#".contains(*c)).collect();
        let rest = &spec[flags.len()..];
        let (width, precision) = match rest.split_once('.') {
            Some((w, p)) => (w.parse::<usize>().ok(), p.parse::<usize>().ok()),
            None => (rest.parse::<usize>().ok(), None),
        };
        let value = if a.data_type() == &DataType::Null || a.is_null(row) { None } else { Some(ScalarValue::try_from_array(a.as_ref(), row)?) };
        let number = |v: &ScalarValue| -> Option<f64> {
            match v {
                ScalarValue::Int32(x) => Some(*x as f64),
                ScalarValue::Int64(x) => Some(*x as f64),
                // Java's Formatter widens a float to a double.
                ScalarValue::Float32(x) => Some(*x as f64),
                ScalarValue::Float64(x) => Some(*x),
                ScalarValue::Decimal(u, _, s) => Some(*u as f64 / 10f64.powi(*s as i32)),
                _ => None,
            }
        };
        // The decimal digits Java rounds (a double's shortest repr, a decimal's own) and the
        // exponent of the first: x = d.ddd * 10^exp.
        let sig_digits = |v: &ScalarValue, x: f64| -> (String, i32) {
            match v {
                ScalarValue::Decimal(u, _, s) if *u != 0 => {
                    let d = u.unsigned_abs().to_string();
                    let exp = d.len() as i32 - 1 - *s as i32;
                    (d.trim_end_matches('0').to_string(), exp)
                }
                _ => {
                    let t = format!("{:e}", x.abs());
                    let (m, e) = t.split_once('e').unwrap_or((&t, "0"));
                    (m.replace('.', ""), e.parse().unwrap_or(0))
                }
            }
        };
        let integer = |v: &ScalarValue| -> Option<i128> {
            match v {
                ScalarValue::Int32(x) => Some(*x as i128),
                ScalarValue::Int64(x) => Some(*x as i128),
                _ => None,
            }
        };
        // Java's IllegalFormatConversionException names the class Spark passes.
        let mismatch = |v: &ScalarValue| match v {
            ScalarValue::Decimal(..) => bad(format!("{conv} != org.apache.spark.sql.types.Decimal")),
            _ => bad(format!("%{conv} != {}", crate::types::spark_type_name(&v.data_type()))),
        };
        let signed = |neg: bool, body: String| -> String {
            if neg { if flags.contains('(') { format!("({body})") } else { format!("-{body}") } } else if flags.contains('+') { format!("+{body}") } else if flags.contains(' ') { format!(" {body}") } else { body }
        };
        let text = match (conv, &value) {
            (_, None) if "sSbB".contains(conv) => if conv == 'b' || conv == 'B' { "false".to_string() } else { "null".to_string() },
            (_, None) => "null".to_string(),
            ('s' | 'S', Some(v)) => {
                let s = match v {
                    ScalarValue::Utf8(s) => s.clone(),
                    other => other.to_string(),
                };
                let s = match precision { Some(p) => s.chars().take(p).collect(), None => s };
                if conv == 'S' { s.to_uppercase() } else { s }
            }
            ('b' | 'B', Some(v)) => match v {
                ScalarValue::Boolean(b) => b.to_string(),
                _ => "true".to_string(),
            },
            ('d', Some(v)) => {
                let x = integer(v).ok_or_else(|| mismatch(v))?;
                let digits = x.unsigned_abs().to_string();
                signed(x < 0, if flags.contains(',') { group_thousands(&digits) } else { digits })
            }
            ('x' | 'X' | 'o', Some(v)) => {
                let s = match v {
                    ScalarValue::Int32(x) => if conv == 'o' { format!("{:o}", *x as u32) } else { format!("{:x}", *x as u32) },
                    ScalarValue::Int64(x) => if conv == 'o' { format!("{:o}", *x as u64) } else { format!("{:x}", *x as u64) },
                    other => return Err(mismatch(other)),
                };
                // `#`: Java's radix prefix.
                let s = match (flags.contains('#'), conv) {
                    (true, 'o') => format!("0{s}"),
                    (true, _) => format!("0x{s}"),
                    _ => s,
                };
                if conv == 'X' { s.to_uppercase() } else { s }
            }
            ('c', Some(v)) => match v {
                ScalarValue::Int32(x) => char::from_u32(*x as u32).map(String::from).unwrap_or_default(),
                ScalarValue::Utf8(s) if s.chars().count() == 1 => s.clone(),
                other => return Err(mismatch(other)),
            },
            ('f' | 'e' | 'E' | 'g' | 'G', Some(v)) => {
                // Spark hands a decimal over as its own Decimal class, which Java's %f rejects.
                if integer(v).is_some() || matches!(v, ScalarValue::Decimal(..)) {
                    return Err(mismatch(v));
                }
                let x = number(v).ok_or_else(|| mismatch(v))?;
                let p = precision.unwrap_or(6);
                if !x.is_finite() {
                    if x.is_nan() { "NaN".into() } else { signed(x < 0.0, "Infinity".into()) }
                } else if conv == 'f' {
                    // Java rounds HALF_UP on the decimal value.
                    let (u, s) = match v {
                        ScalarValue::Decimal(u, _, s) => (*u, *s as i32),
                        _ => shortest(x).unwrap_or((0, 0)),
                    };
                    signed(x < 0.0, unsigned_fixed(half_up(u, s, p as i32), p, flags.contains(',')))
                } else if conv == 'e' || conv == 'E' {
                    let (d, e) = if x == 0.0 { (String::new(), 0) } else { round_significant(sig_digits(v, x), p + 1) };
                    let s = scientific(&d, e, p);
                    signed(x < 0.0, if conv == 'E' { s.to_uppercase() } else { s })
                } else {
                    // %g: `p` significant digits (0 reads 1), scientific unless 1e-4 <= |x| < 10^p.
                    let p = match precision {
                        None => 6,
                        Some(0) => 1,
                        Some(p) => p,
                    };
                    let s = if x == 0.0 {
                        unsigned_fixed(0, p - 1, flags.contains(','))
                    } else {
                        let (d, e) = round_significant(sig_digits(v, x), p);
                        if e < -4 || e >= p as i32 {
                            scientific(&d, e, p - 1)
                        } else {
                            // d * 10^(e - p + 1): the digits at scale p - 1 - e.
                            fixed_text(d, (p as i32 - 1 - e) as usize, flags.contains(','))
                        }
                    };
                    signed(x < 0.0, if conv == 'G' { s.to_uppercase() } else { s })
                }
            }
            (other, _) => return Err(bad(format!("the conversion %{other} is not supported"))),
        };
        let width = width.unwrap_or(0);
        let len = text.chars().count();
        if len >= width {
            out.push_str(&text);
        } else if flags.contains('-') {
            out.push_str(&text);
            out.push_str(&" ".repeat(width - len));
        } else if flags.contains('0') && value.is_some() && "dfxXoeEgG".contains(conv) {
            let (sign, body) = if text.starts_with(['-', '+', ' ']) { text.split_at(1) } else { ("", text.as_str()) };
            out.push_str(sign);
            out.push_str(&"0".repeat(width - len));
            out.push_str(body);
        } else {
            out.push_str(&" ".repeat(width - len));
            out.push_str(&text);
        }
    }
    Ok(out)
}

/// Decimal digits (x = d.ddd * 10^exp) rounded HALF_UP to `n` significant digits (padded with
/// zeros), as Java's FormattedFloatingDecimal; a carry moves the exponent.
fn round_significant((digits, exp): (String, i32), n: usize) -> (String, i32) {
    let mut d: Vec<u8> = digits.bytes().map(|b| b - b'0').collect();
    let mut exp = exp;
    if d.len() > n {
        let up = d[n] >= 5;
        d.truncate(n);
        if up {
            let mut i = n;
            loop {
                if i == 0 {
                    d.insert(0, 1);
                    d.truncate(n.max(1));
                    exp += 1;
                    break;
                }
                i -= 1;
                if d[i] == 9 {
                    d[i] = 0;
                } else {
                    d[i] += 1;
                    break;
                }
            }
        }
    }
    d.resize(n.max(1), 0);
    (d.into_iter().map(|b| (b + b'0') as char).collect(), exp)
}

/// `d.ddd` with `p` decimals (from `digits`, padded) and Java's `e+XX` exponent.
fn scientific(digits: &str, exp: i32, p: usize) -> String {
    let digits = format!("{digits:0<width$}", width = p + 1);
    let (first, rest) = digits.split_at(1);
    let mantissa = if p == 0 { first.to_string() } else { format!("{first}.{}", &rest[..p]) };
    format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

/// unscaled·10^-scale as an unscaled value at scale `p`, rounded HALF_UP.
fn half_up(u: i128, scale: i32, p: i32) -> i128 {
    if scale > p {
        let m = 10i128.pow((scale - p) as u32);
        let (q, rem) = (u / m, u % m);
        if rem.abs() * 2 >= m { q + u.signum() } else { q }
    } else {
        u * 10i128.pow((p - scale) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conv_matches_spark() {
        assert_eq!(conv("100", 2, 10).ok().flatten().as_deref(), Some("4"));
        assert_eq!(conv("-10", 16, -10).ok().flatten().as_deref(), Some("-16"));
        assert_eq!(conv("-10", 10, 16).ok().flatten().as_deref(), Some("FFFFFFFFFFFFFFF6"));
        assert_eq!(conv("10a", 10, 16).ok().flatten().as_deref(), Some("A"));
        assert_eq!(conv("1", 1, 10).ok().flatten(), None);
    }

    #[test]
    fn soundex_and_luhn() {
        assert_eq!(soundex("Miller"), "M460");
        assert_eq!(soundex("Ashcraft"), "A261");
        assert_eq!(soundex("Tymczak"), "T522");
        assert_eq!(soundex("1abc"), "1abc");
        assert!(luhn("79927398713"));
        assert!(!luhn("79927398714"));
    }

    #[test]
    fn numbers() {
        assert_eq!(DecimalPattern::fixed(4).format("12332.123456"), "12,332.1235");
        assert_eq!(DecimalPattern::fixed(0).format("-0.5"), "-0");
        // Past i128 once scaled: the zeros are appended to the digits' text.
        assert_eq!(DecimalPattern::fixed(4).format("12345678901234567890123456789012345678"), "12,345,678,901,234,567,890,123,456,789,012,345,678.0000");
        assert_eq!(DecimalPattern::fixed(2).format("1e300"), format!("1{}.00", ",000".repeat(100)));
        let p = |t: &str| DecimalPattern::new(t).expect("a pattern kiln reads");
        assert_eq!(p("##################.###").format("12332.123456"), "12332.123");
        assert_eq!(p("#.##").format("0.5"), ".5");
        assert_eq!(p("#.##").format("0"), "0");
        assert_eq!(p("$#,##0.00 USD").format("1234.5"), "$1,234.50 USD");
        assert_eq!(p("").format("1234567.891"), "1,234,568");
        assert!(DecimalPattern::new("0.00%").is_err());
        assert_eq!(bround_double(2.5, 0), 2.0);
        assert_eq!(bround_double(3.5, 0), 4.0);
        assert_eq!(bround_double(-0.125, 2), -0.12);
        assert_eq!(bround_integral(25, -1), 20);
        assert_eq!(crate::format::base64_encode(b"Spark SQL"), "U3BhcmsgU1FM");
        assert_eq!(base64_decode("U3BhcmsgU1FM"), Some(b"Spark SQL".to_vec()));
    }
}
