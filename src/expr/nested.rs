//! Spark's struct and map values: the constructors (named_struct / struct, map,
//! map_from_arrays, map_from_entries, str_to_map), field and key access (`s.a`, `s['a']`,
//! `m[k]`, element_at), and map_keys / map_values / map_entries / map_contains_key /
//! map_concat / size. Each is one `NestedFn`, reached through `Builtin::Nested` (name, arity,
//! casts, type and evaluation as the other builtins). Structs are arrow `StructArray`s of
//! `types::struct_type`, maps `MapArray`s of `types::map_type`; Spark's rules on map keys hold:
//! a NULL key is NULL_MAP_KEY and a repeated one DUPLICATED_MAP_KEY (the default
//! `spark.sql.mapKeyDedupPolicy=EXCEPTION`).

use std::collections::HashSet;
use std::sync::Arc;

use arrow::array::{new_null_array, Array, ArrayRef, AsArray, BooleanArray, Int32Array, ListArray, MapArray, StringArray, StructArray, UInt32Array};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::DataType;
use arrow::row::{RowConverter, SortField};

use super::{Builtin, Expr};
use crate::error::{KilnError, Result};
use crate::types::{list_type, map_key_value, map_type, struct_type, wider_type, ScalarValue};

/// The functions of this file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NestedFn {
    /// `named_struct(name1, v1, ...)` (names are string literals); `struct(a, b)` is made into
    /// one by the parser, naming fields by their column (or `col1`, `col2`, ...).
    NamedStruct,
    /// `struct(a, b AS x, 1)`: a named_struct that prints as Spark's CreateStruct (its column
    /// name lists the values only: `struct(a, 1)`).
    Struct,
    /// `(s, 'name')`: one field of a struct (Spark's GetStructField, printed `s#1.name`);
    /// made by the analyzer from `s.name` and `s['name']`.
    GetField,
    /// `(xs, 'name')`: the array of one field of each struct of an array (Spark's
    /// GetArrayStructFields, printed `xs#1.name`); made by the analyzer from `xs.name`.
    ArrayStructField,
    /// `map(k1, v1, ...)`.
    CreateMap,
    /// `map_from_arrays(keys, values)`.
    MapFromArrays,
    /// `map_from_entries(array<struct<k, v>>)`.
    MapFromEntries,
    /// `str_to_map(text[, pairDelim[, keyValueDelim]])`: delimiters are regular expressions.
    StrToMap,
    /// `m[k]` (Spark's GetMapValue): NULL for a missing key; made by the analyzer.
    GetMapValue,
    /// `element_at(m, k)` over a map: NULL for a missing key (Spark 4).
    MapElementAt,
    /// `try_element_at(m, k)` over a map.
    MapTryElementAt,
    /// `map_keys(m)`.
    MapKeys,
    /// `map_values(m)`.
    MapValues,
    /// `map_entries(m)`: an array of `struct<key, value>`.
    MapEntries,
    /// `map_contains_key(m, k)`.
    MapContainsKey,
    /// `map_concat(m1, m2, ...)`: NULL if any is NULL; a key in two maps is DUPLICATED_MAP_KEY.
    MapConcat,
    /// `size(m)` / `cardinality(m)` over a map: NULL for a NULL map (ANSI).
    MapSize,
    /// `map_sort(m)`: the entries ordered by key (Spark 4's MapSort, which the analyzer puts
    /// around a map grouping key so that equal maps group together).
    MapSort,
}

use NestedFn::*;

const CALLABLE: &[NestedFn] = &[NamedStruct, Struct, CreateMap, MapFromArrays, MapFromEntries, StrToMap, MapKeys, MapValues, MapEntries, MapContainsKey, MapConcat];

impl NestedFn {
    /// Spark's name.
    pub fn name(&self) -> &'static str {
        match self {
            NamedStruct => "named_struct",
            Struct => "struct",
            GetField => "get_field",
            ArrayStructField => "get_array_struct_fields",
            CreateMap => "map",
            MapFromArrays => "map_from_arrays",
            MapFromEntries => "map_from_entries",
            StrToMap => "str_to_map",
            GetMapValue => "get_map_value",
            MapElementAt => "element_at",
            MapTryElementAt => "try_element_at",
            MapKeys => "map_keys",
            MapValues => "map_values",
            MapEntries => "map_entries",
            MapContainsKey => "map_contains_key",
            MapConcat => "map_concat",
            MapSize => "size",
            MapSort => "map_sort",
        }
    }

    /// By name (lower case): only the functions SQL calls by name.
    pub fn from_name(n: &str) -> Option<NestedFn> {
        CALLABLE.iter().copied().find(|f| f.name() == n)
    }

    /// Names for suggestions.
    pub fn names() -> impl Iterator<Item = &'static str> {
        CALLABLE.iter().map(|f| f.name())
    }

    /// The fewest and most arguments (as called).
    pub fn arity(&self) -> (usize, usize) {
        match self {
            NamedStruct | Struct | CreateMap | MapConcat => (0, usize::MAX),
            MapFromEntries | MapKeys | MapValues | MapEntries | MapSize | MapSort => (1, 1),
            StrToMap => (1, 3),
            _ => (2, 2),
        }
    }

    /// NULL whenever an argument is NULL.
    pub fn null_intolerant(&self) -> bool {
        !matches!(self, NamedStruct | Struct | CreateMap | MapConcat)
    }

    /// Whether the result may be NULL, given which arguments may be.
    pub fn nullable(&self, args: &[bool]) -> bool {
        match self {
            NamedStruct | Struct | CreateMap => false,
            GetField | ArrayStructField | GetMapValue | MapElementAt | MapTryElementAt | MapFromEntries => true,
            _ => args.iter().any(|n| *n),
        }
    }

    /// The array or map function Spark calls when `b` is applied to a map or struct: size,
    /// element_at, try_element_at and `x[i]` over maps, `s['a']` over structs.
    pub fn for_nested_argument(b: Builtin, first: &DataType, by_name: bool) -> Option<NestedFn> {
        match (b, first) {
            (Builtin::GetItem, DataType::List(f)) if by_name && matches!(f.data_type(), DataType::Struct(_)) => Some(ArrayStructField),
            (Builtin::Size, DataType::Map(..)) => Some(MapSize),
            (Builtin::ElementAt, DataType::Map(..)) => Some(MapElementAt),
            (Builtin::TryElementAt, DataType::Map(..)) => Some(MapTryElementAt),
            (Builtin::GetItem, DataType::Map(..)) => Some(GetMapValue),
            (Builtin::GetItem, DataType::Struct(_)) => Some(GetField),
            _ => None,
        }
    }

    fn type_error(&self, e: &Expr, wanted: &str, t: &DataType) -> KilnError {
        let call = format!("{}({})", self.name(), super::sql_name(e));
        KilnError::analysis(
            "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
            format!(
                "Cannot resolve \"{call}\" due to data type mismatch: the parameter requires the \"{wanted}\" type, however \"{}\" has the type \"{}\".",
                super::sql_name(e),
                crate::types::sql_type_name(t)
            ),
        )
    }

    fn wrong_args(&self, expected: &str, n: usize) -> KilnError {
        KilnError::analysis("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", format!("The `{}` requires {expected} parameters but the actual number is {n}.", self.name()))
    }

    /// The arguments with Spark's implicit casts and type checks.
    pub fn coerce(&self, args: Vec<Expr>) -> Result<Vec<Expr>> {
        let cast_to = |e: Expr, t: &DataType| -> Result<Expr> {
            Ok(if &e.data_type()? == t { e } else { Expr::Cast { child: Box::new(e), to: t.clone(), zone: None } })
        };
        let map_arg = |e: &Expr| -> Result<(DataType, DataType)> {
            let t = e.data_type()?;
            match map_key_value(&t) {
                Some((k, v)) => Ok((k.data_type().clone(), v.data_type().clone())),
                None if t == DataType::Null => Ok((DataType::Null, DataType::Null)),
                None => Err(self.type_error(e, "MAP", &t)),
            }
        };
        Ok(match self {
            Struct => args,
            NamedStruct => {
                if args.is_empty() || args.len() % 2 != 0 {
                    return Err(self.wrong_args("2n (n > 0)", args.len()));
                }
                for name in args.iter().step_by(2) {
                    if !matches!(name, Expr::Literal(ScalarValue::Utf8(_))) {
                        let call = format!("named_struct({})", args.iter().map(super::sql_name).collect::<Vec<_>>().join(", "));
                        return Err(KilnError::analysis(
                            "DATATYPE_MISMATCH.CREATE_NAMED_STRUCT_WITHOUT_FOLDABLE_STRING",
                            format!(
                                "Cannot resolve \"{call}\" due to data type mismatch: Only foldable `STRING` expressions are allowed to appear at odd position, but they are [\"{}\"].",
                                super::sql_name(name)
                            ),
                        ));
                    }
                }
                args
            }
            GetField | ArrayStructField => args,
            CreateMap => {
                if args.len() % 2 != 0 {
                    return Err(self.wrong_args("2n (n > 0)", args.len()));
                }
                let (mut kt, mut vt) = (DataType::Null, DataType::Null);
                for (i, a) in args.iter().enumerate() {
                    let t = a.data_type()?;
                    let (acc, what) = if i % 2 == 0 { (&mut kt, "keys") } else { (&mut vt, "values") };
                    // Spark's findWiderCommonType: string promotion included.
                    *acc = crate::types::common_type(acc, &t).ok_or_else(|| {
                        let list = args.iter().skip(i % 2).step_by(2).map(|a| a.data_type().map(|t| crate::types::sql_type_name(&t)).unwrap_or_default()).collect::<Vec<_>>();
                        KilnError::analysis(
                            "DATATYPE_MISMATCH.MAP_FUNCTION_DIFF_TYPES",
                            format!(
                                "Cannot resolve \"map({})\" due to data type mismatch: Input to `map` should all be the same type as {what}, but it's [{}].",
                                args.iter().map(super::sql_name).collect::<Vec<_>>().join(", "),
                                list.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(", ")
                            ),
                        )
                    })?;
                }
                check_key_type(&format!("map({})", args.iter().map(super::sql_name).collect::<Vec<_>>().join(", ")), &kt)?;
                args.into_iter().enumerate().map(|(i, a)| cast_to(a, if i % 2 == 0 { &kt } else { &vt })).collect::<Result<_>>()?
            }
            MapFromArrays => {
                for a in &args {
                    let t = a.data_type()?;
                    if !matches!(t, DataType::List(_) | DataType::Null) {
                        return Err(self.type_error(a, "ARRAY", &t));
                    }
                }
                if let Some(DataType::List(f)) = args.first().map(|a| a.data_type()).transpose()? {
                    check_key_type(&format!("map_from_arrays({})", args.iter().map(super::sql_name).collect::<Vec<_>>().join(", ")), f.data_type())?;
                }
                args
            }
            MapFromEntries => {
                let a = args.first().ok_or_else(|| KilnError::internal("map_from_entries arity"))?;
                let t = a.data_type()?;
                match &t {
                    DataType::List(f) if matches!(f.data_type(), DataType::Struct(s) if s.len() == 2) => {}
                    DataType::Null => {}
                    _ => return Err(self.type_error(a, "ARRAY of pair STRUCT", &t)),
                }
                args
            }
            StrToMap => args.into_iter().map(|a| cast_to(a, &DataType::Utf8)).collect::<Result<_>>()?,
            GetMapValue | MapElementAt | MapTryElementAt | MapContainsKey => {
                let mut it = args.into_iter();
                let m = it.next().ok_or_else(|| KilnError::internal("map access arity"))?;
                let k = it.next().ok_or_else(|| KilnError::internal("map access arity"))?;
                let (kt, _) = map_arg(&m)?;
                let given = k.data_type()?;
                let k = if given == kt || given == DataType::Null || kt == DataType::Null {
                    k
                } else if wider_type(&given, &kt).as_ref() == Some(&kt) || (crate::types::is_numeric(&given) && crate::types::is_numeric(&kt)) {
                    cast_to(k, &kt)?
                } else {
                    return Err(KilnError::analysis(
                        "DATATYPE_MISMATCH.MAP_FUNCTION_DIFF_TYPES",
                        format!(
                            "Cannot resolve \"{}({}, {})\" due to data type mismatch: Input to `{}` should have been \"MAP\" followed by a value with same key type, but it's [\"{}\", \"{}\"].",
                            self.name(),
                            super::sql_name(&m),
                            super::sql_name(&k),
                            self.name(),
                            crate::types::sql_type_name(&m.data_type()?),
                            crate::types::sql_type_name(&given)
                        ),
                    ));
                };
                vec![m, k]
            }
            MapKeys | MapValues | MapEntries | MapSize | MapSort => {
                for a in &args {
                    map_arg(a)?;
                }
                args
            }
            MapConcat => {
                let types = args.iter().map(|a| a.data_type()).collect::<Result<Vec<_>>>()?;
                let call = || format!("map_concat({})", args.iter().map(super::sql_name).collect::<Vec<_>>().join(", "));
                let listed = || types.iter().map(|t| format!("\"{}\"", crate::types::sql_type_name(t))).collect::<Vec<_>>();
                if types.iter().any(|t| !matches!(t, DataType::Map(..))) {
                    return Err(KilnError::analysis(
                        "DATATYPE_MISMATCH.MAP_CONCAT_DIFF_TYPES",
                        format!("Cannot resolve \"{}\" due to data type mismatch: The `map_concat` should all be of type map, but it's [{}].", call(), listed().join(", ")),
                    ));
                }
                let mut t: Option<DataType> = None;
                for at in &types {
                    t = Some(match t {
                        None => at.clone(),
                        Some(prev) => wider_type(&prev, at).ok_or_else(|| {
                            KilnError::analysis(
                                "DATATYPE_MISMATCH.DATA_DIFF_TYPES",
                                format!("Cannot resolve \"{}\" due to data type mismatch: Input to `map_concat` should all be the same type, but it's ({}).", call(), listed().join(" or ")),
                            )
                        })?,
                    });
                }
                match t {
                    Some(t) => args.into_iter().map(|a| cast_to(a, &t)).collect::<Result<_>>()?,
                    None => args,
                }
            }
        })
    }

    /// The result type over (coerced) arguments.
    pub fn return_type(&self, exprs: &[Expr], args: &[DataType]) -> Result<DataType> {
        let first = args.first().cloned().unwrap_or(DataType::Null);
        let key_value = |t: &DataType| map_key_value(t).map(|(k, v)| (k.data_type().clone(), v.data_type().clone())).unwrap_or((DataType::Null, DataType::Null));
        Ok(match self {
            NamedStruct | Struct => {
                let mut fields = vec![];
                for (name, t) in exprs.iter().step_by(2).zip(args.iter().skip(1).step_by(2)) {
                    let Expr::Literal(ScalarValue::Utf8(n)) = name else { return Err(KilnError::internal("named_struct without a literal name")) };
                    fields.push((n.clone(), t.clone()));
                }
                struct_type(fields)
            }
            GetField => {
                let name = field_name(exprs)?;
                match &first {
                    DataType::Struct(fields) => fields.iter().find(|f| *f.name() == name).map(|f| f.data_type().clone()).ok_or_else(|| KilnError::internal(format!("no field {name} in {first}")))?,
                    _ => DataType::Null,
                }
            }
            ArrayStructField => {
                let name = field_name(exprs)?;
                match &first {
                    DataType::List(f) => match f.data_type() {
                        DataType::Struct(fields) => list_type(fields.iter().find(|f| *f.name() == name).map(|f| f.data_type().clone()).ok_or_else(|| KilnError::internal(format!("no field {name} in {first}")))?),
                        _ => list_type(DataType::Null),
                    },
                    _ => list_type(DataType::Null),
                }
            }
            CreateMap => map_type(args.first().cloned().unwrap_or(DataType::Null), args.get(1).cloned().unwrap_or(DataType::Null)),
            MapFromArrays => {
                let element = |t: Option<&DataType>| match t {
                    Some(DataType::List(f)) => f.data_type().clone(),
                    _ => DataType::Null,
                };
                map_type(element(args.first()), element(args.get(1)))
            }
            MapFromEntries => match &first {
                DataType::List(f) => match f.data_type() {
                    DataType::Struct(s) if s.len() == 2 => map_type(s[0].data_type().clone(), s[1].data_type().clone()),
                    _ => map_type(DataType::Null, DataType::Null),
                },
                _ => map_type(DataType::Null, DataType::Null),
            },
            StrToMap => map_type(DataType::Utf8, DataType::Utf8),
            GetMapValue | MapElementAt | MapTryElementAt => key_value(&first).1,
            MapKeys => list_type(key_value(&first).0),
            MapValues => list_type(key_value(&first).1),
            MapEntries => {
                let (k, v) = key_value(&first);
                list_type(struct_type([("key".to_string(), k), ("value".to_string(), v)]))
            }
            MapContainsKey => DataType::Boolean,
            MapConcat => args.iter().find(|t| **t != DataType::Null).cloned().unwrap_or_else(|| map_type(DataType::Null, DataType::Null)),
            MapSize => DataType::Int32,
            MapSort => first,
        })
    }

    /// Evaluates over argument arrays of `rows` rows.
    pub fn eval(&self, args: &[ArrayRef], rows: usize, result: &DataType) -> Result<ArrayRef> {
        let arg = |i: usize| args.get(i).ok_or_else(|| KilnError::internal(format!("{} lacks argument {i}", self.name())));
        Ok(match self {
            NamedStruct | Struct => {
                let DataType::Struct(fields) = result else { return Err(KilnError::internal(format!("named_struct of type {result}"))) };
                let columns = args.iter().skip(1).step_by(2).zip(fields.iter()).map(|(a, f)| fit(a, f.data_type())).collect::<Result<Vec<_>>>()?;
                if columns.is_empty() {
                    Arc::new(StructArray::new_empty_fields(rows, None))
                } else {
                    Arc::new(StructArray::try_new(fields.clone(), columns, None)?)
                }
            }
            GetField => {
                let s = arg(0)?.as_struct_opt().ok_or_else(|| KilnError::internal("a field of a non-struct"))?;
                let name = field_of(arg(1)?)?;
                let column = s.column_by_name(&name).ok_or_else(|| KilnError::internal(format!("no field {name}")))?;
                with_nulls(column, s.nulls())?
            }
            ArrayStructField => {
                let l = arg(0)?.as_list_opt::<i32>().ok_or_else(|| KilnError::internal("struct fields of a non-array"))?;
                let s = l.values().as_struct_opt().ok_or_else(|| KilnError::internal("struct fields of an array of non-structs"))?;
                let name = field_of(arg(1)?)?;
                let column = s.column_by_name(&name).ok_or_else(|| KilnError::internal(format!("no field {name}")))?;
                let DataType::List(field) = result else { return Err(KilnError::internal(format!("struct fields of type {result}"))) };
                let values = fit(&with_nulls(column, s.nulls())?, field.data_type())?;
                Arc::new(ListArray::try_new(field.clone(), l.offsets().clone(), values, l.nulls().cloned())?)
            }
            CreateMap => {
                let k = args.len() / 2;
                let refs = |start: usize| args.iter().skip(start).step_by(2).map(|a| a.as_ref()).collect::<Vec<&dyn Array>>();
                let (kt, vt) = entry_types(result)?;
                let order: Vec<(usize, usize)> = (0..rows).flat_map(|r| (0..k).map(move |c| (c, r))).collect();
                let (keys, values) = if k == 0 {
                    (arrow::array::new_empty_array(&kt), arrow::array::new_empty_array(&vt))
                } else {
                    (arrow::compute::interleave(&refs(0), &order)?, arrow::compute::interleave(&refs(1), &order)?)
                };
                build_map(result, keys, values, vec![k; rows], None)?
            }
            MapFromArrays => {
                let (ka, va) = (arg(0)?, arg(1)?);
                let (Some(kl), Some(vl)) = (ka.as_list_opt::<i32>(), va.as_list_opt::<i32>()) else {
                    return Ok(new_null_array(result, rows));
                };
                let (ko, vo) = (kl.value_offsets(), vl.value_offsets());
                let (mut kidx, mut vidx, mut lengths) = (vec![], vec![], vec![]);
                for i in 0..rows {
                    if kl.is_null(i) || vl.is_null(i) {
                        lengths.push(0);
                        continue;
                    }
                    let (kn, vn) = (ko[i + 1] - ko[i], vo[i + 1] - vo[i]);
                    if kn != vn {
                        return Err(KilnError::exec(
                            "[INVALID_PARAMETER_VALUE.MAP_FROM_ARRAYS_LENGTHS] The value of parameter(s) `keys`, `values` in `map_from_arrays` is invalid: the two arrays should have the same length. SQLSTATE: 22023",
                        ));
                    }
                    kidx.extend((ko[i]..ko[i + 1]).map(|x| x as u32));
                    vidx.extend((vo[i]..vo[i + 1]).map(|x| x as u32));
                    lengths.push(kn as usize);
                }
                let keys = arrow::compute::take(kl.values().as_ref(), &UInt32Array::from(kidx), None)?;
                let values = arrow::compute::take(vl.values().as_ref(), &UInt32Array::from(vidx), None)?;
                build_map(result, keys, values, lengths, NullBuffer::union(kl.nulls(), vl.nulls()))?
            }
            MapFromEntries => {
                let Some(l) = arg(0)?.as_list_opt::<i32>() else { return Ok(new_null_array(result, rows)) };
                let entries = l.values().as_struct_opt().ok_or_else(|| KilnError::internal("map_from_entries of non-structs"))?;
                let offsets = l.value_offsets();
                let (mut idx, mut lengths, mut valid) = (vec![], vec![], vec![]);
                for i in 0..rows {
                    let range = offsets[i] as usize..offsets[i + 1] as usize;
                    // A NULL entry makes the map NULL (Spark's MapFromEntries).
                    if l.is_null(i) || range.clone().any(|k| entries.is_null(k)) {
                        lengths.push(0);
                        valid.push(false);
                        continue;
                    }
                    idx.extend(range.clone().map(|k| k as u32));
                    lengths.push(range.len());
                    valid.push(true);
                }
                let idx = UInt32Array::from(idx);
                let keys = arrow::compute::take(entries.column(0).as_ref(), &idx, None)?;
                let values = arrow::compute::take(entries.column(1).as_ref(), &idx, None)?;
                build_map(result, keys, values, lengths, Some(NullBuffer::from(valid)))?
            }
            StrToMap => str_to_map(args, rows, result)?,
            GetMapValue | MapElementAt | MapTryElementAt => lookup(arg(0)?, arg(1)?, rows, result)?,
            MapContainsKey => {
                let (m, k) = (arg(0)?, arg(1)?);
                let Some(found) = find_keys(m, k, rows)? else { return Ok(new_null_array(result, rows)) };
                let m = m.as_map();
                Arc::new((0..rows).map(|i| (m.is_valid(i) && k.is_valid(i)).then_some(found[i].is_some())).collect::<BooleanArray>())
            }
            MapKeys | MapValues | MapEntries => {
                let Some(m) = arg(0)?.as_map_opt() else { return Ok(new_null_array(result, rows)) };
                let DataType::List(field) = result else { return Err(KilnError::internal(format!("{} of type {result}", self.name()))) };
                let values: ArrayRef = match self {
                    MapKeys => fit(m.keys(), field.data_type())?,
                    MapValues => fit(m.values(), field.data_type())?,
                    _ => {
                        let DataType::Struct(fields) = field.data_type() else { return Err(KilnError::internal("map_entries type")) };
                        Arc::new(StructArray::try_new(fields.clone(), vec![fit(m.keys(), fields[0].data_type())?, fit(m.values(), fields[1].data_type())?], None)?)
                    }
                };
                Arc::new(ListArray::try_new(field.clone(), m.offsets().clone(), values, m.nulls().cloned())?)
            }
            MapSort => {
                let Some(m) = arg(0)?.as_map_opt() else { return Ok(new_null_array(result, rows)) };
                let keys = m.keys();
                let conv = RowConverter::new(vec![SortField::new(keys.data_type().clone())])?;
                let order = conv.convert_columns(std::slice::from_ref(keys))?;
                let o = m.value_offsets();
                let mut idx: Vec<u32> = Vec::with_capacity(keys.len());
                for i in 0..rows {
                    let mut entries: Vec<usize> = (o[i] as usize..o[i + 1] as usize).collect();
                    entries.sort_by(|a, b| order.row(*a).cmp(&order.row(*b)));
                    idx.extend(entries.into_iter().map(|k| k as u32));
                }
                let entries = arrow::compute::take(m.entries(), &UInt32Array::from(idx), None)?;
                let DataType::Map(field, sorted) = result else { return Err(KilnError::internal(format!("map_sort of type {result}"))) };
                let entries = entries.as_struct_opt().ok_or_else(|| KilnError::internal("map entries"))?.clone();
                Arc::new(MapArray::try_new(field.clone(), m.offsets().clone(), entries, m.nulls().cloned(), *sorted)?)
            }
            MapSize => {
                let Some(m) = arg(0)?.as_map_opt() else { return Ok(new_null_array(result, rows)) };
                let o = m.value_offsets();
                Arc::new((0..rows).map(|i| m.is_valid(i).then(|| o[i + 1] - o[i])).collect::<Int32Array>())
            }
            MapConcat => {
                let maps: Vec<&MapArray> = args.iter().filter_map(|a| a.as_map_opt()).collect();
                if maps.len() < args.len() {
                    // A NULL-typed argument: every row is NULL.
                    return Ok(new_null_array(result, rows));
                }
                let mut nulls: Option<NullBuffer> = None;
                for m in &maps {
                    nulls = NullBuffer::union(nulls.as_ref(), m.nulls());
                }
                let mut order_k: Vec<(usize, usize)> = vec![];
                let mut lengths = vec![];
                for i in 0..rows {
                    let mut n = 0;
                    if nulls.as_ref().is_none_or(|b| b.is_valid(i)) {
                        for (j, m) in maps.iter().enumerate() {
                            let o = m.value_offsets();
                            for k in o[i] as usize..o[i + 1] as usize {
                                order_k.push((j, k));
                                n += 1;
                            }
                        }
                    }
                    lengths.push(n);
                }
                let (kt, vt) = entry_types(result)?;
                let keys: Vec<ArrayRef> = maps.iter().map(|m| fit(m.keys(), &kt)).collect::<Result<_>>()?;
                let values: Vec<ArrayRef> = maps.iter().map(|m| fit(m.values(), &vt)).collect::<Result<_>>()?;
                let (keys, values) = if maps.is_empty() {
                    (arrow::array::new_empty_array(&kt), arrow::array::new_empty_array(&vt))
                } else {
                    let kr: Vec<&dyn Array> = keys.iter().map(|a| a.as_ref()).collect();
                    let vr: Vec<&dyn Array> = values.iter().map(|a| a.as_ref()).collect();
                    (arrow::compute::interleave(&kr, &order_k)?, arrow::compute::interleave(&vr, &order_k)?)
                };
                build_map(result, keys, values, lengths, nulls)?
            }
        })
    }
}

/// The field name a GetField carries (its second argument, a string literal).
fn field_name(exprs: &[Expr]) -> Result<String> {
    match exprs.get(1) {
        Some(Expr::Literal(ScalarValue::Utf8(n))) => Ok(n.clone()),
        other => Err(KilnError::internal(format!("a struct field named by {other:?}"))),
    }
}

/// The field name as evaluated (a constant string column).
fn field_of(a: &ArrayRef) -> Result<String> {
    let s = a.as_string_opt::<i32>().ok_or_else(|| KilnError::internal("a struct field named by a non-string"))?;
    if s.is_empty() || s.is_null(0) {
        return Err(KilnError::internal("a struct field without a name"));
    }
    Ok(s.value(0).to_string())
}

/// Spark rejects map keys that are (or hold) maps.
fn check_key_type(call: &str, t: &DataType) -> Result<()> {
    if !crate::types::is_orderable(t) {
        return Err(KilnError::analysis(
            "DATATYPE_MISMATCH.INVALID_MAP_KEY_TYPE",
            format!("Cannot resolve \"{call}\" due to data type mismatch: The key of map cannot be/contain \"{}\".", crate::types::sql_type_name(t)),
        ));
    }
    Ok(())
}

/// `a` in type `t` (the casts a result type needs: a NULL-typed column, a field's nullability).
fn fit(a: &ArrayRef, t: &DataType) -> Result<ArrayRef> {
    if a.data_type() == t {
        return Ok(a.clone());
    }
    if a.data_type() == &DataType::Null {
        return Ok(new_null_array(t, a.len()));
    }
    super::eval::cast_array(a, t)
}

/// `column` NULL also where `nulls` (its parent's validity) says so.
fn with_nulls(column: &ArrayRef, nulls: Option<&NullBuffer>) -> Result<ArrayRef> {
    if nulls.is_none() {
        return Ok(column.clone());
    }
    let merged = NullBuffer::union(column.nulls(), nulls);
    let data = column.to_data().into_builder().nulls(merged).build()?;
    Ok(arrow::array::make_array(data))
}

/// The key and value types of a map type.
fn entry_types(t: &DataType) -> Result<(DataType, DataType)> {
    map_key_value(t).map(|(k, v)| (k.data_type().clone(), v.data_type().clone())).ok_or_else(|| KilnError::internal(format!("a map of type {t}")))
}

/// Spark's error for a NULL map key.
fn null_map_key() -> KilnError {
    KilnError::exec("[NULL_MAP_KEY] Cannot use null as map key. SQLSTATE: 2200E")
}

/// Spark's error for a key met twice (spark.sql.mapKeyDedupPolicy=EXCEPTION).
fn duplicated_map_key(key: &str) -> KilnError {
    KilnError::exec(format!(
        "[DUPLICATED_MAP_KEY] Duplicate map key {key} was found, please check the input data. If you want to remove the duplicated keys, you can set \"spark.sql.mapKeyDedupPolicy\" to \"LAST_WIN\" so that the key inserted at last takes precedence. SQLSTATE: 23505"
    ))
}

/// A map array of type `result` from each row's entry count and the keys and values in row
/// order; NULL keys and a key met twice in one map are Spark's errors.
fn build_map(result: &DataType, keys: ArrayRef, values: ArrayRef, lengths: Vec<usize>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
    let DataType::Map(entries, sorted) = result else { return Err(KilnError::internal(format!("a map of type {result}"))) };
    let DataType::Struct(fields) = entries.data_type() else { return Err(KilnError::internal("map entries")) };
    let keys = fit(&keys, fields[0].data_type())?;
    let values = fit(&values, fields[1].data_type())?;
    if keys.null_count() > 0 || keys.data_type() == &DataType::Null && !keys.is_empty() {
        return Err(null_map_key());
    }
    if !keys.is_empty() {
        let conv = RowConverter::new(vec![SortField::new(keys.data_type().clone())])?;
        let rows = conv.convert_columns(std::slice::from_ref(&keys))?;
        let mut start = 0;
        for n in &lengths {
            if *n > 1 {
                let mut seen = HashSet::with_capacity(*n);
                for k in start..start + n {
                    if !seen.insert(rows.row(k)) {
                        return Err(duplicated_map_key(&crate::format::format_value(keys.as_ref(), k).unwrap_or_else(|| "null".into())));
                    }
                }
            }
            start += n;
        }
    }
    let entries_array = StructArray::try_new(fields.clone(), vec![keys, values], None)?;
    Ok(Arc::new(MapArray::try_new(entries.clone(), OffsetBuffer::from_lengths(lengths), entries_array, nulls, *sorted)?))
}

/// For each row, the position (in the map's entries) of the row's key, if the map holds it;
/// None when the map argument is NULL-typed.
fn find_keys(m: &ArrayRef, k: &ArrayRef, rows: usize) -> Result<Option<Vec<Option<usize>>>> {
    let Some(m) = m.as_map_opt() else { return Ok(None) };
    if k.data_type() == &DataType::Null {
        return Ok(Some(vec![None; rows]));
    }
    let keys = m.keys();
    let k = fit(k, keys.data_type())?;
    let conv = RowConverter::new(vec![SortField::new(keys.data_type().clone())])?;
    let (have, want) = (conv.convert_columns(std::slice::from_ref(keys))?, conv.convert_columns(std::slice::from_ref(&k))?);
    let o = m.value_offsets();
    Ok(Some(
        (0..rows)
            .map(|i| if m.is_null(i) || k.is_null(i) { None } else { (o[i] as usize..o[i + 1] as usize).find(|&j| have.row(j) == want.row(i)) })
            .collect(),
    ))
}

/// `m[k]`: each row's value for its key, NULL when absent.
fn lookup(m: &ArrayRef, k: &ArrayRef, rows: usize, result: &DataType) -> Result<ArrayRef> {
    let Some(found) = find_keys(m, k, rows)? else { return Ok(new_null_array(result, rows)) };
    let values = m.as_map().values();
    let picked = arrow::compute::take(values.as_ref(), &UInt32Array::from(found.iter().map(|f| f.map(|j| j as u32)).collect::<Vec<_>>()), None)?;
    fit(&picked, result)
}

/// Java's `String.split(regex)`: trailing empty strings dropped (a lone empty input stays).
fn java_split<'a>(re: &regex::Regex, s: &'a str, limit: usize) -> Vec<&'a str> {
    let mut parts: Vec<&str> = if limit > 0 { re.splitn(s, limit).collect() } else { re.split(s).collect() };
    if limit == 0 {
        while parts.len() > 1 && parts.last() == Some(&"") {
            parts.pop();
        }
    }
    parts
}

/// `str_to_map(text, pairDelim, keyValueDelim)`: split into pairs, each into a key and an
/// optional value (NULL when the delimiter is absent).
fn str_to_map(args: &[ArrayRef], rows: usize, result: &DataType) -> Result<ArrayRef> {
    let text = args.first().and_then(|a| a.as_string_opt::<i32>()).ok_or_else(|| KilnError::internal("str_to_map text"))?;
    let delim = |i: usize, default: &str| -> Result<Vec<Option<String>>> {
        match args.get(i) {
            None => Ok(vec![Some(default.to_string()); rows]),
            Some(a) => {
                let s = a.as_string_opt::<i32>().ok_or_else(|| KilnError::internal("str_to_map delimiter"))?;
                Ok((0..rows).map(|r| s.is_valid(r).then(|| s.value(r).to_string())).collect())
            }
        }
    };
    let (pair, kv) = (delim(1, ",")?, delim(2, ":")?);
    let mut cache: std::collections::HashMap<String, regex::Regex> = std::collections::HashMap::new();
    let mut regex_for = |p: &str| -> Result<regex::Regex> {
        if let Some(r) = cache.get(p) {
            return Ok(r.clone());
        }
        let r = regex::Regex::new(p).map_err(|e| KilnError::exec(format!("[INVALID_PARAMETER_VALUE.PATTERN] The value of parameter(s) `regexp` in `str_to_map` is invalid: {p}: {e}. SQLSTATE: 22023")))?;
        cache.insert(p.to_string(), r.clone());
        Ok(r)
    };
    let (mut keys, mut values, mut lengths, mut valid) = (vec![], vec![], vec![], vec![]);
    for i in 0..rows {
        let (Some(p), Some(k)) = (&pair[i], &kv[i]) else {
            lengths.push(0);
            valid.push(false);
            continue;
        };
        if text.is_null(i) {
            lengths.push(0);
            valid.push(false);
            continue;
        }
        let (pre, kre) = (regex_for(p)?, regex_for(k)?);
        let entries = java_split(&pre, text.value(i), 0);
        for e in &entries {
            let mut kvs = java_split(&kre, e, 2).into_iter();
            keys.push(kvs.next().unwrap_or_default().to_string());
            values.push(kvs.next().map(str::to_string));
        }
        lengths.push(entries.len());
        valid.push(true);
    }
    let keys: ArrayRef = Arc::new(StringArray::from(keys));
    let values: ArrayRef = Arc::new(StringArray::from(values));
    build_map(result, keys, values, lengths, Some(NullBuffer::from(valid)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int32Array;

    fn ints(v: &[i32]) -> ArrayRef {
        Arc::new(Int32Array::from(v.to_vec()))
    }

    #[test]
    fn map_of_pairs_rejects_a_repeated_key_and_a_null_key() {
        let t = map_type(DataType::Int32, DataType::Int32);
        let ok = CreateMap.eval(&[ints(&[1, 1]), ints(&[2, 2]), ints(&[3, 4]), ints(&[5, 6])], 2, &t).unwrap();
        assert_eq!(crate::format::format_value(ok.as_ref(), 1).unwrap(), "{1 -> 2, 4 -> 6}");
        let dup = CreateMap.eval(&[ints(&[1]), ints(&[2]), ints(&[1]), ints(&[3])], 1, &t).unwrap_err();
        assert!(dup.to_string().contains("DUPLICATED_MAP_KEY"), "{dup}");
        let null_key: ArrayRef = Arc::new(Int32Array::from(vec![None]));
        let err = CreateMap.eval(&[null_key, ints(&[2])], 1, &t).unwrap_err();
        assert!(err.to_string().contains("NULL_MAP_KEY"), "{err}");
    }

    #[test]
    fn lookups_find_keys_and_give_null_for_missing_ones() {
        let t = map_type(DataType::Int32, DataType::Int32);
        let m = CreateMap.eval(&[ints(&[1, 1]), ints(&[10, 11]), ints(&[2, 3]), ints(&[20, 30])], 2, &t).unwrap();
        let got = GetMapValue.eval(&[m.clone(), ints(&[2, 2])], 2, &DataType::Int32).unwrap();
        assert_eq!(got.as_primitive::<arrow::datatypes::Int32Type>().iter().collect::<Vec<_>>(), [Some(20), None]);
        let size = MapSize.eval(&[m], 2, &DataType::Int32).unwrap();
        assert_eq!(size.as_primitive::<arrow::datatypes::Int32Type>().values().to_vec(), [2, 2]);
    }

    #[test]
    fn str_to_map_splits_like_java() {
        let t = map_type(DataType::Utf8, DataType::Utf8);
        let text: ArrayRef = Arc::new(StringArray::from(vec!["a:1,b:2,c", "x=1;y=2;"]));
        let m = StrToMap.eval(&[text.slice(0, 1)], 1, &t).unwrap();
        assert_eq!(crate::format::format_value(m.as_ref(), 0).unwrap(), "{a -> 1, b -> 2, c -> null}");
        let (p, k): (ArrayRef, ArrayRef) = (Arc::new(StringArray::from(vec![";"])), Arc::new(StringArray::from(vec!["="])));
        let m = StrToMap.eval(&[text.slice(1, 1), p, k], 1, &t).unwrap();
        assert_eq!(crate::format::format_value(m.as_ref(), 0).unwrap(), "{x -> 1, y -> 2}");
    }
}
