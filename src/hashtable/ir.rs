//! The tables' hashes in Cranelift IR: what generated code emits to hash a key, instruction
//! for instruction the Rust of `common::hash::{mix, finish}` and `group_table::hash_int`, so a
//! row hashed in generated code lands in the slot the interpreter finds it in (the test below
//! compiles these and compares).

use cranelift_codegen::ir::{InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

use super::group_table::INT_K1;
use crate::common::hash::HASH_K;

/// `common::hash::mix(h, w)`.
pub fn mix(b: &mut FunctionBuilder, h: Value, w: Value) -> Value {
    let r = b.ins().rotl_imm_u(h, 5);
    let x = b.ins().bxor(r, w);
    b.ins().imul_imm_s(x, HASH_K as i64)
}

/// `common::hash::finish(z)`.
pub fn finish(b: &mut FunctionBuilder, z: Value) -> Value {
    let mut z = z;
    for (shift, k) in [(30, 0xbf58_476d_1ce4_e5b9u64), (27, 0x94d0_49bb_1331_11eb)] {
        let s = b.ins().ushr_imm_u(z, shift);
        let x = b.ins().bxor(z, s);
        z = b.ins().imul_imm_s(x, k as i64);
    }
    let s = b.ins().ushr_imm_u(z, 31);
    b.ins().bxor(z, s)
}

/// `group_table::hash_int(k)`, the int layout's hash.
pub fn hash_int(b: &mut FunctionBuilder, k: Value) -> Value {
    let s = b.ins().ushr_imm_u(k, 33);
    let x = b.ins().bxor(k, s);
    let x = b.ins().imul_imm_s(x, INT_K1 as i64);
    let s = b.ins().ushr_imm_u(x, 29);
    b.ins().bxor(x, s)
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::{types, AbiParam, UserFuncName};
    use cranelift_codegen::settings::{self, Configurable};
    use cranelift_frontend::FunctionBuilderContext;
    use cranelift_jit::{JITBuilder, JITModule};
    use cranelift_module::{default_libcall_names, Linkage, Module};

    use super::*;
    use crate::common::hash;
    use crate::hashtable::group_table;

    /// Compiles `fn(a: i64, b: i64) -> i64` with the body `emit` writes.
    fn compile(emit: impl Fn(&mut FunctionBuilder, Value, Value) -> Value) -> (JITModule, extern "C" fn(u64, u64) -> u64) {
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").expect("a cranelift flag");
        let isa = cranelift_native::builder().expect("a host ISA").finish(settings::Flags::new(flags)).expect("an ISA");
        let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
        let frontend = module.isa().frontend_config();
        let mut ctx = module.make_context();
        for _ in 0..2 {
            ctx.func.signature.params.push(AbiParam::new(types::I64));
        }
        ctx.func.signature.returns.push(AbiParam::new(types::I64));
        ctx.func.name = UserFuncName::user(0, 0);
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let (x, y) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        let r = emit(&mut b, x, y);
        b.ins().return_(&[r]);
        b.finalize(frontend);
        let id = module.declare_function("f", Linkage::Local, &ctx.func.signature).expect("declared");
        module.define_function(id, &mut ctx).expect("compiled");
        module.finalize_definitions().expect("finalized");
        let code = module.get_finalized_function(id);
        // SAFETY: the function was built with this signature (two i64 in, one out).
        (module, unsafe { std::mem::transmute::<*const u8, extern "C" fn(u64, u64) -> u64>(code) })
    }

    #[test]
    fn generated_code_hashes_as_the_tables_do() {
        let values: Vec<u64> = (0..2000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 17)).chain([0, 1, u64::MAX, 1 << 63]).collect();
        let (_m1, row) = compile(|b, h, w| {
            let m = mix(b, h, w);
            finish(b, m)
        });
        let (_m2, int) = compile(|b, k, _| hash_int(b, k));
        for pair in values.windows(2) {
            let (h, w) = (pair[0], pair[1]);
            assert_eq!(row(h, w), hash::finish(hash::mix(h, w)), "mix and finish of {h:#x}, {w:#x}");
            assert_eq!(int(h, 0), group_table::hash_int(h), "hash_int of {h:#x}");
        }
    }
}
