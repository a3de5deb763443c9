//! Spark's generators: functions that make zero or more rows of each input row (explode,
//! posexplode, stack, json_tuple, and their `_outer` forms). They are not expressions: a select list, a
//! LATERAL VIEW or a FROM item names one, and the analyzer puts it in a `Generate` node, which
//! joins the rows it makes to the row they came from.

use std::fmt;

use arrow::array::{new_null_array, Array, ArrayRef, AsArray, Int32Array, UInt32Array};
use arrow::datatypes::DataType;

use super::Expr;
use crate::error::{KilnError, Result};
use crate::types::ScalarValue;

/// Which generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GeneratorFunc {
    /// `explode(array)`: a row per element, column `col`.
    Explode,
    /// `posexplode(array)`: a row per element and its 0-based position, columns `pos, col`.
    PosExplode,
    /// `inline(array<struct>)`: a row per element, a column per field (a NULL element gives
    /// a row of NULLs).
    Inline,
    /// `stack(n, v1, ..., vk)`: n rows of ceil(k / n) columns `col0, col1, ...`, filled row by
    /// row, the last padded with NULLs.
    Stack,
    /// `json_tuple(json, k1, ..., kn)`: one row of n strings `c0, c1, ...`, the document's
    /// top-level fields (NULL where missing, null, or the text is not a JSON object).
    JsonTuple,
}

impl GeneratorFunc {
    /// Spark's name.
    pub fn name(&self) -> &'static str {
        match self {
            GeneratorFunc::Explode => "explode",
            GeneratorFunc::PosExplode => "posexplode",
            GeneratorFunc::Stack => "stack",
            GeneratorFunc::Inline => "inline",
            GeneratorFunc::JsonTuple => "json_tuple",
        }
    }

    /// Every generator's name, with its fewest and most arguments.
    pub const NAMES: &'static [(&'static str, (usize, usize))] = &[
        ("explode", (1, 1)),
        ("explode_outer", (1, 1)),
        ("posexplode", (1, 1)),
        ("posexplode_outer", (1, 1)),
        ("stack", (2, usize::MAX)),
        ("inline", (1, 1)),
        ("inline_outer", (1, 1)),
        ("json_tuple", (2, usize::MAX)),
    ];
    /// The generator a function name calls (any case), and whether it is the `_outer` form.
    pub fn from_name(name: &str) -> Option<(GeneratorFunc, bool)> {
        Some(match name.to_ascii_lowercase().as_str() {
            "explode" => (GeneratorFunc::Explode, false),
            "explode_outer" => (GeneratorFunc::Explode, true),
            "posexplode" => (GeneratorFunc::PosExplode, false),
            "posexplode_outer" => (GeneratorFunc::PosExplode, true),
            "stack" => (GeneratorFunc::Stack, false),
            "inline" => (GeneratorFunc::Inline, false),
            "inline_outer" => (GeneratorFunc::Inline, true),
            "json_tuple" => (GeneratorFunc::JsonTuple, false),
            _ => return None,
        })
    }
}

/// A generator call, printed as Spark prints it: `explode(a#1)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Generator {
    /// Which generator.
    pub func: GeneratorFunc,
    /// The arguments (after analysis: resolved, type-checked, stack's `n` a literal).
    pub args: Vec<Expr>,
}

impl fmt::Display for Generator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let args: Vec<String> = self.args.iter().map(|a| a.to_string()).collect();
        let mark = if self.args.iter().all(|a| a.resolved()) { "" } else { "'" };
        write!(f, "{mark}{}({})", self.func.name(), args.join(", "))
    }
}

/// The SQL text Spark's errors quote (`"explode(a)"`).
fn quoted(e: &Expr) -> String {
    format!("\"{}\"", super::sql_name(e))
}

fn type_upper(t: &DataType) -> String {
    format!("\"{}\"", crate::types::sql_type_name(t))
}

impl Generator {
    /// The call as Spark's errors quote it (`explode(a)`).
    fn call_sql(&self) -> String {
        format!("{}({})", self.func.name(), self.args.iter().map(super::sql_name).collect::<Vec<_>>().join(", "))
    }

    /// Spark's argument checks, over resolved arguments; stack's `n` becomes a literal and its
    /// NULL values take their column's type (Spark's `StackCoercion`).
    pub fn checked(self) -> Result<Generator> {
        let call = || self.call_sql();
        match self.func {
            GeneratorFunc::Explode | GeneratorFunc::PosExplode => {
                let [a] = self.args.as_slice() else {
                    return Err(KilnError::analysis(
                        "WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
                        format!("The `{}` requires 1 parameters but the actual number is {}.", self.func.name(), self.args.len()),
                    ));
                };
                let t = a.data_type()?;
                if !matches!(t, DataType::List(_) | DataType::Map(..)) {
                    return Err(KilnError::analysis(
                        "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                        format!(
                            "Cannot resolve \"{}\" due to data type mismatch: The first parameter requires the (\"ARRAY\" or \"MAP\") type, however {} has the type {}.",
                            call(),
                            quoted(a),
                            type_upper(&t)
                        ),
                    ));
                }
                Ok(self)
            }
            GeneratorFunc::Stack => self.checked_stack(),
            GeneratorFunc::JsonTuple => {
                if self.args.len() < 2 {
                    return Err(KilnError::analysis(
                        "WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
                        format!("The `json_tuple` requires > 1 parameters but the actual number is {}.", self.args.len()),
                    ));
                }
                let mut args = Vec::with_capacity(self.args.len());
                for a in &self.args {
                    let t = a.data_type()?;
                    if !crate::types::is_string(&t) {
                        return Err(KilnError::analysis(
                            "DATATYPE_MISMATCH.NON_STRING_TYPE",
                            format!("Cannot resolve \"{}\" due to data type mismatch: all arguments of the function `json_tuple` must be string-type.", call()),
                        ));
                    }
                    args.push(if t == DataType::Utf8 { a.clone() } else { Expr::Cast { child: Box::new(a.clone()), to: DataType::Utf8, zone: None } });
                }
                Ok(Generator { func: GeneratorFunc::JsonTuple, args })
            }
            GeneratorFunc::Inline => {
                let [a] = self.args.as_slice() else {
                    return Err(KilnError::analysis(
                        "WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
                        format!("The `inline` requires 1 parameters but the actual number is {}.", self.args.len()),
                    ));
                };
                let t = a.data_type()?;
                if !matches!(&t, DataType::List(f) if matches!(f.data_type(), DataType::Struct(_))) {
                    return Err(KilnError::analysis(
                        "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                        format!(
                            "Cannot resolve \"{}\" due to data type mismatch: The first parameter requires the \"ARRAY<STRUCT>\" type, however {} has the type {}.",
                            call(),
                            quoted(a),
                            type_upper(&t)
                        ),
                    ));
                }
                Ok(self)
            }
        }
    }

    fn checked_stack(self) -> Result<Generator> {
        let call = self.call_sql();
        let mismatch = |sub: &'static str, detail: String| {
            KilnError::analysis(sub, format!("Cannot resolve \"{call}\" due to data type mismatch: {detail}"))
        };
        let Some((n, values)) = self.args.split_first().filter(|_| self.args.len() > 1) else {
            return Err(KilnError::analysis(
                "WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
                format!("The `stack` requires > 1 parameters but the actual number is {}.", self.args.len()),
            ));
        };
        let nt = n.data_type()?;
        if nt != DataType::Int32 {
            return Err(mismatch(
                "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                format!("The first parameter requires the \"INT\" type, however {} has the type {}.", quoted(n), type_upper(&nt)),
            ));
        }
        if !n.foldable() {
            return Err(mismatch(
                "DATATYPE_MISMATCH.NON_FOLDABLE_INPUT",
                format!("the input `n` should be a foldable \"INT\" expression; however, got {}.", quoted(n)),
            ));
        }
        let rows = match super::eval::evaluate_scalar(n)? {
            ScalarValue::Int32(r) if r >= 1 => r as usize,
            other => {
                return Err(mismatch(
                    "DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE",
                    format!("The `n` must be between (0, 2147483647] (current value = {other})."),
                ))
            }
        };
        let width = values.len().div_ceil(rows);
        // Each column's type is its first non-NULL value's; NULL literals take it.
        let mut types = vec![DataType::Null; width];
        for (i, v) in values.iter().enumerate() {
            let t = v.data_type()?;
            if types[i % width] == DataType::Null {
                types[i % width] = t;
            }
        }
        let mut args = vec![Expr::Literal(ScalarValue::Int32(rows as i32))];
        for (i, v) in values.iter().enumerate() {
            let (j, t) = (i % width, v.data_type()?);
            if t == types[j] {
                args.push(v.clone());
            } else if t == DataType::Null {
                args.push(Expr::Cast { child: Box::new(v.clone()), to: types[j].clone(), zone: None });
            } else {
                return Err(mismatch(
                    "DATATYPE_MISMATCH.STACK_COLUMN_DIFF_TYPES",
                    format!(
                        "The data type of the column ({j}) do not have the same type: {} ({}) <> {} ({}).",
                        type_upper(&types[j]),
                        quoted(&values[j]),
                        type_upper(&t),
                        quoted(v)
                    ),
                ));
            }
        }
        Ok(Generator { func: GeneratorFunc::Stack, args })
    }

    /// The columns it makes (Spark's `elementSchema`): name, type, nullable.
    pub fn element_schema(&self) -> Result<Vec<(String, DataType, bool)>> {
        let element = || -> Result<(DataType, bool)> {
            match self.args.first().map(|a| a.data_type()).transpose()? {
                Some(DataType::List(f)) => Ok((f.data_type().clone(), f.is_nullable())),
                other => Err(KilnError::internal(format!("{} of {other:?}", self.func.name()))),
            }
        };
        // Over a map: `key, value` (Spark's names).
        let first = self.args.first().map(|a| a.data_type()).transpose()?;
        if let Some((k, v)) = first.as_ref().and_then(crate::types::map_key_value) {
            let mut cols = vec![("key".to_string(), k.data_type().clone(), true), ("value".to_string(), v.data_type().clone(), true)];
            if self.func == GeneratorFunc::PosExplode {
                cols.insert(0, ("pos".to_string(), DataType::Int32, false));
            }
            return Ok(cols);
        }
        Ok(match self.func {
            GeneratorFunc::Inline => match element()? {
                (DataType::Struct(fields), _) => fields.iter().map(|f| (f.name().clone(), f.data_type().clone(), true)).collect(),
                (other, _) => return Err(KilnError::internal(format!("inline of {other}"))),
            },
            GeneratorFunc::Explode => {
                let (t, nullable) = element()?;
                vec![("col".to_string(), t, nullable)]
            }
            GeneratorFunc::PosExplode => {
                let (t, nullable) = element()?;
                vec![("pos".to_string(), DataType::Int32, false), ("col".to_string(), t, nullable)]
            }
            GeneratorFunc::JsonTuple => (1..self.args.len()).map(|j| (format!("c{}", j - 1), DataType::Utf8, true)).collect(),
            GeneratorFunc::Stack => {
                let width = self.args.len().saturating_sub(1).div_ceil(stack_rows(&self.args)?);
                self.args[1..=width].iter().enumerate().map(|(j, v)| Ok((format!("col{j}"), v.data_type()?, true))).collect::<Result<_>>()?
            }
        })
    }

    /// The rows made of `rows` input rows, given the arguments' values: for each output row the
    /// input row it came from, and the generated columns (of `types`). An input row that makes
    /// none is kept once with NULLs when `outer`.
    pub fn generate(&self, args: &[ArrayRef], rows: usize, outer: bool, types: &[DataType]) -> Result<(UInt32Array, Vec<ArrayRef>)> {
        match self.func {
            GeneratorFunc::Explode | GeneratorFunc::PosExplode | GeneratorFunc::Inline => {
                let arg = args.first().ok_or_else(|| KilnError::internal("explode without an argument"))?;
                if arg.data_type() == &DataType::Null {
                    let parent: Vec<u32> = if outer { (0..rows as u32).collect() } else { vec![] };
                    return Ok((UInt32Array::from(parent.clone()), types.iter().map(|t| new_null_array(t, parent.len())).collect()));
                }
                // A map is a list of (key, value) entries.
                let (offsets, validity, values): (&[i32], Option<&arrow::buffer::NullBuffer>, ArrayRef) = match (arg.as_list_opt::<i32>(), arg.as_map_opt()) {
                    (Some(l), _) => (l.value_offsets(), l.nulls(), l.values().clone()),
                    (None, Some(m)) => (m.value_offsets(), m.nulls(), std::sync::Arc::new(m.entries().clone())),
                    _ => return Err(KilnError::internal("explode of a non-array")),
                };
                let is_valid = |i: usize| validity.is_none_or(|v| v.is_valid(i));
                let (mut parent, mut element, mut pos) = (vec![], vec![], vec![]);
                for i in 0..rows {
                    let (start, end) = if is_valid(i) { (offsets[i] as u32, offsets[i + 1] as u32) } else { (0, 0) };
                    if start == end && outer {
                        parent.push(i as u32);
                        element.push(None);
                        pos.push(None);
                    }
                    for k in start..end {
                        parent.push(i as u32);
                        element.push(Some(k));
                        pos.push(Some((k - start) as i32));
                    }
                }
                let col = arrow::compute::take(values.as_ref(), &UInt32Array::from(element), None)?;
                // Map entries and inline's structs give a column per field (a NULL struct's
                // fields read as NULL).
                let mut cols = match (self.func, col.as_struct_opt()) {
                    (GeneratorFunc::Inline, Some(s)) | (GeneratorFunc::Explode | GeneratorFunc::PosExplode, Some(s)) if arg.as_map_opt().is_some() || self.func == GeneratorFunc::Inline => s
                        .columns()
                        .iter()
                        .map(|c| {
                            let merged = arrow::buffer::NullBuffer::union(c.nulls(), s.nulls());
                            Ok(arrow::array::make_array(c.to_data().into_builder().nulls(merged).build()?))
                        })
                        .collect::<Result<Vec<ArrayRef>>>()?,
                    _ => vec![col],
                };
                if self.func == GeneratorFunc::PosExplode {
                    cols.insert(0, std::sync::Arc::new(Int32Array::from(pos)) as ArrayRef);
                }
                // The columns in the types the plan gives them (a map key's nullability).
                let cols = cols
                    .into_iter()
                    .zip(types)
                    .map(|(c, t)| if c.data_type() == t { Ok(c) } else { super::eval::cast_array(&c, t) })
                    .collect::<Result<Vec<_>>>()?;
                Ok((UInt32Array::from(parent), cols))
            }
            GeneratorFunc::Stack => {
                let n = stack_rows(&self.args)?;
                // The rows of a batch are made at once: a bound instead of running out of memory.
                if rows.saturating_mul(n) > MAX_STACK_ROWS {
                    return Err(KilnError::unsupported(format!(
                        "stack({n}, ...) over {rows} rows makes {} rows at once; at most {MAX_STACK_ROWS}",
                        rows.saturating_mul(n)
                    )));
                }
                let values = args.get(1..).unwrap_or_default();
                let parent: Vec<u32> = (0..rows as u32).flat_map(|i| std::iter::repeat_n(i, n)).collect();
                let cols = types
                    .iter()
                    .enumerate()
                    .map(|(j, t)| {
                        // Row r of column j is value r * width + j, NULL past the last value.
                        let nulls = new_null_array(t, rows.max(1));
                        let sources: Vec<&dyn Array> =
                            (0..n).map(|r| values.get(r * types.len() + j).map_or(nulls.as_ref(), |a| a.as_ref())).collect();
                        let order: Vec<(usize, usize)> = (0..rows).flat_map(|i| (0..n).map(move |r| (r, i))).collect();
                        Ok(arrow::compute::interleave(&sources, &order)?)
                    })
                    .collect::<Result<Vec<ArrayRef>>>()?;
                Ok((UInt32Array::from(parent), cols))
            }
            GeneratorFunc::JsonTuple => {
                let strings = args.iter().map(|a| a.as_string_opt::<i32>().ok_or_else(|| KilnError::internal("json_tuple of a non-string"))).collect::<Result<Vec<_>>>()?;
                let (docs, names) = strings.split_first().ok_or_else(|| KilnError::internal("json_tuple without arguments"))?;
                let mut cols: Vec<Vec<Option<String>>> = vec![Vec::with_capacity(rows); names.len()];
                for i in 0..rows {
                    let keys: Vec<Option<&str>> = names.iter().map(|n| n.is_valid(i).then(|| n.value(i))).collect();
                    let fields = if docs.is_valid(i) { super::json::tuple_fields(docs.value(i), &keys) } else { vec![None; keys.len()] };
                    cols.iter_mut().zip(fields).for_each(|(c, f)| c.push(f));
                }
                let cols = cols.into_iter().map(|c| std::sync::Arc::new(arrow::array::StringArray::from(c)) as ArrayRef).collect();
                Ok((UInt32Array::from((0..rows as u32).collect::<Vec<_>>()), cols))
            }
        }
    }
}

/// The most rows stack makes of one input batch.
const MAX_STACK_ROWS: usize = 1 << 26;

/// stack's `n`, a literal after analysis.
fn stack_rows(args: &[Expr]) -> Result<usize> {
    match args.first() {
        Some(Expr::Literal(ScalarValue::Int32(n))) if *n >= 1 => Ok(*n as usize),
        other => Err(KilnError::internal(format!("stack's row count {other:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Array, ArrayRef, AsArray, Int32Array, ListArray};
    use arrow::datatypes::{DataType, Int32Type};

    use super::*;
    use crate::expr::Attribute;

    fn lists() -> ArrayRef {
        // [1, 2], NULL, [], [3]; then sliced past the first row, as a filtered batch may be.
        let a = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(0)]), Some(vec![Some(1), Some(2)]), None, Some(vec![]), Some(vec![Some(3)])]);
        Arc::new(a.slice(1, 4))
    }

    fn explode(func: GeneratorFunc) -> Generator {
        let a = Attribute::new("a", crate::types::list_type(DataType::Int32), true);
        Generator { func, args: vec![a.expr()] }
    }

    fn ints(a: &ArrayRef) -> Vec<Option<i32>> {
        a.as_primitive::<Int32Type>().iter().collect()
    }

    #[test]
    fn explode_drops_null_and_empty_arrays_and_outer_keeps_them_once() {
        let g = explode(GeneratorFunc::PosExplode);
        let (parent, cols) = g.generate(&[lists()], 4, false, &[DataType::Int32, DataType::Int32]).unwrap();
        assert_eq!(parent.values().to_vec(), [0, 0, 3]);
        assert_eq!((ints(&cols[0]), ints(&cols[1])), (vec![Some(0), Some(1), Some(0)], vec![Some(1), Some(2), Some(3)]));
        let (parent, cols) = g.generate(&[lists()], 4, true, &[DataType::Int32, DataType::Int32]).unwrap();
        assert_eq!(parent.values().to_vec(), [0, 0, 1, 2, 3]);
        assert_eq!(ints(&cols[1]), [Some(1), Some(2), None, None, Some(3)]);
        assert_eq!(cols[0].null_count(), 2);
    }

    #[test]
    fn stack_fills_rows_in_order_and_pads_the_last() {
        let n = Expr::Literal(ScalarValue::Int32(2));
        let g = Generator { func: GeneratorFunc::Stack, args: vec![n, Expr::Literal(ScalarValue::Int32(0)), Expr::Literal(ScalarValue::Int32(0)), Expr::Literal(ScalarValue::Int32(0))] };
        assert_eq!(g.element_schema().unwrap().len(), 2);
        let v = |x: i32| Arc::new(Int32Array::from(vec![x, x + 10])) as ArrayRef;
        let (parent, cols) = g.generate(&[v(0), v(1), v(2), v(3)], 2, false, &[DataType::Int32, DataType::Int32]).unwrap();
        assert_eq!(parent.values().to_vec(), [0, 0, 1, 1]);
        assert_eq!(ints(&cols[0]), [Some(1), Some(3), Some(11), Some(13)]);
        assert_eq!(ints(&cols[1]), [Some(2), None, Some(12), None]);
    }
}
