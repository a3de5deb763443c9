//! More of Spark's built-in scalar functions (math, string, date, bitwise), each described
//! once here: name and aliases, argument count, implicit casts, result type and evaluation
//! (vectorized over Arrow arrays; generated code leaves them to the interpreter).

use std::sync::Arc;

use arrow::array::{new_null_array, Array, ArrayRef, AsArray, BooleanArray, Date32Array, Float64Array, Int32Array, Int64Array, StringArray};
use arrow::compute::kernels::cmp;
use arrow::compute::{cast, date_part, is_not_null, is_null, DatePart};
use arrow::datatypes::{DataType, Date32Type, Decimal128Type, Float64Type, Int32Type, Int64Type};

use super::Expr;
use crate::error::{KilnError, Result};
use crate::types::time_zone::Zone;
use crate::types::{format_date, parse_date, wider_type};

/// Built-in scalar functions beyond the core ones of `ScalarFunc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Builtin {
    Sqrt, Cbrt, Exp, Ln, Log10, Log2, Log, Power, Sin, Cos, Tan, Asin, Acos, Atan, Atan2, Degrees, Radians, Signum, Ceil, Floor, Pi,
    Sinh, Cosh, Tanh, Asinh, Acosh, Atanh,
    Greatest, Least,
    ConcatWs, Lpad, Rpad, Repeat, Reverse, Initcap, Instr, Locate, Ascii, Chr, Translate, SplitPart, Levenshtein, Left, Right,
    Month, Day, Quarter, DayOfWeek, DayOfYear, WeekOfYear, LastDay, AddMonths, Trunc, CurrentDate(Zone),
    BitAnd, BitOr, BitXor, BitNot, ShiftLeft, ShiftRight, ShiftRightUnsigned, BitCount,
    RLike, RegexpReplace, RegexpExtract, RegexpExtractAll, RegexpCount, RegexpSubstr, RegexpInstr, Split,
    StartsWith, EndsWith, Contains, OctetLength, BitLength, SubstringIndex, FindInSet, Space, Nanvl, Cot, Sec, Csc, E, Factorial, TypeOf,
    Hour(Zone), Minute(Zone), Second(Zone), ToTimestamp(Zone), ToDate(Zone), DateFormat(Zone), CurrentTimestamp, UnixTimestamp(Zone), FromUnixtime(Zone), DateTrunc(Zone),
    /// localtimestamp(): the wall-clock time now in the session zone, a TIMESTAMP_NTZ.
    LocalTimestamp(Zone),
    /// `extract(SECOND FROM ts)`: the seconds with their fraction, a decimal(8,6) (Spark's
    /// SecondWithFraction); made by the parser, not callable.
    SecondWithFraction(Zone),
    Size, SortArray, ArraySort, ArrayContains, ArrayJoin, ArrayDistinct, ArrayMax, ArrayMin,
    /// `array(a, b, ...)`; element_at (1-based, from the end when negative), try_element_at, get (0-based, NULL out of bounds).
    MakeArray, ElementAt, TryElementAt, Get, ArrayPosition, ArrayRemove, Slice, ArrayRepeat,
    /// `a[i]` (0-based; an error out of bounds under ANSI); made by the parser.
    GetItem,
    /// `timestamp ± interval` (args: timestamp, microseconds, months); made by the analyzer, not callable.
    TimeAdd(Zone),
    /// `TRY_CAST(x AS t)` (args: x, a NULL of type t): NULL where the cast fails; made by the parser.
    TryCast(Zone),
    /// The functions of builtins_more.rs.
    More(super::builtins_more::MoreFn),
    /// The struct and map functions of nested.rs.
    Nested(super::nested::NestedFn),
}

use super::strict_math as sm;
use Builtin::*;

/// Every builtin, for name look-up and suggestions.
const ALL: &[Builtin] = &[
    Sqrt, Cbrt, Exp, Ln, Log10, Log2, Log, Power, Sin, Cos, Tan, Asin, Acos, Atan, Atan2, Degrees, Radians, Signum, Ceil, Floor, Pi,
    Sinh, Cosh, Tanh, Asinh, Acosh, Atanh, Greatest,
    Least, ConcatWs, Lpad, Rpad, Repeat, Reverse, Initcap, Instr, Locate, Ascii, Chr, Translate, SplitPart, Levenshtein, Left, Right, Month,
    Day, Quarter, DayOfWeek, DayOfYear, WeekOfYear, LastDay, AddMonths, Trunc, CurrentDate(Zone::UTC), RLike, RegexpReplace, RegexpExtract, RegexpExtractAll,
    RegexpCount, RegexpSubstr, RegexpInstr, Split, StartsWith, EndsWith, Contains, OctetLength, BitLength, SubstringIndex, FindInSet, Space, Nanvl,
    Cot, Sec, Csc, E, Factorial, TypeOf, ShiftLeft, ShiftRight, ShiftRightUnsigned, BitCount, Hour(Zone::UTC), Minute(Zone::UTC), Second(Zone::UTC), ToTimestamp(Zone::UTC), ToDate(Zone::UTC), DateFormat(Zone::UTC), CurrentTimestamp, LocalTimestamp(Zone::UTC), UnixTimestamp(Zone::UTC),
    FromUnixtime(Zone::UTC), DateTrunc(Zone::UTC), Size, SortArray, ArraySort, ArrayContains, ArrayJoin, ArrayDistinct, ArrayMax, ArrayMin, MakeArray, ElementAt,
    TryElementAt, Get, ArrayPosition, ArrayRemove, Slice, ArrayRepeat,
];

impl Builtin {
    /// Spark's name.
    pub fn name(&self) -> &'static str {
        match self {
            Sqrt => "sqrt", Cbrt => "cbrt", Exp => "exp", Ln => "ln", Log10 => "log10", Log2 => "log2", Log => "log", Power => "power",
            Sin => "sin", Cos => "cos", Tan => "tan", Asin => "asin", Acos => "acos", Atan => "atan", Atan2 => "atan2",
            Degrees => "degrees", Radians => "radians", Signum => "signum", Ceil => "ceil", Floor => "floor", Pi => "pi",
            Sinh => "sinh", Cosh => "cosh", Tanh => "tanh", Asinh => "asinh", Acosh => "acosh", Atanh => "atanh",
            Greatest => "greatest", Least => "least", ConcatWs => "concat_ws", Lpad => "lpad", Rpad => "rpad", Repeat => "repeat",
            Reverse => "reverse", Initcap => "initcap", Instr => "instr", Locate => "locate", Ascii => "ascii", Chr => "chr",
            Translate => "translate", SplitPart => "split_part", Levenshtein => "levenshtein", Left => "left", Right => "right",
            Month => "month", Day => "day", Quarter => "quarter", DayOfWeek => "dayofweek", DayOfYear => "dayofyear",
            WeekOfYear => "weekofyear", LastDay => "last_day", AddMonths => "add_months", Trunc => "trunc", CurrentDate(_) => "current_date",
            BitAnd => "&", BitOr => "|", BitXor => "^", BitNot => "~", ShiftLeft => "shiftleft", ShiftRight => "shiftright",
            ShiftRightUnsigned => "shiftrightunsigned", BitCount => "bit_count",
            RLike => "rlike", RegexpReplace => "regexp_replace", RegexpExtract => "regexp_extract", RegexpExtractAll => "regexp_extract_all", RegexpCount => "regexp_count",
            RegexpSubstr => "regexp_substr", RegexpInstr => "regexp_instr", Split => "split",
            StartsWith => "startswith", EndsWith => "endswith", Contains => "contains", OctetLength => "octet_length",
            BitLength => "bit_length", SubstringIndex => "substring_index", FindInSet => "find_in_set", Space => "space", Nanvl => "nanvl",
            Cot => "cot", Sec => "sec", Csc => "csc", E => "e", Factorial => "factorial", TypeOf => "typeof",
            Hour(_) => "hour", Minute(_) => "minute", Second(_) => "second", ToTimestamp(_) => "to_timestamp", ToDate(_) => "to_date",
            DateFormat(_) => "date_format", CurrentTimestamp => "current_timestamp", LocalTimestamp(_) => "localtimestamp", UnixTimestamp(_) => "unix_timestamp",
            SecondWithFraction(_) => "secondwithfraction",
            FromUnixtime(_) => "from_unixtime", DateTrunc(_) => "date_trunc", TimeAdd(_) => "timeadd", TryCast(_) => "try_cast",
            Size => "size", SortArray => "sort_array", ArraySort => "array_sort", ArrayContains => "array_contains",
            ArrayJoin => "array_join", ArrayDistinct => "array_distinct", ArrayMax => "array_max", ArrayMin => "array_min",
            MakeArray => "array", ElementAt => "element_at", TryElementAt => "try_element_at", Get => "get", GetItem => "get_item",
            ArrayPosition => "array_position", ArrayRemove => "array_remove", Slice => "slice", ArrayRepeat => "array_repeat",
            More(m) => m.name(),
            Nested(n) => n.name(),
        }
    }

    /// This function reading and writing TIMESTAMP wall-clock times in `zone` (Spark's
    /// TimeZoneAwareExpression); the same function for one that does not.
    pub fn with_zone(self, zone: Zone) -> Builtin {
        match self {
            Hour(_) => Hour(zone),
            Minute(_) => Minute(zone),
            Second(_) => Second(zone),
            ToTimestamp(_) => ToTimestamp(zone),
            ToDate(_) => ToDate(zone),
            UnixTimestamp(_) => UnixTimestamp(zone),
            DateFormat(_) => DateFormat(zone),
            FromUnixtime(_) => FromUnixtime(zone),
            DateTrunc(_) => DateTrunc(zone),
            CurrentDate(_) => CurrentDate(zone),
            LocalTimestamp(_) => LocalTimestamp(zone),
            SecondWithFraction(_) => SecondWithFraction(zone),
            TimeAdd(_) => TimeAdd(zone),
            TryCast(_) => TryCast(zone),
            More(m) => More(m.with_zone(zone)),
            other => other,
        }
    }

    /// Looks a function up by name or alias (any case).
    pub fn from_name(name: &str) -> Option<Builtin> {
        let n = name.to_ascii_lowercase();
        let alias = match n.as_str() {
            "pow" => Some(Power),
            "sign" => Some(Signum),
            "ceiling" => Some(Ceil),
            "dayofmonth" => Some(Day),
            "char" => Some(Chr),
            "week" => Some(WeekOfYear),
            "curdate" => Some(CurrentDate(Zone::UTC)),
            "position" => Some(Locate),
            "&" => Some(BitAnd),
            "|" => Some(BitOr),
            "^" => Some(BitXor),
            "~" => Some(BitNot),
            "regexp" | "regexp_like" => Some(RLike),
            "now" => Some(CurrentTimestamp),
            "cardinality" => Some(Size),
            _ => None,
        };
        alias.or_else(|| ALL.iter().copied().find(|b| b.name() == n)).or_else(|| super::builtins_more::MoreFn::from_name(&n).map(More))
            .or_else(|| super::nested::NestedFn::from_name(&n).map(Nested))
    }

    /// Names for "did you mean" suggestions.
    pub fn names() -> impl Iterator<Item = &'static str> {
        ALL.iter().map(|b| b.name()).chain(super::builtins_more::MoreFn::names()).chain(super::nested::NestedFn::names())
    }

    /// The fewest and most arguments.
    pub fn arity(&self) -> (usize, usize) {
        match self {
            Pi | E | CurrentDate(_) | CurrentTimestamp | LocalTimestamp(_) => (0, 0),
            TryCast(_) => (2, 2),
            StartsWith | EndsWith | Contains | FindInSet | Nanvl | ShiftLeft | ShiftRight | ShiftRightUnsigned => (2, 2),
            SubstringIndex => (3, 3),
            ToTimestamp(_) | ToDate(_) | FromUnixtime(_) => (1, 2),
            UnixTimestamp(_) => (0, 2),
            DateFormat(_) | DateTrunc(_) => (2, 2),
            TimeAdd(_) => (3, 3),
            Log => (1, 2),
            Power | Atan2 | Repeat | Instr | Levenshtein | Left | Right | AddMonths | Trunc | BitAnd | BitOr | BitXor => (2, 2),
            Ceil | Floor => (1, 2),
            Greatest | Least => (2, usize::MAX),
            ConcatWs => (1, usize::MAX),
            Lpad | Rpad => (2, 3),
            Locate => (2, 3),
            Translate | SplitPart => (3, 3),
            RLike | RegexpCount | RegexpSubstr => (2, 2),
            RegexpExtract | RegexpExtractAll | RegexpInstr | Split => (2, 3),
            RegexpReplace => (3, 4),
            SortArray => (1, 2),
            ArrayContains => (2, 2),
            ArrayJoin => (2, 3),
            MakeArray => (0, usize::MAX),
            ElementAt | TryElementAt | Get | GetItem | ArrayPosition | ArrayRemove | ArrayRepeat => (2, 2),
            Slice => (3, 3),
            More(m) => m.arity(),
            Nested(n) => n.arity(),
            _ => (1, 1),
        }
    }

    /// NULL whenever an argument is NULL (the optimizer infers `isnotnull` from these).
    pub fn null_intolerant(&self) -> bool {
        if let More(m) = self {
            return m.null_intolerant();
        }
        if let Nested(n) = self {
            return n.null_intolerant();
        }
        !matches!(self, Greatest | Least | ConcatWs | CurrentDate(_) | Pi | E | CurrentTimestamp | LocalTimestamp(_) | UnixTimestamp(_) | Nanvl | TypeOf | TryCast(_) | MakeArray | ArrayRepeat)
    }

    /// Whether the result may be NULL, given which arguments may be.
    pub fn nullable(&self, args: &[bool]) -> bool {
        match self {
            Greatest | Least => args.iter().all(|n| *n),
            ConcatWs => args.first().copied().unwrap_or(false),
            Ln | Log10 | Log2 | Log | Trunc | LastDay | AddMonths | Levenshtein | RegexpSubstr => true,
            Pi | E | CurrentDate(_) | CurrentTimestamp | LocalTimestamp(_) | TypeOf => false,
            Factorial | TryCast(_) => true,
            Nanvl => args.first().copied().unwrap_or(false) || args.get(1).copied().unwrap_or(false),
            DateTrunc(_) => true,
            // A NULL element can be the answer.
            ArrayContains | ArrayMax | ArrayMin | ElementAt | TryElementAt | Get | GetItem => true,
            MakeArray => false,
            ArrayRepeat => args.get(1).copied().unwrap_or(true),
            More(m) => m.nullable(args),
            Nested(n) => n.nullable(args),
            _ => args.iter().any(|n| *n),
        }
    }

    fn is_math(&self) -> bool {
        matches!(
            self,
            Sqrt | Cbrt | Exp | Ln | Log10 | Log2 | Log | Power | Sin | Cos | Tan | Asin | Acos | Atan | Atan2 | Degrees | Radians | Signum | Cot | Sec | Csc | Nanvl
                | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh
        )
    }

    /// The arguments with Spark's implicit casts.
    pub fn coerce(&self, args: Vec<Expr>) -> Result<Vec<Expr>> {
        let cast_to = |e: Expr, t: &DataType| -> Result<Expr> {
            Ok(if &e.data_type()? == t { e } else { Expr::Cast { child: Box::new(e), to: t.clone(), zone: None } })
        };
        let check_numeric = |e: &Expr| -> Result<()> {
            let t = e.data_type()?;
            if crate::types::is_numeric(&t) || crate::types::is_string(&t) || t == DataType::Null {
                Ok(())
            } else {
                Err(self.type_error(e, "numeric", &t))
            }
        };
        Ok(match self {
            b if b.is_math() => {
                args.iter().try_for_each(check_numeric)?;
                args.into_iter().map(|a| cast_to(a, &DataType::Float64)).collect::<Result<_>>()?
            }
            Ceil | Floor => {
                let mut it = args.into_iter();
                let x = it.next().ok_or_else(|| KilnError::internal("ceil arity"))?;
                check_numeric(&x)?;
                let scale = it.next();
                if let Some(s) = &scale {
                    if !matches!(s, Expr::Literal(crate::types::ScalarValue::Int32(_))) {
                        return Err(KilnError::analysis(
                            "DATATYPE_MISMATCH.NON_FOLDABLE_INPUT",
                            format!("Cannot resolve \"{}\": the scale {s} must be an integer literal.", self.name()),
                        ));
                    }
                }
                let x = match (x.data_type()?, &scale) {
                    (DataType::Decimal128(..), _) | (DataType::Int64, _) => x,
                    (DataType::Int32 | DataType::Int16 | DataType::Int8, _) => cast_to(x, &DataType::Int64)?,
                    _ => cast_to(x, &DataType::Float64)?,
                };
                std::iter::once(x).chain(scale).collect()
            }
            // The arguments widened to one type (an array's also by string promotion, as Spark's
            // findWiderCommonType; greatest / least without it).
            Greatest | Least | MakeArray => {
                let mut t = DataType::Null;
                for a in &args {
                    let at = a.data_type()?;
                    let widened = if *self == MakeArray { crate::types::common_type(&t, &at) } else { wider_type(&t, &at) };
                    t = widened.ok_or_else(|| {
                        let list = |f: &dyn Fn(&Expr) -> String| args.iter().map(f).collect::<Vec<_>>().join(", ");
                        let types = list(&|a| a.data_type().map(|t| crate::types::spark_type_name(&t)).unwrap_or_default());
                        KilnError::analysis(
                            "DATATYPE_MISMATCH.DATA_DIFF_TYPES",
                            format!("Cannot resolve \"{}({})\" due to data type mismatch: Input to `{}` should all be the same type, but it's ({types}).", self.name(), list(&super::sql_name), self.name()),
                        )
                    })?;
                }
                args.into_iter().map(|a| cast_to(a, &t)).collect::<Result<_>>()?
            }
            ShiftLeft | ShiftRight | ShiftRightUnsigned | BitCount => {
                let mut it = args.into_iter();
                let x = it.next().ok_or_else(|| KilnError::internal("shift arity"))?;
                let t = x.data_type()?;
                if !crate::types::is_integral(&t) && t != DataType::Null {
                    return Err(self.type_error(&x, "integral", &t));
                }
                let t = if t == DataType::Int64 || *self == BitCount { DataType::Int64 } else { DataType::Int32 };
                std::iter::once(cast_to(x, &t)).chain(it.map(|n| cast_to(n, &DataType::Int32))).collect::<Result<_>>()?
            }
            BitAnd | BitOr | BitXor | BitNot => {
                let mut t = DataType::Null;
                for a in &args {
                    let at = a.data_type()?;
                    if !crate::types::is_integral(&at) && at != DataType::Null {
                        return Err(self.type_error(a, "integral", &at));
                    }
                    t = wider_type(&t, &at).unwrap_or(DataType::Int64);
                }
                // Spark's bitwise operators keep their (widened) integral type: `1Y & 3Y` is tinyint.
                let t = if t == DataType::Null { DataType::Int32 } else { t };
                args.into_iter().map(|a| cast_to(a, &t)).collect::<Result<_>>()?
            }
            Month | Day | Quarter | DayOfWeek | DayOfYear | WeekOfYear | LastDay => {
                for a in &args {
                    let t = a.data_type()?;
                    // EXTRACT reads an interval's fields; the functions take a date only.
                    if crate::types::interval::is_interval(&t) || t == crate::types::interval::CALENDAR {
                        return Err(self.type_error(a, "DATE", &t));
                    }
                }
                args.into_iter().map(|a| cast_to(a, &DataType::Date32)).collect::<Result<_>>()?
            }
            AddMonths => {
                let mut it = args.into_iter();
                let d = it.next().ok_or_else(|| KilnError::internal("add_months arity"))?;
                let n = it.next().ok_or_else(|| KilnError::internal("add_months arity"))?;
                vec![cast_to(d, &DataType::Date32)?, cast_to(n, &DataType::Int32)?]
            }
            Trunc => {
                let mut it = args.into_iter();
                let d = it.next().ok_or_else(|| KilnError::internal("trunc arity"))?;
                let f = it.next().ok_or_else(|| KilnError::internal("trunc arity"))?;
                vec![cast_to(d, &DataType::Date32)?, cast_to(f, &DataType::Utf8)?]
            }
            // Spark's BinaryPad: binary padded with binary (zero bytes when no pad is given).
            Lpad | Rpad if binary_pad(&args)? => {
                let mut args = args;
                if args.len() == 2 {
                    args.push(Expr::Literal(crate::types::ScalarValue::Binary(vec![0])));
                }
                let len = args.remove(1);
                vec![args.remove(0), cast_to(len, &DataType::Int32)?, args.remove(0)]
            }
            // (string, int, string?) and (string, int) shapes.
            Lpad | Rpad | Repeat | Left | Right => args
                .into_iter()
                .enumerate()
                .map(|(i, a)| cast_to(a, if i == 1 { &DataType::Int32 } else { &DataType::Utf8 }))
                .collect::<Result<_>>()?,
            Locate => args
                .into_iter()
                .enumerate()
                .map(|(i, a)| cast_to(a, if i == 2 { &DataType::Int32 } else { &DataType::Utf8 }))
                .collect::<Result<_>>()?,
            SplitPart | RegexpExtract | RegexpExtractAll | RegexpInstr | SubstringIndex => args
                .into_iter()
                .enumerate()
                .map(|(i, a)| cast_to(a, if i == 2 { &DataType::Int32 } else { &DataType::Utf8 }))
                .collect::<Result<_>>()?,
            // split(str, regex[, limit]): the limit defaults to -1 (every piece).
            Split => {
                let mut args = args;
                if args.len() == 2 {
                    args.push(Expr::Literal(crate::types::ScalarValue::Int32(-1)));
                }
                args.into_iter()
                    .enumerate()
                    .map(|(i, a)| cast_to(a, if i == 2 { &DataType::Int32 } else { &DataType::Utf8 }))
                    .collect::<Result<_>>()?
            }
            RegexpReplace => args
                .into_iter()
                .enumerate()
                .map(|(i, a)| cast_to(a, if i == 3 { &DataType::Int32 } else { &DataType::Utf8 }))
                .collect::<Result<_>>()?,
            Chr => args.into_iter().map(|a| cast_to(a, &DataType::Int64)).collect::<Result<_>>()?,
            Hour(_) | Minute(_) | Second(_) | SecondWithFraction(_) => args.into_iter().map(|a| self.to_timestamp_arg(a)).collect::<Result<_>>()?,
            // A string with a pattern is parsed; anything else is cast.
            ToTimestamp(_) | UnixTimestamp(_) | ToDate(_) | DateFormat(_) | DateTrunc(_) | FromUnixtime(_) => {
                let with_pattern = args.len() == 2;
                args.into_iter()
                    .enumerate()
                    .map(|(i, a)| match (self, i) {
                        (DateTrunc(_), 0) | (DateFormat(_), 1) | (ToTimestamp(_) | UnixTimestamp(_) | ToDate(_) | FromUnixtime(_), 1) => cast_to(a, &DataType::Utf8),
                        (FromUnixtime(_), _) => cast_to(a, &DataType::Int64),
                        (DateTrunc(_) | DateFormat(_), _) => self.to_timestamp_arg(a),
                        (ToDate(_), _) if !with_pattern => {
                            let t = a.data_type()?;
                            if crate::types::is_string(&t) || t == DataType::Null { Ok(a) } else { cast_to(a, &DataType::Date32) }
                        }
                        _ => {
                            let t = a.data_type()?;
                            if crate::types::is_string(&t) || t == DataType::Null { Ok(a) } else { self.to_timestamp_arg(a) }
                        }
                    })
                    .collect::<Result<_>>()?
            }
            CurrentTimestamp | LocalTimestamp(_) | TimeAdd(_) | TypeOf | TryCast(_) => args,
            // Bytes count as they are; anything else as a string's UTF-8 bytes.
            OctetLength | BitLength => {
                args.into_iter().map(|a| if a.data_type()? == DataType::Binary { Ok(a) } else { cast_to(a, &DataType::Utf8) }).collect::<Result<_>>()?
            }
            Factorial | Space => args.into_iter().map(|a| cast_to(a, &DataType::Int32)).collect::<Result<_>>()?,
            Pi | CurrentDate(_) => args,
            ElementAt | TryElementAt | Get | GetItem => {
                let mut it = args.into_iter();
                let (a, i) = (it.next().ok_or_else(|| KilnError::internal("element_at arity"))?, it.next().ok_or_else(|| KilnError::internal("element_at arity"))?);
                match a.data_type()? {
                    DataType::List(_) | DataType::Null => {}
                    t => return Err(self.type_error(&a, "ARRAY", &t)),
                }
                let i = match i.data_type()? {
                    DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Null => cast_to(i, &DataType::Int32)?,
                    t => return Err(self.type_error(&i, "INT", &t)),
                };
                vec![a, i]
            }
            ArrayRepeat => {
                let mut it = args.into_iter();
                let v = it.next().ok_or_else(|| KilnError::internal("array_repeat arity"))?;
                let n = it.next().ok_or_else(|| KilnError::internal("array_repeat arity"))?;
                vec![v, cast_to(n, &DataType::Int32)?]
            }
            Size | SortArray | ArraySort | ArrayContains | ArrayJoin | ArrayDistinct | ArrayMax | ArrayMin | ArrayPosition | ArrayRemove | Slice => {
                let mut it = args.into_iter();
                let a = it.next().ok_or_else(|| KilnError::internal("array function arity"))?;
                let element = match a.data_type()? {
                    DataType::List(f) => f.data_type().clone(),
                    DataType::Null => DataType::Null,
                    t => return Err(self.type_error(&a, "ARRAY", &t)),
                };
                let rest: Vec<Expr> = match self {
                    SortArray => it.map(|x| cast_to(x, &DataType::Boolean)).collect::<Result<_>>()?,
                    ArrayContains | ArrayPosition | ArrayRemove => it.map(|x| if element == DataType::Null { Ok(x) } else { cast_to(x, &element) }).collect::<Result<_>>()?,
                    Slice => it.map(|x| cast_to(x, &DataType::Int32)).collect::<Result<_>>()?,
                    ArrayJoin => it.map(|x| cast_to(x, &DataType::Utf8)).collect::<Result<_>>()?,
                    _ => it.collect(),
                };
                std::iter::once(a).chain(rest).collect()
            }
            More(m) => m.coerce(*self, args)?,
            Nested(n) => n.coerce(args)?,
            _ => args.into_iter().map(|a| cast_to(a, &DataType::Utf8)).collect::<Result<_>>()?,
        })
    }

    /// A timestamp argument: strings, dates and timestamps are cast to TIMESTAMP (NTZ kept).
    fn to_timestamp_arg(&self, e: Expr) -> Result<Expr> {
        let t = e.data_type()?;
        match t {
            DataType::Timestamp(..) => Ok(e),
            DataType::Date32 | DataType::Null => Ok(Expr::Cast { child: Box::new(e), to: crate::types::timestamp_type(false), zone: None }),
            ref s if crate::types::is_string(s) => Ok(Expr::Cast { child: Box::new(e), to: crate::types::timestamp_type(false), zone: None }),
            other => Err(self.type_error(&e, "TIMESTAMP", &other)),
        }
    }

    fn type_error(&self, e: &Expr, wanted: &str, t: &DataType) -> KilnError {
        KilnError::analysis(
            "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
            format!(
                "Cannot resolve \"{}({e})\" due to data type mismatch: the parameter requires the \"{wanted}\" type, however \"{e}\" has the type \"{}\".",
                self.name(),
                crate::types::sql_type_name(t),
                e = super::sql_name(e),
            ),
        )
    }

    /// The result type over (coerced) arguments.
    pub fn return_type(&self, exprs: &[Expr]) -> Result<DataType> {
        let args = exprs.iter().map(|a| a.data_type()).collect::<Result<Vec<_>>>()?;
        if let More(m) = self {
            return Ok(m.return_type(exprs, &args));
        }
        if let Nested(n) = self {
            return n.return_type(exprs, &args);
        }
        // ceil/floor(decimal, d): scale min(s, d) (0 when d < 0), digits for the carry.
        if let (Ceil | Floor, [DataType::Decimal128(p, s), _], Some(Expr::Literal(crate::types::ScalarValue::Int32(d)))) = (self, args.as_slice(), exprs.get(1)) {
            let new_scale = (*d).clamp(0, *s as i32);
            let (p, s) = crate::types::bounded_decimal((*p as i32 - *s as i32 + new_scale + 1).max(1 - d.min(&0)), new_scale);
            return Ok(DataType::Decimal128(p, s));
        }
        Ok(self.plain_return_type(&args))
    }

    fn plain_return_type(&self, args: &[DataType]) -> DataType {
        match self {
            b if b.is_math() => DataType::Float64,
            Pi | E => DataType::Float64,
            StartsWith | EndsWith | Contains => DataType::Boolean,
            OctetLength | BitLength | FindInSet => DataType::Int32,
            Factorial => DataType::Int64,
            TryCast(_) => args.get(1).cloned().unwrap_or(DataType::Null),
            Ceil | Floor if args.len() == 2 && args.first() == Some(&DataType::Float64) => DataType::Float64,
            Ceil | Floor => match args.first() {
                Some(DataType::Decimal128(p, s)) => {
                    let (p, _) = crate::types::bounded_decimal(*p as i32 - *s as i32 + 1, 0);
                    DataType::Decimal128(p, 0)
                }
                _ => DataType::Int64,
            },
            BitCount => DataType::Int32,
            Lpad | Rpad if args.first() == Some(&DataType::Binary) => DataType::Binary,
            Greatest | Least | BitAnd | BitOr | BitXor | BitNot | ShiftLeft | ShiftRight | ShiftRightUnsigned => args.first().cloned().unwrap_or(DataType::Null),
            RLike => DataType::Boolean,
            RegexpCount | RegexpInstr => DataType::Int32,
            RegexpExtractAll | Split => crate::types::list_type(DataType::Utf8),
            Instr | Locate | Ascii | Levenshtein | Month | Day | Quarter | DayOfWeek | DayOfYear | WeekOfYear => DataType::Int32,
            LastDay | AddMonths | Trunc | CurrentDate(_) | ToDate(_) => DataType::Date32,
            Hour(_) | Minute(_) | Second(_) => DataType::Int32,
            UnixTimestamp(_) => DataType::Int64,
            ToTimestamp(_) | CurrentTimestamp | DateTrunc(_) => crate::types::timestamp_type(false),
            LocalTimestamp(_) => crate::types::timestamp_type(true),
            SecondWithFraction(_) => DataType::Decimal128(8, 6),
            TimeAdd(_) => args.first().cloned().unwrap_or_else(|| crate::types::timestamp_type(false)),
            Size => DataType::Int32,
            ArrayContains => DataType::Boolean,
            SortArray | ArraySort | ArrayDistinct => args.first().cloned().unwrap_or(DataType::Null),
            MakeArray | ArrayRepeat => crate::types::list_type(args.first().cloned().unwrap_or(DataType::Null)),
            ArrayPosition => DataType::Int64,
            ArrayRemove | Slice => args.first().cloned().unwrap_or(DataType::Null),
            ArrayMax | ArrayMin | ElementAt | TryElementAt | Get | GetItem => match args.first() {
                Some(DataType::List(f)) => f.data_type().clone(),
                _ => DataType::Null,
            },
            _ => DataType::Utf8,
        }
    }

    /// Evaluates over argument arrays of `rows` rows.
    pub fn eval(&self, args: &[ArrayRef], rows: usize, result: &DataType) -> Result<ArrayRef> {
        let arg = |i: usize| args.get(i).ok_or_else(|| KilnError::internal(format!("{} lacks argument {i}", self.name())));
        if args.iter().any(|a| a.data_type() == &DataType::Null) && self.null_intolerant() {
            return Ok(new_null_array(result, rows));
        }
        let f64s = |i: usize| -> Result<Vec<Option<f64>>> { Ok(arg(i)?.as_primitive::<Float64Type>().iter().collect()) };
        let math1 = |f: fn(f64) -> Option<f64>| -> Result<ArrayRef> {
            Ok(Arc::new(f64s(0)?.into_iter().map(|v| v.and_then(f)).collect::<Float64Array>()))
        };
        let math2 = |f: fn(f64, f64) -> Option<f64>| -> Result<ArrayRef> {
            let (a, b) = (f64s(0)?, f64s(1)?);
            Ok(Arc::new(a.into_iter().zip(b).map(|(x, y)| Some(f(x?, y?)).flatten()).collect::<Float64Array>()))
        };
        let strs = |i: usize| -> Result<StringArray> { Ok(arg(i)?.as_string::<i32>().clone()) };
        let ints = |i: usize| -> Result<Int32Array> { Ok(cast(arg(i)?, &DataType::Int32)?.as_primitive::<Int32Type>().clone()) };
        let date_int = |p: DatePart, add: i32| -> Result<ArrayRef> {
            let v = date_part(arg(0)?, p)?;
            let v = v.as_primitive::<Int32Type>();
            Ok(Arc::new(v.iter().map(|x| x.map(|x| x + add)).collect::<Int32Array>()))
        };
        let regexp = |f: super::regexp::RegexpFn| super::regexp::eval(f, args, rows);
        let array = |f: super::arrays::ArrayFn| super::arrays::eval(f, args, rows, result);
        Ok(match self {
            Hour(_) | Minute(_) | Second(_) | SecondWithFraction(_) | ToTimestamp(_) | ToDate(_) | DateFormat(_) | CurrentTimestamp | LocalTimestamp(_) | UnixTimestamp(_)
            | FromUnixtime(_) | DateTrunc(_) | TimeAdd(_) => {
                super::datetime::eval(*self, args, rows, result)?
            }
            More(m) => m.eval(args, rows, result)?,
            Nested(n) => n.eval(args, rows, result)?,
            RLike => regexp(super::regexp::RegexpFn::Like)?,
            Size => array(super::arrays::ArrayFn::Size)?,
            SortArray => array(super::arrays::ArrayFn::SortArray)?,
            ArraySort => array(super::arrays::ArrayFn::ArraySort)?,
            ArrayContains => array(super::arrays::ArrayFn::Contains)?,
            ArrayJoin => array(super::arrays::ArrayFn::Join)?,
            ArrayDistinct => array(super::arrays::ArrayFn::Distinct)?,
            ArrayMax => array(super::arrays::ArrayFn::Max)?,
            ArrayMin => array(super::arrays::ArrayFn::Min)?,
            MakeArray => super::arrays::make_array(args, rows, result)?,
            ElementAt => array(super::arrays::ArrayFn::ElementAt)?,
            TryElementAt => array(super::arrays::ArrayFn::TryElementAt)?,
            Get => array(super::arrays::ArrayFn::Get)?,
            GetItem => array(super::arrays::ArrayFn::GetItem)?,
            ArrayPosition => array(super::arrays::ArrayFn::Position)?,
            ArrayRemove => array(super::arrays::ArrayFn::Remove)?,
            Slice => array(super::arrays::ArrayFn::Slice)?,
            ArrayRepeat => super::arrays::array_repeat(args, result)?,
            RegexpReplace => regexp(super::regexp::RegexpFn::Replace)?,
            RegexpExtract => regexp(super::regexp::RegexpFn::Extract)?,
            RegexpExtractAll => regexp(super::regexp::RegexpFn::ExtractAll)?,
            Split => regexp(super::regexp::RegexpFn::Split)?,
            RegexpCount => regexp(super::regexp::RegexpFn::Count)?,
            RegexpSubstr => regexp(super::regexp::RegexpFn::Substr)?,
            RegexpInstr => regexp(super::regexp::RegexpFn::Instr)?,
            Sqrt => math1(|x| Some(x.sqrt()))?,
            Cbrt => math1(|x| Some(x.cbrt()))?,
            // Spark's StrictMath (fdlibm) for exp, the logarithms and the hyperbolics.
            Exp => math1(|x| Some(sm::exp(x)))?,
            // Spark's logarithms are NULL at and below zero.
            // Spark: NULL at or below 0; NaN stays NaN (`NaN <= 0` is false).
            Ln => math1(|x| (!(x <= 0.0)).then(|| sm::log(x)))?,
            Log10 => math1(|x| (!(x <= 0.0)).then(|| sm::log10(x)))?,
            Log2 => math1(|x| (!(x <= 0.0)).then(|| sm::log(x) / sm::log(2.0)))?,
            Log if args.len() == 1 => math1(|x| (!(x <= 0.0)).then(|| sm::log(x)))?,
            Log => math2(|b, x| (!(b <= 0.0 || x <= 0.0)).then(|| sm::log(x) / sm::log(b)))?,
            Power => math2(|x, y| Some(x.powf(y)))?,
            Atan2 => math2(|y, x| Some(y.atan2(x)))?,
            Sin => math1(|x| Some(x.sin()))?,
            Cos => math1(|x| Some(x.cos()))?,
            Tan => math1(|x| Some(x.tan()))?,
            Asin => math1(|x| Some(x.asin()))?,
            Acos => math1(|x| Some(x.acos()))?,
            Atan => math1(|x| Some(x.atan()))?,
            Degrees => math1(|x| Some(x.to_degrees()))?,
            Radians => math1(|x| Some(x.to_radians()))?,
            Signum => math1(|x| Some(if x.is_nan() { f64::NAN } else if x > 0.0 { 1.0 } else if x < 0.0 { -1.0 } else { 0.0 }))?,
            Pi => Arc::new(Float64Array::from(vec![std::f64::consts::PI; rows])),
            E => Arc::new(Float64Array::from(vec![std::f64::consts::E; rows])),
            TryCast(zone) => super::eval::try_cast(arg(0)?, result, *zone)?,
            Cot => math1(|x| Some(1.0 / x.tan()))?,
            Sec => math1(|x| Some(1.0 / x.cos()))?,
            Csc => math1(|x| Some(1.0 / x.sin()))?,
            Sinh => math1(|x| Some(sm::sinh(x)))?,
            Cosh => math1(|x| Some(sm::cosh(x)))?,
            Tanh => math1(|x| Some(sm::tanh(x)))?,
            Asinh => math1(|x| Some(x.asinh()))?,
            Acosh => math1(|x| Some(x.acosh()))?,
            // Spark's formula (SPARK-28519).
            Atanh => math1(|x| Some(0.5 * (sm::log1p(x) - sm::log1p(-x))))?,
            // The first value unless it is NaN (a NULL first value is NULL).
            Nanvl => {
                let (a, b) = (f64s(0)?, f64s(1)?);
                Arc::new(a.into_iter().zip(b).map(|(a, b)| if a?.is_nan() { b } else { a }).collect::<Float64Array>())
            }
            // 0! to 20! (the bigints); NULL outside.
            Factorial => Arc::new(ints(0)?.iter().map(|n| n.filter(|n| (0..=20).contains(n)).map(|n| (1..=n as i64).product::<i64>())).collect::<Int64Array>()),
            TypeOf => return Err(KilnError::internal("typeof is evaluated from its argument's type")),
            StartsWith | EndsWith | Contains => {
                let (s, p) = (strs(0)?, strs(1)?);
                let test = |s: &str, p: &str| match self {
                    StartsWith => s.starts_with(p),
                    EndsWith => s.ends_with(p),
                    _ => s.contains(p),
                };
                Arc::new(s.iter().zip(p.iter()).map(|(s, p)| Some(test(s?, p?))).collect::<BooleanArray>())
            }
            OctetLength | BitLength => {
                let bits = if *self == BitLength { 8 } else { 1 };
                match arg(0)?.data_type() {
                    DataType::Binary => Arc::new(arg(0)?.as_binary::<i32>().iter().map(|s| s.map(|s| s.len() as i32 * bits)).collect::<Int32Array>()),
                    _ => Arc::new(strs(0)?.iter().map(|s| s.map(|s| s.len() as i32 * bits)).collect::<Int32Array>()),
                }
            }
            Space => sized_strings("space", ints(0)?.iter().map(|n| n.map(|n| repeated("space", " ", n)).transpose()))?,
            SubstringIndex => {
                let (s, d, n) = (strs(0)?, strs(1)?, ints(2)?);
                Arc::new((0..rows).map(|i| (s.is_valid(i) && d.is_valid(i) && n.is_valid(i)).then(|| substring_index(s.value(i), d.value(i), n.value(i)))).collect::<StringArray>())
            }
            // The 1-based place of the string in a comma-separated list; 0 when absent or
            // when the string holds a comma.
            FindInSet => {
                let (s, list) = (strs(0)?, strs(1)?);
                let place = |s: &str, list: &str| if s.contains(',') { 0 } else { list.split(',').position(|x| x == s).map_or(0, |p| p as i32 + 1) };
                Arc::new(s.iter().zip(list.iter()).map(|(s, l)| Some(place(s?, l?))).collect::<Int32Array>())
            }
            Ceil | Floor if args.len() == 2 && matches!(arg(0)?.data_type(), DataType::Decimal128(..)) => {
                let (DataType::Decimal128(_, s), DataType::Decimal128(_, rs)) = (arg(0)?.data_type().clone(), result.clone()) else {
                    return Err(KilnError::internal("ceil of a decimal without a decimal result"));
                };
                let (d, up) = (ints(1)?, *self == Ceil);
                let v = arg(0)?.as_primitive::<Decimal128Type>();
                let out = v.iter().zip(d.iter()).map(|(x, d)| {
                    let (x, d) = (x?, d?);
                    // Round to 10^-d, then express at the result scale.
                    let drop = (s as i32 - d).max(0) as u32;
                    let m = 10i128.checked_pow(drop)?;
                    let (q, r) = (x / m, x % m);
                    let q = if up && r > 0 { q + 1 } else if !up && r < 0 { q - 1 } else { q };
                    let at = rs as i32 - (s as i32 - drop as i32);
                    if at >= 0 { q.checked_mul(10i128.checked_pow(at as u32)?) } else { Some(q / 10i128.checked_pow((-at) as u32)?) }
                });
                Arc::new(out.collect::<arrow::array::Decimal128Array>().with_data_type(result.clone()))
            }
            Ceil | Floor if args.len() == 2 => {
                let d = ints(1)?;
                let up = *self == Ceil;
                let round = |x: f64, d: i32| {
                    let m = 10f64.powi(d);
                    if up { (x * m).ceil() / m } else { (x * m).floor() / m }
                };
                match result {
                    DataType::Float64 => {
                        let v = arg(0)?.as_primitive::<Float64Type>();
                        Arc::new(v.iter().zip(d.iter()).map(|(x, d)| Some(round(x?, d?))).collect::<Float64Array>())
                    }
                    _ => {
                        let v = arg(0)?.as_primitive::<Int64Type>();
                        Arc::new(
                            v.iter()
                                .zip(d.iter())
                                .map(|(x, d)| {
                                    let (x, d) = (x?, d?);
                                    if d >= 0 {
                                        return Some(x);
                                    }
                                    let m = 10i64.checked_pow((-d) as u32)?;
                                    let (q, r) = (x / m, x % m);
                                    Some(m * if up && r > 0 { q + 1 } else if !up && r < 0 { q - 1 } else { q })
                                })
                                .collect::<Int64Array>(),
                        )
                    }
                }
            }
            Ceil | Floor => ceil_floor(arg(0)?, *self == Ceil, result)?,
            Greatest | Least => greatest(args, *self == Greatest)?,
            BitAnd | BitOr | BitXor => {
                let op = *self;
                match result {
                    DataType::Int64 => {
                        let (a, b) = (arg(0)?.as_primitive::<Int64Type>(), arg(1)?.as_primitive::<Int64Type>());
                        Arc::new(a.iter().zip(b.iter()).map(|(x, y)| Some(bit(op, x?, y?))).collect::<Int64Array>())
                    }
                    // tinyint and smallint in i32: their bits stay in range.
                    _ => {
                        let (a, b) = (ints(0)?, ints(1)?);
                        let out: ArrayRef = Arc::new(a.iter().zip(b.iter()).map(|(x, y)| Some(bit(op, x? as i64, y? as i64) as i32)).collect::<Int32Array>());
                        cast(&out, result)?
                    }
                }
            }
            // Java's shifts: the distance taken modulo the width, as Rust's wrapping shifts do.
            ShiftLeft | ShiftRight | ShiftRightUnsigned => {
                let n = ints(1)?;
                let op = *self;
                match result {
                    DataType::Int64 => {
                        let x = arg(0)?.as_primitive::<Int64Type>();
                        let f = |x: i64, n: i32| match op {
                            ShiftLeft => x.wrapping_shl(n as u32),
                            ShiftRight => x.wrapping_shr(n as u32),
                            _ => (x as u64).wrapping_shr(n as u32) as i64,
                        };
                        Arc::new(x.iter().zip(n.iter()).map(|(x, n)| Some(f(x?, n?))).collect::<Int64Array>())
                    }
                    _ => {
                        let f = |x: i32, n: i32| match op {
                            ShiftLeft => x.wrapping_shl(n as u32),
                            ShiftRight => x.wrapping_shr(n as u32),
                            _ => (x as u32).wrapping_shr(n as u32) as i32,
                        };
                        Arc::new(ints(0)?.iter().zip(n.iter()).map(|(x, n)| Some(f(x?, n?))).collect::<Int32Array>())
                    }
                }
            }
            // Java's Long.bitCount of the (sign-extended) value.
            BitCount => Arc::new(arg(0)?.as_primitive::<Int64Type>().iter().map(|x| x.map(|x| x.count_ones() as i32)).collect::<Int32Array>()),
            BitNot => match result {
                DataType::Int64 => Arc::new(arg(0)?.as_primitive::<Int64Type>().iter().map(|x| x.map(|x| !x)).collect::<Int64Array>()),
                _ => {
                    let out: ArrayRef = Arc::new(ints(0)?.iter().map(|x| x.map(|x| !x)).collect::<Int32Array>());
                    cast(&out, result)?
                }
            },
            ConcatWs => {
                let sep = strs(0)?;
                let parts: Vec<StringArray> = (1..args.len()).map(strs).collect::<Result<_>>()?;
                Arc::new(
                    (0..rows)
                        .map(|i| {
                            if sep.is_null(i) {
                                return None;
                            }
                            let vals: Vec<&str> = parts.iter().filter(|p| p.is_valid(i)).map(|p| p.value(i)).collect();
                            Some(vals.join(sep.value(i)))
                        })
                        .collect::<StringArray>(),
                )
            }
            Lpad | Rpad if arg(0)?.data_type() == &DataType::Binary => {
                let (b, len, pad) = (arg(0)?.as_binary::<i32>(), ints(1)?, arg(2)?.as_binary::<i32>());
                let left = *self == Lpad;
                let mut out = arrow::array::BinaryBuilder::new();
                for i in 0..rows {
                    if b.is_null(i) || len.is_null(i) || pad.is_null(i) {
                        out.append_null();
                        continue;
                    }
                    let fill = padding(b.value(i), len.value(i), pad.value(i));
                    check_string_bytes(self.name(), fill.keep.saturating_add(fill.len))?;
                    out.append_value(padded(b.value(i), fill, pad.value(i), left));
                }
                Arc::new(out.finish())
            }
            Lpad | Rpad => {
                let (s, len) = (strs(0)?, ints(1)?);
                let pad = if args.len() > 2 { Some(strs(2)?) } else { None };
                let left = *self == Lpad;
                sized_strings(
                    self.name(),
                    (0..rows).map(|i| {
                        if s.is_null(i) || len.is_null(i) || pad.as_ref().is_some_and(|p| p.is_null(i)) {
                            return Ok(None);
                        }
                        pad_string(self.name(), s.value(i), len.value(i), pad.as_ref().map_or(" ", |p| p.value(i)), left).map(Some)
                    }),
                )?
            }
            Repeat => {
                let (s, n) = (strs(0)?, ints(1)?);
                sized_strings("repeat", s.iter().zip(n.iter()).map(|(s, n)| s.zip(n).map(|(s, n)| repeated("repeat", s, n)).transpose()))?
            }
            Left | Right => {
                let (s, n) = (strs(0)?, ints(1)?);
                let left = *self == Left;
                Arc::new(
                    s.iter()
                        .zip(n.iter())
                        .map(|(s, n)| {
                            let (s, n) = (s?, n?);
                            let chars: Vec<char> = s.chars().collect();
                            let k = (n.max(0) as usize).min(chars.len());
                            Some(if left { chars[..k].iter().collect::<String>() } else { chars[chars.len() - k..].iter().collect() })
                        })
                        .collect::<StringArray>(),
                )
            }
            Reverse => Arc::new(strs(0)?.iter().map(|s| s.map(|s| s.chars().rev().collect::<String>())).collect::<StringArray>()),
            Initcap => Arc::new(strs(0)?.iter().map(|s| s.map(initcap)).collect::<StringArray>()),
            Instr => {
                let (s, sub) = (strs(0)?, strs(1)?);
                Arc::new(s.iter().zip(sub.iter()).map(|(s, sub)| Some(locate(s?, sub?, 1))).collect::<Int32Array>())
            }
            Locate => {
                let (sub, s) = (strs(0)?, strs(1)?);
                let pos = if args.len() > 2 { Some(ints(2)?) } else { None };
                Arc::new(
                    (0..rows)
                        .map(|i| {
                            if sub.is_null(i) || s.is_null(i) || pos.as_ref().is_some_and(|p| p.is_null(i)) {
                                return None;
                            }
                            Some(locate(s.value(i), sub.value(i), pos.as_ref().map_or(1, |p| p.value(i))))
                        })
                        .collect::<Int32Array>(),
                )
            }
            Ascii => Arc::new(strs(0)?.iter().map(|s| s.map(|s| s.chars().next().map_or(0, |c| c as i32))).collect::<Int32Array>()),
            Chr => {
                let n = arg(0)?.as_primitive::<Int64Type>();
                Arc::new(
                    n.iter()
                        .map(|n| {
                            let n = n?;
                            Some(if n < 0 { String::new() } else { char::from((n & 0xFF) as u8).to_string() })
                        })
                        .collect::<StringArray>(),
                )
            }
            Translate => {
                let (s, from, to) = (strs(0)?, strs(1)?, strs(2)?);
                Arc::new((0..rows).map(|i| {
                    if s.is_null(i) || from.is_null(i) || to.is_null(i) {
                        return None;
                    }
                    Some(translate(s.value(i), from.value(i), to.value(i)))
                }).collect::<StringArray>())
            }
            SplitPart => {
                let (s, d, n) = (strs(0)?, strs(1)?, ints(2)?);
                let mut out = Vec::with_capacity(rows);
                for i in 0..rows {
                    if s.is_null(i) || d.is_null(i) || n.is_null(i) {
                        out.push(None);
                        continue;
                    }
                    let k = n.value(i);
                    if k == 0 {
                        return Err(super::arrays::index_of_zero());
                    }
                    let parts: Vec<&str> = if d.value(i).is_empty() { vec![s.value(i)] } else { s.value(i).split(d.value(i)).collect() };
                    let idx = if k > 0 { (k - 1) as i64 } else { parts.len() as i64 + k as i64 };
                    out.push(Some(if idx >= 0 && (idx as usize) < parts.len() { parts[idx as usize].to_string() } else { String::new() }));
                }
                Arc::new(StringArray::from(out))
            }
            Levenshtein => {
                let (a, b) = (strs(0)?, strs(1)?);
                Arc::new(a.iter().zip(b.iter()).map(|(a, b)| Some(levenshtein(a?, b?))).collect::<Int32Array>())
            }
            Month => date_int(DatePart::Month, 0)?,
            Day => date_int(DatePart::Day, 0)?,
            Quarter => date_int(DatePart::Quarter, 0)?,
            DayOfWeek => date_int(DatePart::DayOfWeekSunday0, 1)?,
            DayOfYear => date_int(DatePart::DayOfYear, 0)?,
            WeekOfYear => date_int(DatePart::Week, 0)?,
            LastDay => {
                let d = arg(0)?.as_primitive::<Date32Type>();
                Arc::new(d.iter().map(|d| d.and_then(last_day)).collect::<Date32Array>())
            }
            AddMonths => {
                let (d, n) = (arg(0)?.as_primitive::<Date32Type>(), ints(1)?);
                let out: Date32Array = d.iter().zip(n.iter()).map(|(d, n)| add_months(d?, n? as i64)).collect();
                Arc::new(out)
            }
            Trunc => {
                let (d, f) = (arg(0)?.as_primitive::<Date32Type>(), strs(1)?);
                Arc::new(d.iter().zip(f.iter()).map(|(d, f)| trunc_date(d?, f?)).collect::<Date32Array>())
            }
            CurrentDate(zone) => {
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |t| t.as_micros() as i64);
                let days = zone.from_utc(now).unwrap_or(now).div_euclid(crate::types::timestamp::MICROS_PER_DAY) as i32;
                Arc::new(Date32Array::from(vec![days; rows]))
            }
        })
    }
}

fn bit(op: Builtin, x: i64, y: i64) -> i64 {
    match op {
        BitAnd => x & y,
        BitOr => x | y,
        _ => x ^ y,
    }
}

/// ceil/floor: integers unchanged (bigint), doubles to bigint (ANSI: out of range is an
/// error), decimals to scale 0.
fn ceil_floor(a: &ArrayRef, up: bool, result: &DataType) -> Result<ArrayRef> {
    Ok(match a.data_type() {
        DataType::Int64 => a.clone(),
        DataType::Decimal128(_, s) => {
            let m = 10i128.pow(*s as u32);
            let v = a.as_primitive::<Decimal128Type>();
            let out = v.iter().map(|x| {
                x.map(|x| {
                    let (q, r) = (x / m, x % m);
                    if up && r > 0 { q + 1 } else if !up && r < 0 { q - 1 } else { q }
                })
            });
            Arc::new(out.collect::<arrow::array::Decimal128Array>().with_data_type(result.clone()))
        }
        _ => {
            let v = a.as_primitive::<Float64Type>();
            let mut out = Vec::with_capacity(v.len());
            for x in v.iter() {
                out.push(match x {
                    None => None,
                    Some(x) => {
                        let r = if up { x.ceil() } else { x.floor() };
                        if r.is_nan() || r >= 9.223372036854775807e18 || r < -9.223372036854775808e18 {
                            return Err(KilnError::exec(format!(
                                "[CAST_OVERFLOW] The value {x} of the type \"DOUBLE\" cannot be cast to \"BIGINT\" due to an overflow. SQLSTATE: 22003"
                            )));
                        }
                        Some(r as i64)
                    }
                });
            }
            Arc::new(Int64Array::from(out))
        }
    })
}

/// greatest/least of each row, NULLs skipped (NULL only when all are); floats order NaN largest.
fn greatest(args: &[ArrayRef], greatest: bool) -> Result<ArrayRef> {
    let args = args.iter().map(|a| super::eval::normalize_floats(a, false)).collect::<Result<Vec<_>>>()?;
    let mut acc = args.first().cloned().ok_or_else(|| KilnError::internal("greatest without arguments"))?;
    for b in &args[1..] {
        let better = if greatest { cmp::gt(b, &acc)? } else { cmp::lt(b, &acc)? };
        let better: BooleanArray = better.iter().map(|v| Some(v.unwrap_or(false))).collect();
        let take_b = arrow::compute::and(&is_not_null(b)?, &arrow::compute::or(&is_null(&acc)?, &better)?)?;
        acc = arrow::compute::kernels::zip::zip(&take_b, b, &acc)?;
    }
    Ok(acc)
}

/// lpad/rpad over a binary value with a binary pad or none: Spark's BinaryPad, else a string pad.
fn binary_pad(args: &[Expr]) -> Result<bool> {
    let binary = |e: Option<&Expr>| e.map(|e| e.data_type().map(|t| t == DataType::Binary)).transpose();
    Ok(binary(args.first())? == Some(true) && binary(args.get(2))? != Some(false))
}

/// Spark's lpad/rpad: truncated to `len` characters, padded with repeats of `pad`.
fn pad_string(function: &str, s: &str, len: i32, pad: &str, left: bool) -> Result<String> {
    let (chars, pad_chars): (Vec<char>, Vec<char>) = (s.chars().collect(), pad.chars().collect());
    let fill = padding(&chars, len, &pad_chars);
    check_string_bytes(function, s.len().saturating_add(fill.len.div_ceil(pad_chars.len().max(1)).saturating_mul(pad.len())))?;
    Ok(padded(&chars, fill, &pad_chars, left).into_iter().collect())
}

/// How lpad/rpad of `s` to `len` units goes: keep the first `keep` units, add `len` of the pad.
#[derive(Clone, Copy)]
struct Padding {
    keep: usize,
    len: usize,
}

fn padding<T>(s: &[T], len: i32, pad: &[T]) -> Padding {
    let len = len.max(0) as usize;
    if s.len() >= len || pad.is_empty() {
        return Padding { keep: s.len().min(len), len: 0 };
    }
    Padding { keep: s.len(), len: len - s.len() }
}

/// `s` (characters or bytes) cut or padded as `fill` says, the pad on the left or the right.
fn padded<T: Clone>(s: &[T], fill: Padding, pad: &[T], left: bool) -> Vec<T> {
    let kept = &s[..fill.keep];
    let fill: Vec<T> = pad.iter().cycle().take(fill.len).cloned().collect();
    if left { [fill.as_slice(), kept].concat() } else { [kept, fill.as_slice()].concat() }
}

/// The longest string a value may be: Spark's byte-array limit
/// (`ByteArrayMethods.MAX_ROUNDED_ARRAY_LENGTH`), checked before the bytes are allocated.
const MAX_STRING_BYTES: usize = i32::MAX as usize - 15;

fn string_too_large(function: &str, bytes: usize, limit: usize, of: &str) -> KilnError {
    KilnError::exec(format!("{function}: the result would be {bytes} bytes, over the limit of {limit} bytes for {of}; use a smaller count or length"))
}

thread_local! {
    /// The running query's `kiln.memory.limit` on this thread (set where it is planned and where
    /// its scans yield batches): one string result may not take more.
    static RESULT_LIMIT: std::cell::Cell<u64> = const { std::cell::Cell::new(u64::MAX) };
}

/// Caps the string results computed on this thread from now on at `limit` bytes.
pub fn set_result_limit(limit: u64) {
    RESULT_LIMIT.set(limit);
}

fn check_string_bytes(function: &str, bytes: usize) -> Result<()> {
    if bytes > MAX_STRING_BYTES {
        return Err(string_too_large(function, bytes, MAX_STRING_BYTES, "one string"));
    }
    // Refused before it is allocated: the size is known up front.
    let limit = RESULT_LIMIT.get();
    if bytes as u64 > limit {
        return Err(KilnError::exec(format!(
            "[UNABLE_TO_ACQUIRE_MEMORY] Unable to acquire {} of memory for one value of {function}: more than kiln.memory.limit ({}).",
            crate::common::bytes_to_string(bytes as u128),
            crate::common::bytes_to_string(limit as u128)
        )));
    }
    Ok(())
}

/// `s` repeated `n` times (none for n <= 0), its size checked first.
fn repeated(function: &str, s: &str, n: i32) -> Result<String> {
    let n = n.max(0) as usize;
    check_string_bytes(function, s.len().saturating_mul(n))?;
    Ok(s.repeat(n))
}

/// A string column from values that may grow without bound (repeat, lpad, format_string, ...):
/// an error, not a panic, once the column would pass arrow's 32-bit offsets.
pub(crate) fn sized_strings(function: &str, values: impl Iterator<Item = Result<Option<String>>>) -> Result<ArrayRef> {
    strings_within(function, values, i32::MAX as usize)
}

fn strings_within(function: &str, values: impl Iterator<Item = Result<Option<String>>>, limit: usize) -> Result<ArrayRef> {
    let mut out = arrow::array::StringBuilder::new();
    let mut total = 0usize;
    for v in values {
        match v? {
            Some(v) => {
                total += v.len();
                if total > limit {
                    return Err(string_too_large(function, total, limit, "one column of a batch"));
                }
                out.append_value(v);
            }
            None => out.append_null(),
        }
    }
    Ok(Arc::new(out.finish()))
}

/// Lower-case, then the first letter of each space-separated word upper-case.
fn initcap(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut start = true;
    for c in s.chars() {
        if start {
            out.extend(c.to_uppercase());
        } else {
            out.extend(c.to_lowercase());
        }
        start = c == ' ';
    }
    out
}

/// The 1-based character position of `sub` in `s` at or after `pos` (0 when absent or pos < 1).
fn locate(s: &str, sub: &str, pos: i32) -> i32 {
    if pos < 1 {
        return 0;
    }
    let start = s.char_indices().nth(pos as usize - 1).map(|(b, _)| b);
    let Some(start) = start.or((pos as usize - 1 == s.chars().count()).then_some(s.len())) else { return 0 };
    match s[start..].find(sub) {
        Some(b) => (s[..start + b].chars().count() + 1) as i32,
        None => 0,
    }
}

fn translate(s: &str, from: &str, to: &str) -> String {
    let to: Vec<char> = to.chars().collect();
    let mut map: Vec<(char, Option<char>)> = vec![];
    for (i, c) in from.chars().enumerate() {
        if !map.iter().any(|(k, _)| *k == c) {
            map.push((c, to.get(i).copied()));
        }
    }
    s.chars()
        .filter_map(|c| match map.iter().find(|(k, _)| *k == c) {
            Some((_, r)) => *r,
            None => Some(c),
        })
        .collect()
}

fn levenshtein(a: &str, b: &str) -> i32 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()] as i32
}

fn ymd(days: i32) -> Option<(i64, i64, u32)> {
    let text = format_date(days);
    let mut p = text.splitn(3, '-');
    Some((p.next()?.parse().ok()?, p.next()?.parse().ok()?, p.next()?.parse().ok()?))
}

fn date_of(y: i64, m: i64, d: u32) -> Option<i32> {
    parse_date(&format!("{y:04}-{m:02}-{d:02}"))
}

fn last_day(days: i32) -> Option<i32> {
    let (y, m, _) = ymd(days)?;
    (28..=31).rev().find_map(|d| date_of(y, m, d))
}

/// Spark's add_months: same day of month, clamped to the month's last day.
pub(crate) fn add_months(days: i32, months: i64) -> Option<i32> {
    let (y, m, d) = ymd(days)?;
    let total = y * 12 + (m - 1) + months;
    let (ny, nm) = (total.div_euclid(12), total.rem_euclid(12) + 1);
    (0..4).find_map(|k| d.checked_sub(k).and_then(|dd| date_of(ny, nm, dd)))
}

/// trunc(date, fmt): the first day of its year, quarter, month or (Monday) week; NULL for
/// other formats.
fn trunc_date(days: i32, fmt: &str) -> Option<i32> {
    let (y, m, _) = ymd(days)?;
    match fmt.to_ascii_uppercase().as_str() {
        "YEAR" | "YYYY" | "YY" => date_of(y, 1, 1),
        "QUARTER" => date_of(y, (m - 1) / 3 * 3 + 1, 1),
        "MONTH" | "MM" | "MON" => date_of(y, m, 1),
        // 1970-01-01 was a Thursday: Monday is 3 days before.
        "WEEK" => Some(days - (days + 3).rem_euclid(7)),
        _ => None,
    }
}

/// `substring_index(s, delim, n)`: `s` before the n-th `delim` (n > 0), or after the n-th from
/// the end (n < 0); all of `s` when it has fewer; empty for n = 0 or an empty delimiter.
fn substring_index(s: &str, delim: &str, n: i32) -> String {
    if n == 0 || delim.is_empty() {
        return String::new();
    }
    if n > 0 {
        match s.match_indices(delim).nth(n as usize - 1) {
            Some((at, _)) => s[..at].to_string(),
            None => s.to_string(),
        }
    } else {
        match s.rmatch_indices(delim).nth(n.unsigned_abs() as usize - 1) {
            Some((at, _)) => s[at + delim.len()..].to_string(),
            None => s.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_column_past_its_limit_is_an_error_naming_the_function() {
        let values = || ["abcd", "efgh", "ij"].into_iter().map(|v| Ok(Some(v.to_string())));
        let err = strings_within("format_string", values(), 9).unwrap_err().to_string();
        assert!(err.contains("format_string: the result would be 10 bytes, over the limit of 9 bytes for one column of a batch"), "{err}");
        let ok = strings_within("format_string", values().chain([Ok(None)]), 10).unwrap();
        assert_eq!((ok.len(), ok.null_count()), (4, 1));
    }
}
