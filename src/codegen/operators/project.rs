//! Project at the top of a stage: each computed output column of the row, stored at the
//! output row (copied columns are gathered by the runtime, not in generated code).

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::DataType;
use cranelift_codegen::ir::{types, InstBuilder, Value};

use crate::codegen::expr::{out_width, Tx};
use crate::codegen::rows::flags;
use crate::codegen::rows::note;
use super::Flattening;
use crate::codegen::spec::{column_index, substitute, unsupported_reason, OutputColumn, StageSink};
use crate::expr::{Attribute, Expr};
use crate::physical::PhysicalPlan;

/// Adds the Project to the stage: the columns above read its expressions; at the stage's top
/// it is the sink, computing its columns (or copying input columns as they are).
pub fn flatten(node: &Arc<PhysicalPlan>, f: &mut Flattening) -> Result<(), String> {
    let PhysicalPlan::Project { list, .. } = node.as_ref() else { return Err("not a Project".into()) };
    if list.iter().any(|e| !e.deterministic()) {
        return Err("a non-deterministic projection".into());
    }
    let mut next = HashMap::new();
    for e in list {
        if let Some(a) = crate::plan::named_output(e) {
            next.insert(a.id, substitute(e.unalias(), &f.env));
        }
    }
    if Arc::ptr_eq(node, &f.top) {
        let output = node.output();
        let mut columns = vec![];
        for e in list {
            let x = substitute(e.unalias(), &f.env);
            match &x {
                // A column as it is: gathered by arrow's `take` (or passed on
                // whole when every row stays), not copied value by value.
                Expr::Attribute(a) => {
                    let i = column_index(&f.all_columns, a.id).ok_or("a column not in the stage input")?;
                    columns.push(OutputColumn::Copied(i));
                }
                _ => {
                    if x.data_type().map_err(|e| e.to_string())? == DataType::Null {
                        return Err(format!("a NULL-typed output column {x}"));
                    }
                    if let Some(r) = unsupported_reason(&x) {
                        return Err(format!("{r} in {x}"));
                    }
                    columns.push(OutputColumn::Computed(x));
                }
            }
        }
        f.sink = Some(StageSink::Output { columns, output });
    }
    f.env = next;
    Ok(())
}

/// Consumes one row: each computed column's value and valid byte at output row `at`.
pub fn consume(tx: &mut Tx, columns: &[OutputColumn], output: &[Attribute], outs: &[Option<[Value; 2]>], at: Value) -> Result<(), String> {
    for (k, (c, out)) in columns.iter().zip(outs).enumerate() {
        let (OutputColumn::Computed(e), Some([values, valid])) = (c, out) else { continue };
        let name = output.get(k).map(|a| format!("{}#{}", a.name, a.id.0)).unwrap_or_default();
        note(tx.b, tx.helpers, || format!("Project {name} = {e}: compute, store value and valid byte at the output row"));
        let t = e.data_type().map_err(|e| e.to_string())?;
        let (v, n) = tx.emit(e)?;
        let width = out_width(&t) as i64;
        let off = tx.b.ins().imul_imm_s(at, width);
        let addr = tx.b.ins().iadd(*values, off);
        let v = if matches!(t, DataType::Decimal128(..)) { tx.resize(v, types::I128) } else { v };
        tx.b.ins().store(flags(), v, addr, 0);
        let ok = match n {
            Some(n) => tx.b.ins().bxor_imm_u(n, 1),
            None => tx.b.ins().iconst(types::I8, 1),
        };
        let vaddr = tx.b.ins().iadd(*valid, at);
        tx.b.ins().store(flags(), ok, vaddr, 0);
    }
    Ok(())
}
