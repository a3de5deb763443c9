//! SortMergeJoin (inner, left outer, left semi, left anti) with its left side streaming: per
//! stream batch the runtime merges the sorted keys against the right partition's into each
//! row's range of equal-keyed right rows (`run::MergeSide`); the generated code walks that
//! range where a hash join walks a chain (`hash_probe::probe_joins`).

use std::sync::Arc;

use arrow::datatypes::DataType;
use cranelift_codegen::ir::{InstBuilder, Value};

use crate::codegen::expr::Tx;
use crate::codegen::rows::flags;
use super::Flattening;
use crate::codegen::spec::{build_columns, stage_join_type, substitute};
use crate::expr::Expr;
use crate::physical::PhysicalPlan;

/// Adds the join to the stage: its right partition is the build side, matched by range.
pub fn flatten(node: &Arc<PhysicalPlan>, f: &mut Flattening) -> Result<(), String> {
    let PhysicalPlan::SortMergeJoin { left_keys, right_keys, join_type, condition, right, .. } = node.as_ref() else { return Err("not a sort-merge join".into()) };
    let join_type = stage_join_type(*join_type, crate::physical::BuildSide::BuildRight).ok_or("a join type generated code does not run")?;
    let build = build_columns(right, join_type, &mut f.env);
    // The merge reads the keys of the stream batch as it arrives: over the input.
    let stream_keys: Vec<Expr> = left_keys.iter().map(|k| substitute(k, &f.env)).collect();
    // Integers and dates compare as their i64 values, in the Sort's order.
    let integer = |t: DataType| matches!(t, DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Date32);
    let int_keys = stream_keys.iter().chain(right_keys).all(|k| k.data_type().is_ok_and(integer));
    if !int_keys || !(1..=2).contains(&stream_keys.len()) {
        return Err("a sort-merge join on keys other than one or two integers or dates".into());
    }
    if !crate::physical::keys_read_only(&stream_keys, &f.input) {
        return Err("a sort-merge join whose keys read a joined column".into());
    }
    f.push_join(join_type, condition.as_ref(), right, build, stream_keys, right_keys, false, true)
}

/// The stream row's range of equal-keyed right rows, `from[row]..to[row]` (the table words
/// hold the two arrays the runtime merged for the batch): the first match and the end.
pub fn range(tx: &mut Tx, words: &[Value]) -> (Value, Value) {
    let row = tx.row();
    let off = tx.b.ins().ishl_imm_u(row, 2);
    let at = tx.b.ins().iadd(words[0], off);
    let from = tx.b.ins().uload32(flags(), at, 0);
    let at = tx.b.ins().iadd(words[1], off);
    let to = tx.b.ins().uload32(flags(), at, 0);
    (from, to)
}
