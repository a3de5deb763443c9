//! The expression translator: Cranelift IR for an expression over the current row.
//!
//! Every value travels as `(value, null)` where `null` is an `i8` (1 = NULL) or `None` when the
//! value cannot be NULL. Types in registers: boolean `i8`, int and date `i32`, bigint `i64`,
//! double `f64`, decimal `i64` up to precision 18 and `i128` above. Any error condition (an
//! overflow, a zero divisor, a decimal out of range, a value too wide for the fast path) jumps
//! to the function's `fail` block, which returns -1: the runtime then runs the partition
//! interpreted, which reports the error (or the result) exactly as the interpreter does.

use arrow::datatypes::DataType;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, Block, BlockArg, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::FunctionBuilder;

use super::helpers::{middle_pieces, Helpers};
use super::rows::{flags, note};
use super::COMPILED_WHEN_RUN;
use super::spec::{string_predicate, StringMatch, StringPredicate};
use crate::expr::{Attribute, BinaryOp, Expr, ScalarFunc};
use crate::types::ScalarValue;

/// The register type of a SQL type.
pub fn repr(t: &DataType) -> Type {
    match t {
        DataType::Boolean | DataType::Null => types::I8,
        // Loaded widened (`spec::widened_on_load`).
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Date32 => types::I32,
        DataType::Float32 | DataType::Float64 => types::F64,
        DataType::Decimal128(p, _) if *p <= 18 => types::I64,
        DataType::Decimal128(..) => types::I128,
        _ => types::I64,
    }
}

/// Bytes one value of `t` takes in an output buffer (decimals are written as Arrow's i128).
pub fn out_width(t: &DataType) -> usize {
    match t {
        DataType::Boolean => 1,
        DataType::Int32 | DataType::Date32 => 4,
        DataType::Decimal128(..) => 16,
        _ => 8,
    }
}


pub(super) type Emitted = (Value, Option<Value>);

/// The translator: a builder positioned inside a row loop, with the stage's column pointers.
pub struct Tx<'a, 'b> {
    pub(super) b: &'a mut FunctionBuilder<'b>,
    /// The stream input's columns, then each build side's (`StageSpec::columns`).
    pub(super) input: &'a [Attribute],
    /// Where each join's build columns start among `input`; they are read at its `build_rows`.
    pub(super) sides: Vec<usize>,
    /// Loaded column pointers: values, validity, validity offset, values offset.
    pub(super) cols: Vec<Option<[Value; 4]>>,
    pub(super) row: Value,
    /// Each join's build row of the current joined row (None: not in scope).
    pub(super) build_rows: Vec<Option<Value>>,
    pub(super) fail: Block,
    /// Column values loaded at the top of the row body (or of a join's match), where they
    /// dominate every use.
    pub(super) loaded: Vec<Option<Emitted>>,
    /// This variant runs only on batches whose columns have no NULLs: no validity reads.
    pub(super) no_nulls: bool,
    /// The search helper and its needles.
    pub(super) helpers: &'a Helpers,
}

pub(super) fn i128_const(b: &mut FunctionBuilder, v: i128) -> Value {
    let lo = b.ins().iconst(types::I64, v as u64 as i64);
    let hi = b.ins().iconst(types::I64, (v >> 64) as u64 as i64);
    b.ins().iconcat(lo, hi)
}

pub(super) fn int_const(b: &mut FunctionBuilder, ty: Type, v: i128) -> Value {
    if ty == types::I128 {
        i128_const(b, v)
    } else {
        b.ins().iconst(ty, v as i64)
    }
}

pub(super) fn zero(b: &mut FunctionBuilder, ty: Type) -> Value {
    if ty == types::F64 {
        b.ins().f64const(0.0)
    } else {
        int_const(b, ty, 0)
    }
}

pub(super) fn pow10(k: u32) -> Option<i128> {
    10i128.checked_pow(k)
}

impl<'a, 'b> Tx<'a, 'b> {
    /// `v` (i8) AND not NULL: the value is TRUE.
    pub(super) fn true_and_valid(&mut self, v: Value, null: Option<Value>) -> Value {
        match null {
            Some(n) => {
                let valid = self.b.ins().bxor_imm_u(n, 1);
                self.b.ins().band(v, valid)
            }
            None => v,
        }
    }

    /// `cond` (i8) and not NULL: jump to the fail block.
    pub(super) fn fail_if(&mut self, cond: Value, null: Option<Value>) {
        let cond = self.true_and_valid(cond, null);
        let cont = self.b.create_block();
        self.b.ins().brif(cond, self.fail, &[], cont, &[]);
        self.b.switch_to_block(cont);
    }

    pub(super) fn or_null(&mut self, a: Option<Value>, b: Option<Value>) -> Option<Value> {
        match (a, b) {
            (Some(x), Some(y)) => Some(self.b.ins().bor(x, y)),
            (x, None) => x,
            (None, y) => y,
        }
    }

    /// Converts an integer between register widths (sign-extending or truncating).
    pub(super) fn resize(&mut self, v: Value, to: Type) -> Value {
        let from = self.b.func.dfg.value_type(v);
        if from == to {
            v
        } else if from.bits() < to.bits() {
            self.b.ins().sextend(to, v)
        } else {
            self.b.ins().ireduce(to, v)
        }
    }

    /// Fails unless |v| < 10^p (decimal precision).
    pub(super) fn check_precision(&mut self, v: Value, p: u8, null: Option<Value>) -> Result<(), String> {
        let ty = self.b.func.dfg.value_type(v);
        let bound = pow10(p as u32).ok_or("precision above 38")?;
        if ty == types::I64 && bound > i64::MAX as i128 {
            return Ok(());
        }
        let hi = int_const(self.b, ty, bound);
        let lo = int_const(self.b, ty, -bound);
        let over = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, v, hi);
        let under = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, v, lo);
        let out = self.b.ins().bor(over, under);
        self.fail_if(out, null);
        Ok(())
    }

    /// Multiplies an integer by 10^k (k may be 0), in the value's own width.
    pub(super) fn scale_up(&mut self, v: Value, k: u32) -> Result<Value, String> {
        if k == 0 {
            return Ok(v);
        }
        let ty = self.b.func.dfg.value_type(v);
        let f = pow10(k).ok_or("rescale beyond 38 digits")?;
        let c = int_const(self.b, ty, f);
        Ok(self.b.ins().imul(v, c))
    }

    /// Loads every column in `used` once, at the top of the row body: the stream's, and a
    /// build side's only when its row is in scope.
    pub(super) fn preload(&mut self, used: &[bool]) -> Result<(), String> {
        self.loaded = vec![None; self.input.len()];
        for (i, u) in used.iter().enumerate() {
            let in_scope = self.side_of(i).is_none_or(|k| self.build_rows[k].is_some());
            if *u && in_scope {
                let v = self.load_column(i)?;
                self.loaded[i] = Some(v);
            }
        }
        Ok(())
    }

    pub(super) fn load_column(&mut self, idx: usize) -> Result<Emitted, String> {
        if let Some(Some(v)) = self.loaded.get(idx) {
            return Ok(*v);
        }
        let attr = self.input.get(idx).ok_or("column index out of range")?;
        let [values, validity, voff, boff] = self.cols.get(idx).copied().flatten().ok_or("column not loaded")?;
        let row = self.row_of(idx);
        let t = attr.data_type.clone();
        let v = match &t {
            // Loaded widened (`spec::widened_on_load`): only widening casts read the value.
            DataType::Int8 | DataType::Int16 | DataType::Float32 => {
                let width = if t == DataType::Int8 { 1 } else if t == DataType::Int16 { 2 } else { 4 };
                let off = self.b.ins().imul_imm_s(row, width);
                let addr = self.b.ins().iadd(values, off);
                match t {
                    DataType::Int8 => self.b.ins().sload8(types::I32, flags(), addr, 0),
                    DataType::Int16 => self.b.ins().sload16(types::I32, flags(), addr, 0),
                    _ => {
                        let f = self.b.ins().load(types::F32, flags(), addr, 0);
                        self.b.ins().fpromote(types::F64, f)
                    }
                }
            }
            // Only NULL tests read such a column (the stage checked): no value to load.
            t if !super::spec::supported_type(t) => self.b.ins().iconst(types::I8, 0),
            // Strings are read by `string_predicate` from their offsets and bytes.
            DataType::Utf8 => self.b.ins().iconst(types::I8, 0),
            DataType::Boolean => {
                let bit = self.b.ins().iadd(row, boff);
                self.bit(values, bit)
            }
            _ => {
                let width = match &t {
                    DataType::Int32 | DataType::Date32 => 4,
                    DataType::Decimal128(..) => 16,
                    _ => 8,
                };
                let off = self.b.ins().imul_imm_s(row, width);
                let addr = self.b.ins().iadd(values, off);
                // Decimals up to 18 digits fit the low 8 bytes of Arrow's little-endian i128.
                self.b.ins().load(repr(&t), flags(), addr, 0)
            }
        };
        let null = if attr.nullable && !self.no_nulls {
            let bit = self.b.ins().iadd(row, voff);
            let valid = self.bit(validity, bit);
            Some(self.b.ins().bxor_imm_u(valid, 1))
        } else {
            None
        };
        Ok((v, null))
    }

    /// The row of input column `idx` being read: the build side's row of the current pair for
    /// a build column, else the stream row.
    pub(super) fn row_of(&self, idx: usize) -> Value {
        match self.side_of(idx) {
            Some(k) => self.build_rows[k].unwrap_or(self.row),
            None => self.row,
        }
    }

    /// The current stream row's index in its batch.
    pub(super) fn row(&self) -> Value {
        self.row
    }

    /// The join whose build side column `idx` is (None: a stream column).
    pub(super) fn side_of(&self, idx: usize) -> Option<usize> {
        self.sides.iter().rposition(|s| *s <= idx)
    }

    /// Enters join `k`'s build row `row` (None: its columns leave scope): values loaded for
    /// this and later joins are forgotten, and the `used` columns of this side loaded anew.
    pub(super) fn enter_side(&mut self, k: usize, row: Option<Value>, used: &[bool]) -> Result<(), String> {
        self.build_rows[k] = row;
        for k2 in k..self.build_rows.len() {
            if k2 > k {
                self.build_rows[k2] = None;
            }
        }
        let start = self.sides[k];
        for i in start..self.loaded.len() {
            self.loaded[i] = None;
        }
        if row.is_some() {
            let end = self.sides.get(k + 1).copied().unwrap_or(self.input.len());
            for i in start..end {
                if used.get(i).copied().unwrap_or(false) {
                    let v = self.load_column(i)?;
                    self.loaded[i] = Some(v);
                }
            }
        }
        Ok(())
    }

    /// Jumps to `skip` unless every condition is TRUE.
    pub(super) fn require(&mut self, conditions: &[Expr], skip: Block, operator: &str) -> Result<(), String> {
        if let Some(pass) = self.conjunction(conditions, skip, operator)? {
            let cont = self.b.create_block();
            self.b.ins().brif(pass, cont, &[], skip, &[]);
            self.b.switch_to_block(cont);
        }
        Ok(())
    }

    /// A string column's start address and length (see `string_value`).
    pub(super) fn string_key(&mut self, column: &Attribute) -> Result<(Value, Value, Option<Value>), String> {
        let (begin, _, len, null) = self.string_value(column)?;
        Ok((begin, len, null))
    }

    pub(super) fn helpers(&self) -> &Helpers {
        self.helpers
    }

    pub(super) fn or_nulls(&mut self, a: Option<Value>, b: Option<Value>) -> Option<Value> {
        self.or_null(a, b)
    }

    /// Bit `bit` of the bitmap at `base`, as an i8 0/1.
    pub(super) fn bit(&mut self, base: Value, bit: Value) -> Value {
        let byte_idx = self.b.ins().ushr_imm_u(bit, 3);
        let addr = self.b.ins().iadd(base, byte_idx);
        let byte = self.b.ins().uload8(types::I32, flags(), addr, 0);
        let shift = self.b.ins().band_imm_u(bit, 7);
        let shift = self.b.ins().ireduce(types::I32, shift);
        let shifted = self.b.ins().ushr(byte, shift);
        let one = self.b.ins().band_imm_u(shifted, 1);
        self.b.ins().ireduce(types::I8, one)
    }

    pub(super) fn literal(&mut self, v: &ScalarValue) -> Result<Emitted, String> {
        Ok(match v {
            ScalarValue::Null(t) => {
                let z = zero(self.b, repr(t));
                let n = self.b.ins().iconst(types::I8, 1);
                (z, Some(n))
            }
            ScalarValue::Boolean(x) => (self.b.ins().iconst(types::I8, *x as i64), None),
            ScalarValue::Int8(x) => (self.b.ins().iconst(types::I32, *x as i64), None),
            ScalarValue::Int16(x) => (self.b.ins().iconst(types::I32, *x as i64), None),
            ScalarValue::Float32(x) => (self.b.ins().f64const(*x as f64), None),
            ScalarValue::Int32(x) => (self.b.ins().iconst(types::I32, *x as i64), None),
            ScalarValue::Date32(x) => (self.b.ins().iconst(types::I32, *x as i64), None),
            ScalarValue::Int64(x) => (self.b.ins().iconst(types::I64, *x), None),
            ScalarValue::Float64(x) => (self.b.ins().f64const(*x), None),
            ScalarValue::Decimal(x, p, _) => (int_const(self.b, repr(&DataType::Decimal128(*p, 0)), *x), None),
            other => return Err(format!("literal {other}")),
        })
    }

    /// A string column's value: its first byte's address, its end offset's address and its
    /// length in bytes (offsets widened to i64).
    pub(super) fn string_value(&mut self, column: &Attribute) -> Result<(Value, Value, Value, Option<Value>), String> {
        let idx = self.input.iter().position(|c| c.id == column.id).ok_or("string column not in the stage input")?;
        let (_, null) = self.load_column(idx)?;
        let [offsets, _, _, data] = self.cols.get(idx).copied().flatten().ok_or("column not loaded")?;
        let row = self.row_of(idx);
        let off = self.b.ins().imul_imm_s(row, 4);
        let at = self.b.ins().iadd(offsets, off);
        let start = self.b.ins().sload32(flags(), at, 0);
        let end = self.b.ins().sload32(flags(), at, 4);
        let len = self.b.ins().isub(end, start);
        let begin = self.b.ins().iadd(data, start);
        let stop = self.b.ins().iadd(data, end);
        Ok((begin, stop, len, null))
    }

    /// 1 when the bytes at `addr` equal `bytes` (the caller checked they are in bounds).
    pub(super) fn bytes_equal(&mut self, addr: Value, bytes: &[u8]) -> Value {
        let mut all = self.b.ins().iconst(types::I8, 1);
        for (i, byte) in bytes.iter().enumerate() {
            let v = self.b.ins().uload8(types::I32, flags(), addr, i as i32);
            let eq = self.b.ins().icmp_imm_s(IntCC::Equal, v, *byte as i64);
            all = self.b.ins().band(all, eq);
        }
        all
    }

    /// A string column against literals, byte by byte; nothing is read past a value's end.
    pub(super) fn string_predicate(&mut self, p: &StringPredicate) -> Result<Emitted, String> {
        let (begin, stop, len, null) = self.string_value(&p.column)?;
        let (stop, len) = match p.prefix_chars {
            Some(n) => self.first_chars(begin, len, n),
            None => (stop, len),
        };
        let mut any = self.b.ins().iconst(types::I8, 0);
        for (bytes, kind) in &p.alternatives {
            let n = bytes.len() as i64;
            let result = match kind {
                StringMatch::Any => self.b.ins().iconst(types::I8, 1),
                StringMatch::Pattern => self.like_pattern(bytes, begin, stop, len)?,
                StringMatch::Less | StringMatch::Greater => {
                    let order = self.compare_bytes(bytes, begin, len);
                    let cc = if *kind == StringMatch::Less { IntCC::SignedLessThan } else { IntCC::SignedGreaterThan };
                    self.b.ins().icmp_imm_s(cc, order, 0)
                }
                StringMatch::Exact | StringMatch::Prefix | StringMatch::Suffix => {
                    let (cc, base) = match kind {
                        StringMatch::Exact => (IntCC::Equal, begin),
                        StringMatch::Prefix => (IntCC::SignedGreaterThanOrEqual, begin),
                        _ => (IntCC::SignedGreaterThanOrEqual, self.b.ins().iadd_imm_s(stop, -n)),
                    };
                    let len_ok = self.b.ins().icmp_imm_s(cc, len, n);
                    self.guarded(len_ok, &mut |tx| tx.bytes_equal(base, bytes))
                }
            };
            any = self.b.ins().bor(any, result);
        }
        let v = if p.negated { self.b.ins().bxor_imm_u(any, 1) } else { any };
        Ok((v, null))
    }

    /// The end and byte length of a value's first `n` characters (all of it when shorter): one
    /// step a character, by the UTF-8 lead byte's length, reading no byte past the value.
    pub(super) fn first_chars(&mut self, begin: Value, len: Value, n: u32) -> (Value, Value) {
        note(self.b, self.helpers, || format!("substring(_, 1, {n}): the bytes of the first {n} characters"));
        let mut pos = self.b.ins().iconst(types::I64, 0);
        for _ in 0..n {
            let inside = self.b.ins().icmp(IntCC::SignedLessThan, pos, len);
            let step_block = self.b.create_block();
            let merge = self.b.create_block();
            let next = self.b.append_block_param(merge, types::I64);
            self.b.ins().brif(inside, step_block, &[], merge, &[BlockArg::Value(pos)]);
            self.b.switch_to_block(step_block);
            let at = self.b.ins().iadd(begin, pos);
            let lead = self.b.ins().uload8(types::I32, flags(), at, 0);
            let mut width = self.b.ins().iconst(types::I64, 1);
            for bound in [0xC0, 0xE0, 0xF0] {
                let more = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, lead, bound);
                let more = self.b.ins().uextend(types::I64, more);
                width = self.b.ins().iadd(width, more);
            }
            let stepped = self.b.ins().iadd(pos, width);
            self.b.ins().jump(merge, &[BlockArg::Value(stepped)]);
            self.b.switch_to_block(merge);
            pos = next;
        }
        // A malformed last character cannot reach past the value.
        let past = self.b.ins().icmp(IntCC::SignedGreaterThan, pos, len);
        let cut = self.b.ins().select(past, len, pos);
        (self.b.ins().iadd(begin, cut), cut)
    }

    /// `f()` (an i8) where `cond` holds, else 0: `f` may read what `cond` proves in bounds.
    pub(super) fn guarded(&mut self, cond: Value, f: &mut dyn FnMut(&mut Self) -> Value) -> Value {
        let then = self.b.create_block();
        let merge = self.b.create_block();
        let result = self.b.append_block_param(merge, types::I8);
        let no = self.b.ins().iconst(types::I8, 0);
        self.b.ins().brif(cond, then, &[], merge, &[BlockArg::Value(no)]);
        self.b.switch_to_block(then);
        let v = f(self);
        self.b.ins().jump(merge, &[BlockArg::Value(v)]);
        self.b.switch_to_block(merge);
        result
    }

    /// The value's bytes against `lit` as Spark's UTF8String.compareTo: -1, 0 or 1 (an i8). The
    /// first differing byte decides (unsigned); else the shorter value is smaller.
    pub(super) fn compare_bytes(&mut self, lit: &[u8], begin: Value, len: Value) -> Value {
        let merge = self.b.create_block();
        let order = self.b.append_block_param(merge, types::I8);
        let (less, greater) = (-1i64, 1i64);
        for (i, byte) in lit.iter().enumerate() {
            // The value ended before the literal: it is a proper prefix, so smaller.
            let ended = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, len, i as i64);
            let read = self.b.create_block();
            let lt = self.b.ins().iconst(types::I8, less);
            self.b.ins().brif(ended, merge, &[BlockArg::Value(lt)], read, &[]);
            self.b.switch_to_block(read);
            let v = self.b.ins().uload8(types::I32, flags(), begin, i as i32);
            let same = self.b.ins().icmp_imm_s(IntCC::Equal, v, *byte as i64);
            let next = self.b.create_block();
            let differs = self.b.create_block();
            self.b.ins().brif(same, next, &[], differs, &[]);
            self.b.switch_to_block(differs);
            let below = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, v, *byte as i64);
            let (lt, gt) = (self.b.ins().iconst(types::I8, less), self.b.ins().iconst(types::I8, greater));
            let o = self.b.ins().select(below, lt, gt);
            self.b.ins().jump(merge, &[BlockArg::Value(o)]);
            self.b.switch_to_block(next);
        }
        // Every byte of the literal matched: longer values are greater.
        let longer = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, len, lit.len() as i64);
        self.b.ins().jump(merge, &[BlockArg::Value(longer)]);
        self.b.switch_to_block(merge);
        order
    }

    /// LIKE with literal pieces between `%`s: the first piece anchored at the start (unless the
    /// pattern starts with `%`), the last at the end (unless it ends with `%`), and each middle
    /// piece found leftmost after the previous one (a per-value call: string work, see
    /// `codegen-lessons.md`).
    pub(super) fn like_pattern(&mut self, pattern: &[u8], begin: Value, stop: Value, len: Value) -> Result<Value, String> {
        let pieces: Vec<&[u8]> = pattern.split(|c| *c == b'%').collect();
        let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
        let middles = middle_pieces(pattern);
        let done = self.b.create_block();
        let matched = self.b.append_block_param(done, types::I8);
        let no = self.b.ins().iconst(types::I8, 0);
        // Where the next piece may start, and where pieces must end.
        let mut pos = begin;
        let mut limit = stop;
        let anchored = (first.len() + last.len()) as i64;
        if anchored > 0 {
            // The anchored pieces must fit without overlapping.
            let fits = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, len, anchored);
            let cont = self.b.create_block();
            self.b.ins().brif(fits, cont, &[], done, &[BlockArg::Value(no)]);
            self.b.switch_to_block(cont);
            let mut ok = self.b.ins().iconst(types::I8, 1);
            if !first.is_empty() {
                let eq = self.bytes_equal(begin, first);
                ok = self.b.ins().band(ok, eq);
                pos = self.b.ins().iadd_imm_s(begin, first.len() as i64);
            }
            if !last.is_empty() {
                limit = self.b.ins().iadd_imm_s(stop, -(last.len() as i64));
                let eq = self.bytes_equal(limit, last);
                ok = self.b.ins().band(ok, eq);
            }
            let cont = self.b.create_block();
            let no = self.b.ins().iconst(types::I8, 0);
            self.b.ins().brif(ok, cont, &[], done, &[BlockArg::Value(no)]);
            self.b.switch_to_block(cont);
        }
        for piece in middles {
            // Each piece is searched after the previous one, by the helper (memchr's memmem).
            let (Some(find), Some((gv, offsets))) = (self.helpers.find, &self.helpers.needles) else {
                return Err("a LIKE pattern without the search helper".into());
            };
            let at = offsets.iter().find(|(n, _)| n.as_slice() == piece).map(|(_, o)| *o).ok_or("a LIKE piece without a needle")?;
            let base = self.b.ins().symbol_value(types::I64, *gv);
            let finder = self.b.ins().load(types::I64, flags(), base, at as i32);
            let room = self.b.ins().isub(limit, pos);
            let call = self.b.ins().call(find, &[pos, room, finder]);
            let index = self.b.inst_results(call)[0];
            let missing = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, index, 0);
            let found = self.b.create_block();
            let no = self.b.ins().iconst(types::I8, 0);
            self.b.ins().brif(missing, done, &[BlockArg::Value(no)], found, &[]);
            self.b.switch_to_block(found);
            let start = self.b.ins().iadd(pos, index);
            pos = self.b.ins().iadd_imm_s(start, piece.len() as i64);
        }
        let yes = self.b.ins().iconst(types::I8, 1);
        self.b.ins().jump(done, &[BlockArg::Value(yes)]);
        self.b.switch_to_block(done);
        Ok(matched)
    }

    /// length(): the value's characters, counted as the UTF-8 bytes that do not continue one.
    pub(super) fn length(&mut self, column: &Attribute) -> Result<Emitted, String> {
        let (begin, stop, _, null) = self.string_value(column)?;
        let header = self.b.create_block();
        let p = self.b.append_block_param(header, types::I64);
        let count = self.b.append_block_param(header, types::I32);
        let body = self.b.create_block();
        let done = self.b.create_block();
        let total = self.b.append_block_param(done, types::I32);
        let zero = self.b.ins().iconst(types::I32, 0);
        self.b.ins().jump(header, &[BlockArg::Value(begin), BlockArg::Value(zero)]);
        self.b.switch_to_block(header);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, p, stop);
        self.b.ins().brif(more, body, &[], done, &[BlockArg::Value(count)]);
        self.b.switch_to_block(body);
        let c = self.b.ins().uload8(types::I32, flags(), p, 0);
        let top = self.b.ins().band_imm_u(c, 0xC0);
        let starts = self.b.ins().icmp_imm_s(IntCC::NotEqual, top, 0x80);
        let starts = self.b.ins().uextend(types::I32, starts);
        let count1 = self.b.ins().iadd(count, starts);
        let p1 = self.b.ins().iadd_imm_s(p, 1);
        self.b.ins().jump(header, &[BlockArg::Value(p1), BlockArg::Value(count1)]);
        self.b.switch_to_block(done);
        Ok((total, null))
    }

    /// The conjunction of `conditions` as a pass bit (true and not NULL), None if empty.
    /// Conjuncts that cannot fail are combined without branches (no mispredictions on selective
    /// filters). One that can fail (1/x, an overflow) runs unless an earlier conjunct is FALSE,
    /// as `a AND b` evaluates `b` when `a` is TRUE or NULL: rows with a FALSE one jump to `skip`.
    pub(super) fn conjunction(&mut self, conditions: &[Expr], skip: Block, operator: &str) -> Result<Option<Value>, String> {
        let mut pass: Option<Value> = None;
        let mut not_false: Option<Value> = None;
        for c in conditions {
            note(self.b, self.helpers, || format!("{operator} {}", parenthesized(c)));
            if let (true, Some(nf)) = (can_fail(c), not_false) {
                let cont = self.b.create_block();
                self.b.ins().brif(nf, cont, &[], skip, &[]);
                self.b.switch_to_block(cont);
                not_false = None;
            }
            let (v, null) = self.emit(c)?;
            let this_pass = self.true_and_valid(v, null);
            let this_not_false = match null {
                Some(n) => self.b.ins().bor(v, n),
                None => v,
            };
            pass = Some(match pass {
                Some(p) => self.b.ins().band(p, this_pass),
                None => this_pass,
            });
            not_false = Some(match not_false {
                Some(p) => self.b.ins().band(p, this_not_false),
                None => this_not_false,
            });
        }
        Ok(pass)
    }

    /// Emits `e` for the current row.
    pub fn emit(&mut self, e: &Expr) -> Result<Emitted, String> {
        if let Some(p) = string_predicate(e) {
            return self.string_predicate(&p);
        }
        match e {
            Expr::Attribute(a) => {
                let idx = self.input.iter().position(|c| c.id == a.id).ok_or_else(|| format!("column {a} not in the stage input"))?;
                self.load_column(idx)
            }
            Expr::Literal(v) => self.literal(v),
            Expr::ScalarSubqueryExec(sq) => self.literal(&super::spec::subquery_constant(sq)),
            Expr::Alias { child, .. } | Expr::Replaceable { replacement: child, .. } => self.emit(child),
            Expr::Not(c) => {
                let (v, n) = self.emit(c)?;
                Ok((self.b.ins().bxor_imm_u(v, 1), n))
            }
            Expr::IsNull(c) => {
                let (_, n) = self.emit(c)?;
                Ok((n.unwrap_or_else(|| self.b.ins().iconst(types::I8, 0)), None))
            }
            Expr::IsNotNull(c) => {
                let (_, n) = self.emit(c)?;
                let v = match n {
                    Some(n) => self.b.ins().bxor_imm_u(n, 1),
                    None => self.b.ins().iconst(types::I8, 1),
                };
                Ok((v, None))
            }
            Expr::Negative(c) => {
                let t = c.data_type().map_err(|e| e.to_string())?;
                let (v, n) = self.emit(c)?;
                match t {
                    DataType::Float64 => Ok((self.b.ins().fneg(v), n)),
                    DataType::Int32 | DataType::Int64 => {
                        let ty = repr(&t);
                        let min = if ty == types::I32 { i32::MIN as i64 } else { i64::MIN };
                        let is_min = self.b.ins().icmp_imm_s(IntCC::Equal, v, min);
                        self.fail_if(is_min, n);
                        Ok((self.b.ins().ineg(v), n))
                    }
                    DataType::Decimal128(..) => Ok((self.b.ins().ineg(v), n)),
                    other => Err(format!("negating {other}")),
                }
            }
            Expr::Cast { child, to, .. } => self.cast(child, to),
            Expr::Binary { op: BinaryOp::And, left, right } => self.logic(true, left, right),
            Expr::Binary { op: BinaryOp::Or, left, right } => self.logic(false, left, right),
            Expr::Binary { op, left, right } if op.is_comparison() => self.compare(*op, left, right),
            Expr::Binary { op, left, right } => self.arithmetic(*op, left, right, e),
            Expr::InList { child, list, negated } => self.in_list(child, list, *negated),
            Expr::CaseWhen { branches, else_expr, .. } => self.case_when(e, branches, else_expr.as_deref()),
            Expr::Function { func: ScalarFunc::Length, args } => match args.as_slice() {
                [Expr::Attribute(a)] => self.length(a),
                _ => Err(format!("expression {e}")),
            },
            Expr::Function { func: ScalarFunc::Abs, args } => match args.as_slice() {
                [x] => self.abs(x),
                _ => Err(format!("expression {e}")),
            },
            Expr::Function { func: ScalarFunc::MightContain, args } => self.might_contain(args),
            // spark.sql.ansi.enabled=false: the operation as ANSI; where it fails (to `fail`),
            // the interpreter gives the legacy value.
            Expr::Function { func: ScalarFunc::Builtin(crate::expr::Builtin::More(crate::expr::MoreFn::Legacy)), args } => match args.as_slice() {
                [x] => self.emit(x),
                _ => Err(format!("expression {e}")),
            },
            other => Err(format!("expression {other}")),
        }
    }

    /// might_contain(filter, xxhash64(key)) (`expr/bloom.rs`): Spark's XXH64 of the key, then
    /// the three bits of its word in the filter, which is read in place (the executor ran the
    /// subquery that built it before compiling the stage; a NULL filter keeps no row).
    pub(super) fn might_contain(&mut self, args: &[Expr]) -> Result<Emitted, String> {
        let key = super::spec::bloom_probe(args).ok_or("might_contain of a key generated code cannot hash")?;
        // EXPLAIN CODEGEN without running the query: the filter's bits are not there to read.
        if let Some(Expr::ScalarSubqueryExec(s)) = args.first() {
            if s.value.get().is_none() {
                return Err(format!("{COMPILED_WHEN_RUN}: it reads the Bloom filter scalar-subquery#{} builds first (EXPLAIN with --analyze shows its code)", s.id.0));
            }
        }
        let filter = crate::expr::bloom::filter_bytes(&args[0]).map_err(|e| e.to_string())?;
        let Some(filter) = filter else { return self.literal(&ScalarValue::Null(DataType::Boolean)) };
        let bytes = arrow::array::AsArray::as_binary::<i32>(filter.as_ref()).value(0);
        let words = (bytes.len() / 8) as i64;
        if words == 0 || words & (words - 1) != 0 {
            return Err(format!("a Bloom filter of {} bytes", bytes.len()));
        }
        let int = key.data_type().map_err(|e| e.to_string())? != DataType::Int64;
        let (v, null) = self.emit(key)?;
        let h = self.xxhash64(v, int);
        // bloom::word_index and bloom::bit_mask.
        let hi = self.b.ins().ushr_imm_u(h, i64::from(crate::expr::bloom::WORD_SHIFT));
        let idx = self.b.ins().band_imm_u(hi, words - 1);
        let off = self.b.ins().ishl_imm_u(idx, 3);
        let base = self.b.ins().iconst(types::I64, bytes.as_ptr() as i64);
        let addr = self.b.ins().iadd(base, off);
        let word = self.b.ins().load(types::I64, MemFlagsData::new().with_notrap(), addr, 0);
        let one = self.b.ins().iconst(types::I64, 1);
        let mut mask = self.b.ins().iconst(types::I64, 0);
        for shift in crate::expr::bloom::BIT_SHIFTS {
            let s = self.b.ins().ushr_imm_u(h, i64::from(shift));
            let s = self.b.ins().band_imm_u(s, 63);
            let bit = self.b.ins().ishl(one, s);
            mask = self.b.ins().bor(mask, bit);
        }
        let hit = self.b.ins().band(word, mask);
        Ok((self.b.ins().icmp(IntCC::Equal, hit, mask), null))
    }

    /// Spark's xxhash64 (seed 42) of a bigint, or of an int's 4 bytes (`int`), as
    /// `common::hash`'s `xxh64_long_seeded` / `xxh64_int_seeded`, with its constants.
    pub(super) fn xxhash64(&mut self, v: Value, int: bool) -> Value {
        use crate::common::hash as xxh;
        let (p1, p2, p3, p4, p5) = (xxh::P1 as i64, xxh::P2 as i64, xxh::P3 as i64, xxh::P4 as i64, xxh::P5 as i64);
        let seed = xxh::HLL_SEED as i64;
        let h = if int {
            let x = self.b.ins().uextend(types::I64, v);
            let k = self.b.ins().imul_imm_s(x, p1);
            let h = self.b.ins().bxor_imm_u(k, seed.wrapping_add(p5).wrapping_add(4));
            let h = self.b.ins().rotl_imm_u(h, 23);
            let h = self.b.ins().imul_imm_s(h, p2);
            self.b.ins().iadd_imm_s(h, p3)
        } else {
            let k = self.b.ins().imul_imm_s(v, p2);
            let k = self.b.ins().rotl_imm_u(k, 31);
            let k = self.b.ins().imul_imm_s(k, p1);
            let h = self.b.ins().bxor_imm_u(k, seed.wrapping_add(p5).wrapping_add(8));
            let h = self.b.ins().rotl_imm_u(h, 27);
            let h = self.b.ins().imul_imm_s(h, p1);
            self.b.ins().iadd_imm_s(h, p4)
        };
        let s = self.b.ins().ushr_imm_u(h, 33);
        let h = self.b.ins().bxor(h, s);
        let h = self.b.ins().imul_imm_s(h, p2);
        let s = self.b.ins().ushr_imm_u(h, 29);
        let h = self.b.ins().bxor(h, s);
        let h = self.b.ins().imul_imm_s(h, p3);
        let s = self.b.ins().ushr_imm_u(h, 32);
        self.b.ins().bxor(h, s)
    }

    /// abs(): the argument's type; abs of the smallest int or bigint overflows (ANSI).
    pub(super) fn abs(&mut self, x: &Expr) -> Result<Emitted, String> {
        let t = x.data_type().map_err(|e| e.to_string())?;
        let (v, n) = self.emit(x)?;
        match t {
            DataType::Null => Ok((v, n)),
            DataType::Float64 => Ok((self.b.ins().fabs(v), n)),
            DataType::Int32 | DataType::Int64 | DataType::Decimal128(..) => {
                if let DataType::Int32 | DataType::Int64 = t {
                    let min = if t == DataType::Int32 { i32::MIN as i64 } else { i64::MIN };
                    let is_min = self.b.ins().icmp_imm_s(IntCC::Equal, v, min);
                    self.fail_if(is_min, n);
                }
                let ty = self.b.func.dfg.value_type(v);
                let z = zero(self.b, ty);
                let negative = self.b.ins().icmp(IntCC::SignedLessThan, v, z);
                let neg = self.b.ins().ineg(v);
                Ok((self.b.ins().select(negative, neg, v), n))
            }
            other => Err(format!("abs of {other}")),
        }
    }

    pub(super) fn cast(&mut self, child: &Expr, to: &DataType) -> Result<Emitted, String> {
        let from = child.data_type().map_err(|e| e.to_string())?;
        if from == DataType::Null {
            let z = zero(self.b, repr(to));
            return Ok((z, Some(self.b.ins().iconst(types::I8, 1))));
        }
        let (v, n) = self.emit(child)?;
        match (&from, to) {
            (f, t) if f == t => Ok((v, n)),
            // Columns loaded widened: a tinyint or smallint is already an int, a float a double.
            (DataType::Int8 | DataType::Int16, DataType::Int32) | (DataType::Float32, DataType::Float64) => Ok((v, n)),
            (DataType::Int8 | DataType::Int16 | DataType::Int32, DataType::Int64) => Ok((self.b.ins().sextend(types::I64, v), n)),
            (DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64, DataType::Float64) => {
                Ok((self.b.ins().fcvt_from_sint(types::F64, v), n))
            }
            (DataType::Decimal128(_, s1), DataType::Decimal128(p, s)) if s < s1 && self.b.func.dfg.value_type(v) == types::I64 => {
                // Fewer fraction digits: divide, rounding HALF_UP (away from zero on a tie).
                let f = pow10((*s1 - *s) as u32).ok_or("decimal scale")? as i64;
                let q = self.b.ins().sdiv_imm_s(v, f);
                let r = self.b.ins().srem_imm_s(v, f);
                let neg_r = self.b.ins().ineg(r);
                let r_negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, r, 0);
                let abs_r = self.b.ins().select(r_negative, neg_r, r);
                let twice = self.b.ins().imul_imm_s(abs_r, 2);
                let round = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, twice, f);
                let v_negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, v, 0);
                let one = self.b.ins().iconst(types::I64, 1);
                let minus_one = self.b.ins().iconst(types::I64, -1);
                let step = self.b.ins().select(v_negative, minus_one, one);
                let zero = self.b.ins().iconst(types::I64, 0);
                let step = self.b.ins().select(round, step, zero);
                let rounded = self.b.ins().iadd(q, step);
                self.check_precision(rounded, *p, n)?;
                Ok((self.resize(rounded, repr(to)), n))
            }
            (DataType::Int32 | DataType::Int64, DataType::Decimal128(p, s)) | (DataType::Decimal128(_, _), DataType::Decimal128(p, s)) => {
                let from_scale = match from {
                    DataType::Decimal128(_, fs) => fs,
                    _ => 0,
                };
                if *s < from_scale {
                    return Err("a cast that rounds a decimal".into());
                }
                // Widen first: the scaled value needs up to p digits.
                let wide = self.resize(v, types::I128);
                let scaled = self.scale_up(wide, (*s - from_scale) as u32)?;
                self.check_precision(scaled, *p, n)?;
                Ok((self.resize(scaled, repr(to)), n))
            }
            (DataType::Int64, DataType::Int32) => {
                let narrow = self.b.ins().ireduce(types::I32, v);
                let back = self.b.ins().sextend(types::I64, narrow);
                let differs = self.b.ins().icmp(IntCC::NotEqual, back, v);
                self.fail_if(differs, n);
                Ok((narrow, n))
            }
            (DataType::Float64, DataType::Int32 | DataType::Int64) => {
                // The interpreter's (Spark's) check: floor and ceil within range, NaN fails;
                // then truncation toward zero (2^63 saturates to the largest bigint, as there).
                let (lo, hi) = if *to == DataType::Int32 { (i32::MIN as f64, i32::MAX as f64) } else { (i64::MIN as f64, i64::MAX as f64) };
                let floor = self.b.ins().floor(v);
                let ceil = self.b.ins().ceil(v);
                let (hi, lo) = (self.b.ins().f64const(hi), self.b.ins().f64const(lo));
                let below_hi = self.b.ins().fcmp(FloatCC::LessThanOrEqual, floor, hi);
                let above_lo = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, ceil, lo);
                let in_range = self.b.ins().band(below_hi, above_lo);
                let out = self.b.ins().bxor_imm_u(in_range, 1);
                self.fail_if(out, n);
                Ok((self.b.ins().fcvt_to_sint_sat(repr(to), v), n))
            }
            (DataType::Decimal128(_, s), DataType::Int32 | DataType::Int64) => {
                // Truncation toward zero; p <= 18, so the value is an i64 (checked by the spec).
                let f = u32::try_from(*s).ok().and_then(pow10).ok_or("decimal scale")?;
                let q = self.b.ins().sdiv_imm_s(v, f as i64);
                if *to == DataType::Int32 {
                    let narrow = self.b.ins().ireduce(types::I32, q);
                    let back = self.b.ins().sextend(types::I64, narrow);
                    let differs = self.b.ins().icmp(IntCC::NotEqual, back, q);
                    self.fail_if(differs, n);
                    Ok((narrow, n))
                } else {
                    Ok((q, n))
                }
            }
            (DataType::Decimal128(_, s), DataType::Float64) => {
                // As the interpreter: an unscaled value within 2^53 divided by an exact power of
                // ten rounds once; wider values go to the interpreter.
                let d: f64 = format!("1e{s}").parse().map_err(|_| "decimal scale")?;
                let ty = self.b.func.dfg.value_type(v);
                let limit = 1i128 << 53;
                let (hi, lo) = (int_const(self.b, ty, limit), int_const(self.b, ty, -limit));
                let over = self.b.ins().icmp(IntCC::SignedGreaterThan, v, hi);
                let under = self.b.ins().icmp(IntCC::SignedLessThan, v, lo);
                let wide = self.b.ins().bor(over, under);
                self.fail_if(wide, n);
                let v64 = self.resize(v, types::I64);
                let x = self.b.ins().fcvt_from_sint(types::F64, v64);
                let d = self.b.ins().f64const(d);
                Ok((self.b.ins().fdiv(x, d), n))
            }
            (f, t) => Err(format!("cast from {f} to {t}")),
        }
    }

    /// AND (`is_and`) / OR with SQL's three-valued logic; the right side runs only for rows
    /// whose left side does not decide the result, as the interpreter does.
    pub(super) fn logic(&mut self, is_and: bool, left: &Expr, right: &Expr) -> Result<Emitted, String> {
        let (lv, ln) = self.emit(left)?;
        let decisive = if is_and { 0 } else { 1 };
        let is_decisive = self.b.ins().icmp_imm_s(IntCC::Equal, lv, decisive);
        let decided = self.true_and_valid(is_decisive, ln);
        let merge = self.b.create_block();
        let mv = self.b.append_block_param(merge, types::I8);
        let mn = self.b.append_block_param(merge, types::I8);
        let rhs = self.b.create_block();
        let dv = self.b.ins().iconst(types::I8, decisive);
        let zero = self.b.ins().iconst(types::I8, 0);
        self.b.ins().brif(decided, merge, &[BlockArg::Value(dv), BlockArg::Value(zero)], rhs, &[]);
        self.b.switch_to_block(rhs);
        let (rv, rn) = self.emit(right)?;
        let r_decisive = self.b.ins().icmp_imm_s(IntCC::Equal, rv, decisive);
        let r_decided = self.true_and_valid(r_decisive, rn);
        let any_null = self.or_null(ln, rn).unwrap_or_else(|| self.b.ins().iconst(types::I8, 0));
        let not_decided = self.b.ins().bxor_imm_u(r_decided, 1);
        let null = self.b.ins().band(not_decided, any_null);
        // Not decided by either side and not NULL: the other truth value.
        let other = self.b.ins().iconst(types::I8, 1 - decisive);
        let value = self.b.ins().select(r_decided, dv, other);
        self.b.ins().jump(merge, &[BlockArg::Value(value), BlockArg::Value(null)]);
        self.b.switch_to_block(merge);
        Ok((mv, Some(mn)))
    }

    /// Both sides in one register type; decimals rescaled to the larger scale.
    pub(super) fn operands(&mut self, left: &Expr, right: &Expr) -> Result<(Value, Value, Option<Value>, DataType), String> {
        let lt = left.data_type().map_err(|e| e.to_string())?;
        let rt = right.data_type().map_err(|e| e.to_string())?;
        let (lv, ln) = self.emit(left)?;
        let (rv, rn) = self.emit(right)?;
        let null = self.or_null(ln, rn);
        if let (DataType::Decimal128(p1, s1), DataType::Decimal128(p2, s2)) = (&lt, &rt) {
            let s = (*s1).max(*s2);
            let (k1, k2) = ((s - s1) as u32, (s - s2) as u32);
            // Same scale and both within 18 digits: compare the i64s as they are.
            if k1 == 0 && k2 == 0 && *p1 <= 18 && *p2 <= 18 {
                return Ok((lv, rv, null, DataType::Decimal128(18, s)));
            }
            if *p1 as u32 + k1 > 38 || *p2 as u32 + k2 > 38 {
                return Err("decimal rescale beyond 38 digits".into());
            }
            let l = self.resize(lv, types::I128);
            let r = self.resize(rv, types::I128);
            let l = self.scale_up(l, k1)?;
            let r = self.scale_up(r, k2)?;
            return Ok((l, r, null, DataType::Decimal128(38, s)));
        }
        if lt != rt {
            return Err(format!("operands of types {lt} and {rt}"));
        }
        Ok((lv, rv, null, lt))
    }

    /// Spark's double equality (NaN equals NaN), with whether each side is NaN.
    pub(super) fn float_eq(&mut self, l: Value, r: Value) -> (Value, Value, Value) {
        let ln = self.b.ins().fcmp(FloatCC::Unordered, l, l);
        let rn = self.b.ins().fcmp(FloatCC::Unordered, r, r);
        let both = self.b.ins().band(ln, rn);
        let feq = self.b.ins().fcmp(FloatCC::Equal, l, r);
        (self.b.ins().bor(feq, both), ln, rn)
    }

    pub(super) fn compare(&mut self, op: BinaryOp, left: &Expr, right: &Expr) -> Result<Emitted, String> {
        let (l, r, null, t) = self.operands(left, right)?;
        let t = super::spec::widened_on_load(&t).unwrap_or(t);
        let v = match &t {
            DataType::Float64 => {
                // Spark orders NaN above every number and equal to itself.
                let (eq, ln, rn) = self.float_eq(l, r);
                let flt = self.b.ins().fcmp(FloatCC::LessThan, l, r);
                let not_ln = self.b.ins().bxor_imm_u(ln, 1);
                let nan_gt = self.b.ins().band(not_ln, rn);
                let lt = self.b.ins().bor(flt, nan_gt);
                match op {
                    BinaryOp::Eq | BinaryOp::EqNullSafe => eq,
                    BinaryOp::NotEq => self.b.ins().bxor_imm_u(eq, 1),
                    BinaryOp::Lt => lt,
                    BinaryOp::LtEq => self.b.ins().bor(lt, eq),
                    BinaryOp::Gt => {
                        let le = self.b.ins().bor(lt, eq);
                        self.b.ins().bxor_imm_u(le, 1)
                    }
                    BinaryOp::GtEq => self.b.ins().bxor_imm_u(lt, 1),
                    _ => return Err(format!("comparison {}", op.symbol())),
                }
            }
            _ => {
                let cc = int_cc(op, t != DataType::Boolean).ok_or_else(|| format!("comparison {}", op.symbol()))?;
                self.b.ins().icmp(cc, l, r)
            }
        };
        if op != BinaryOp::EqNullSafe {
            return Ok((v, null));
        }
        // <=>: never NULL; two NULLs are equal, one NULL is not.
        let (ln, rn) = match (left.nullable(), right.nullable(), null) {
            (false, false, _) | (_, _, None) => return Ok((v, None)),
            _ => {
                let (_, ln) = self.emit(left)?;
                let (_, rn) = self.emit(right)?;
                let z = self.b.ins().iconst(types::I8, 0);
                (ln.unwrap_or(z), rn.unwrap_or(z))
            }
        };
        let both = self.b.ins().band(ln, rn);
        let either = self.b.ins().bor(ln, rn);
        let none = self.b.ins().bxor_imm_u(either, 1);
        let valid_eq = self.b.ins().band(none, v);
        Ok((self.b.ins().bor(both, valid_eq), None))
    }

    pub(super) fn arithmetic(&mut self, op: BinaryOp, left: &Expr, right: &Expr, e: &Expr) -> Result<Emitted, String> {
        let t = e.data_type().map_err(|e| e.to_string())?;
        let lt = left.data_type().map_err(|e| e.to_string())?;
        let rt = right.data_type().map_err(|e| e.to_string())?;
        match (&lt, &t) {
            (DataType::Float64, _) => {
                let (l, ln) = self.emit(left)?;
                let (r, rn) = self.emit(right)?;
                let null = self.or_null(ln, rn);
                let v = match op {
                    BinaryOp::Plus => self.b.ins().fadd(l, r),
                    BinaryOp::Minus => self.b.ins().fsub(l, r),
                    BinaryOp::Multiply => self.b.ins().fmul(l, r),
                    BinaryOp::Divide => {
                        // ANSI: a zero divisor is an error even for doubles.
                        let z = self.b.ins().f64const(0.0);
                        let is_zero = self.b.ins().fcmp(FloatCC::Equal, r, z);
                        self.fail_if(is_zero, null);
                        self.b.ins().fdiv(l, r)
                    }
                    _ => return Err(format!("double operator {}", op.symbol())),
                };
                Ok((v, null))
            }
            (DataType::Int32 | DataType::Int64, _) => {
                let (l, ln) = self.emit(left)?;
                let (r, rn) = self.emit(right)?;
                let null = self.or_null(ln, rn);
                let (v, of) = match op {
                    BinaryOp::Plus => self.b.ins().sadd_overflow(l, r),
                    BinaryOp::Minus => self.b.ins().ssub_overflow(l, r),
                    BinaryOp::Multiply => self.b.ins().smul_overflow(l, r),
                    _ => return Err(format!("integer operator {}", op.symbol())),
                };
                self.fail_if(of, null);
                Ok((v, null))
            }
            (DataType::Decimal128(p1, s1), DataType::Decimal128(p, s)) => {
                let (p2, s2) = match rt {
                    DataType::Decimal128(p2, s2) => (p2, s2),
                    _ => return Err("decimal with a non-decimal operand".into()),
                };
                let out = repr(&t);
                match op {
                    BinaryOp::Plus | BinaryOp::Minus => {
                        if *s != (*s1).max(s2) {
                            return Err("a decimal sum that rounds".into());
                        }
                        let (l, ln) = self.emit(left)?;
                        let (r, rn) = self.emit(right)?;
                        let null = self.or_null(ln, rn);
                        // Each operand, rescaled, has fewer than p digits: no wrap in `out`.
                        let work = if out == types::I128 || *p1 > 18 || p2 > 18 { types::I128 } else { types::I64 };
                        let l = self.resize(l, work);
                        let r = self.resize(r, work);
                        let l = self.scale_up(l, (*s - s1) as u32)?;
                        let r = self.scale_up(r, (*s - s2) as u32)?;
                        let v = if op == BinaryOp::Plus { self.b.ins().iadd(l, r) } else { self.b.ins().isub(l, r) };
                        // Spark's result type has one digit more than either operand, so only a
                        // precision capped at 38 can be exceeded.
                        if *p as i32 != decimal_sum_precision(*p1, *s1, p2, s2) {
                            self.check_precision(v, *p, null)?;
                        }
                        Ok((self.resize(v, out), null))
                    }
                    BinaryOp::Multiply => {
                        if *s != s1 + s2 {
                            return Err("a decimal product that rounds".into());
                        }
                        let (l, ln) = self.emit(left)?;
                        let (r, rn) = self.emit(right)?;
                        let null = self.or_null(ln, rn);
                        // An uncapped result type holds the exact product (p1 + p2 + 1 digits).
                        let exact = *p as i32 == *p1 as i32 + p2 as i32 + 1;
                        let v = if out == types::I64 {
                            // p <= 18: the exact product has at most 18 digits.
                            let l = self.resize(l, types::I64);
                            let r = self.resize(r, types::I64);
                            self.b.ins().imul(l, r)
                        } else {
                            // The fast path multiplies two 64-bit values into 128 bits, which
                            // cannot wrap and stays below 2^126 < 10^38; wider operands go to
                            // the interpreter.
                            let l64 = self.fits_i64(l, null)?;
                            let r64 = self.fits_i64(r, null)?;
                            let l = self.b.ins().sextend(types::I128, l64);
                            let r = self.b.ins().sextend(types::I128, r64);
                            self.b.ins().imul(l, r)
                        };
                        if !exact && *p < 38 {
                            self.check_precision(v, *p, null)?;
                        }
                        Ok((v, null))
                    }
                    _ => Err(format!("decimal operator {}", op.symbol())),
                }
            }
            (l, _) => Err(format!("arithmetic on {l}")),
        }
    }

    /// `v` as i64, failing (to the interpreter) when an i128 does not fit.
    pub(super) fn fits_i64(&mut self, v: Value, null: Option<Value>) -> Result<Value, String> {
        let ty = self.b.func.dfg.value_type(v);
        if ty == types::I64 {
            return Ok(v);
        }
        let narrow = self.b.ins().ireduce(types::I64, v);
        let back = self.b.ins().sextend(types::I128, narrow);
        let differs = self.b.ins().icmp(IntCC::NotEqual, back, v);
        self.fail_if(differs, null);
        Ok(narrow)
    }

    pub(super) fn in_list(&mut self, child: &Expr, list: &[Expr], negated: bool) -> Result<Emitted, String> {
        let (v, n) = self.emit(child)?;
        let t = child.data_type().map_err(|e| e.to_string())?;
        let mut any = self.b.ins().iconst(types::I8, 0);
        let mut has_null = false;
        for item in list {
            let Expr::Literal(lit) = item else { return Err("IN with non-literal values".into()) };
            if lit.is_null() {
                has_null = true;
                continue;
            }
            let (c, _) = self.literal(lit)?;
            let eq = if t == DataType::Float64 { self.float_eq(v, c).0 } else { self.b.ins().icmp(IntCC::Equal, v, c) };
            any = self.b.ins().bor(any, eq);
        }
        // No match and a NULL in the list: NULL.
        let null = if has_null {
            let no_match = self.b.ins().bxor_imm_u(any, 1);
            self.or_null(n, Some(no_match))
        } else {
            n
        };
        let v = if negated { self.b.ins().bxor_imm_u(any, 1) } else { any };
        Ok((v, null))
    }

    pub(super) fn case_when(&mut self, e: &Expr, branches: &[(Expr, Expr)], else_expr: Option<&Expr>) -> Result<Emitted, String> {
        let t = e.data_type().map_err(|e| e.to_string())?;
        let ty = repr(&t);
        let merge = self.b.create_block();
        let mv = self.b.append_block_param(merge, ty);
        let mn = self.b.append_block_param(merge, types::I8);
        for (cond, value) in branches {
            let (cv, cn) = self.emit(cond)?;
            let take = self.true_and_valid(cv, cn);
            let then = self.b.create_block();
            let next = self.b.create_block();
            self.b.ins().brif(take, then, &[], next, &[]);
            self.b.switch_to_block(then);
            let (v, n) = self.emit(value)?;
            let n = n.unwrap_or_else(|| self.b.ins().iconst(types::I8, 0));
            self.b.ins().jump(merge, &[BlockArg::Value(v), BlockArg::Value(n)]);
            self.b.switch_to_block(next);
        }
        let (v, n) = match else_expr {
            Some(x) => {
                let (v, n) = self.emit(x)?;
                (v, n.unwrap_or_else(|| self.b.ins().iconst(types::I8, 0)))
            }
            None => (zero(self.b, ty), self.b.ins().iconst(types::I8, 1)),
        };
        self.b.ins().jump(merge, &[BlockArg::Value(v), BlockArg::Value(n)]);
        self.b.switch_to_block(merge);
        Ok((mv, Some(mn)))
    }
}

/// True when evaluating `e` may fail (a division, an overflow check, a decimal bound): such a
/// conjunct must not run on rows an earlier conjunct rejected.
pub(super) fn can_fail(e: &Expr) -> bool {
    e.exists(&|x| match x {
        Expr::Binary { op, .. } => op.is_arithmetic(),
        Expr::Negative(_) | Expr::Cast { .. } | Expr::Function { func: ScalarFunc::Abs, .. } => true,
        _ => false,
    })
}

/// The integer condition code of comparison `op` (`<=>` compares as `=`), None for other
/// operators.
pub(super) fn int_cc(op: BinaryOp, signed: bool) -> Option<IntCC> {
    Some(match (op, signed) {
        (BinaryOp::Eq | BinaryOp::EqNullSafe, _) => IntCC::Equal,
        (BinaryOp::NotEq, _) => IntCC::NotEqual,
        (BinaryOp::Lt, true) => IntCC::SignedLessThan,
        (BinaryOp::LtEq, true) => IntCC::SignedLessThanOrEqual,
        (BinaryOp::Gt, true) => IntCC::SignedGreaterThan,
        (BinaryOp::GtEq, true) => IntCC::SignedGreaterThanOrEqual,
        (BinaryOp::Lt, false) => IntCC::UnsignedLessThan,
        (BinaryOp::LtEq, false) => IntCC::UnsignedLessThanOrEqual,
        (BinaryOp::Gt, false) => IntCC::UnsignedGreaterThan,
        (BinaryOp::GtEq, false) => IntCC::UnsignedGreaterThanOrEqual,
        _ => return None,
    })
}

/// `(e)` unless the expression prints its own parentheses.
pub(super) fn parenthesized(e: &Expr) -> String {
    let s = e.to_string();
    if s.starts_with('(') { s } else { format!("({s})") }
}

pub(super) fn list(exprs: &[Expr]) -> String {
    exprs.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", ")
}

/// Runs `f` only for rows where `null` is not set.
pub(super) fn when_valid(tx: &mut Tx, null: Option<Value>, f: &mut dyn FnMut(&mut Tx) -> Result<(), String>) -> Result<(), String> {
    let Some(n) = null else { return f(tx) };
    let body = tx.b.create_block();
    let done = tx.b.create_block();
    tx.b.ins().brif(n, done, &[], body, &[]);
    tx.b.switch_to_block(body);
    f(tx)?;
    tx.b.ins().jump(done, &[]);
    tx.b.switch_to_block(done);
    Ok(())
}

/// Spark's precision of `decimal(p1,s1) +/- decimal(p2,s2)` before capping at 38.
pub(super) fn decimal_sum_precision(p1: u8, s1: i8, p2: u8, s2: i8) -> i32 {
    let scale = s1.max(s2) as i32;
    (p1 as i32 - s1 as i32).max(p2 as i32 - s2 as i32) + scale + 1
}
