//! The JIT: compiles a stage's two functions into one Cranelift module, and caches compiled
//! stages by plan shape so a repeated query compiles once. A module's code is freed when the
//! last reference to its stage goes away.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cranelift_codegen::ir::{types, AbiParam, Signature, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, DataDescription, DataId, FuncId, Linkage, Module};

use super::emit::{build_filter, build_sink, kiln_find, layout, like_needles, Helpers, SlotLayout};
use super::spec::StageSpec;
use crate::exec::interpreted::group_table;

/// `fn(slots, n, sel_out) -> selected count or -1`.
pub type FilterFn = unsafe extern "C" fn(*const u64, i64, *mut u32) -> i64;
/// `fn(slots, sel, count) -> 0 or -1`.
pub type SinkFn = unsafe extern "C" fn(*const u64, *const u32, i64) -> i64;

/// A compiled stage: native functions, their IR, size and compile time.
pub struct CompiledStage {
    module: Option<JITModule>,
    /// The compiled filter, which writes the indices of passing rows; `None` when the stage
    /// has no conditions.
    pub filter: Option<FilterFn>,
    /// The compiled sink: computes output columns or updates accumulators for selected rows.
    pub sink: SinkFn,
    /// The filter for batches without NULLs in the columns it reads (no validity reads).
    pub filter_no_nulls: Option<FilterFn>,
    /// The sink for batches without NULLs in the columns it reads.
    pub sink_no_nulls: SinkFn,
    /// Which slot holds which pointer for both functions.
    pub layout: SlotLayout,
    /// The Cranelift IR of each function, as `EXPLAIN CODEGEN` prints it.
    pub clif: String,
    /// The machine code of each function as Cranelift's backend prints it (VCode, after
    /// register allocation), for `EXPLAIN CODEGEN` with `kiln.codegen.disassembly=true`.
    pub disassembly: String,
    /// Bytes of machine code.
    pub code_size: usize,
    /// How long compiling the stage took.
    pub compile_time: Duration,
}

// The functions only read the slots they are given; the module is immutable once finalized.
unsafe impl Send for CompiledStage {}
unsafe impl Sync for CompiledStage {}

impl Drop for CompiledStage {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: the stage owns the only function pointers into the module, and they die with it.
            unsafe { module.free_memory() };
        }
    }
}

fn new_module() -> Result<JITModule, String> {
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").map_err(|e| e.to_string())?;
    flags.set("is_pic", "false").map_err(|e| e.to_string())?;
    let isa = cranelift_native::builder()
        .map_err(|e| e.to_string())?
        .finish(settings::Flags::new(flags))
        .map_err(|e| e.to_string())?;
    let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
    builder.symbol("kiln_find", kiln_find as *const u8);
    builder.symbol("kiln_group_grow", group_table::kiln_group_grow as *const u8);
    builder.symbol("kiln_group_insert", group_table::kiln_group_insert as *const u8);
    builder.symbol("kiln_bytes_equal", group_table::kiln_bytes_equal as *const u8);
    Ok(JITModule::new(builder))
}

/// The search helper and the needles' data object, declared in the module when the stage has
/// LIKE patterns with middle pieces.
struct ModuleHelpers {
    find: FuncId,
    needles: DataId,
    offsets: Vec<(Vec<u8>, usize)>,
}

/// An imported helper taking `params` i64s and returning one.
fn import(module: &mut JITModule, name: &str, params: usize) -> Result<FuncId, String> {
    let mut sig = module.make_signature();
    for _ in 0..params {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig.returns.push(AbiParam::new(types::I64));
    module.declare_function(name, Linkage::Import, &sig).map_err(|e| e.to_string())
}

/// The group table's helpers, declared when generated code groups rows.
fn declare_group_helpers(module: &mut JITModule, spec: &StageSpec) -> Result<Option<[FuncId; 3]>, String> {
    if !spec.groups_in_code() {
        return Ok(None);
    }
    Ok(Some([import(module, "kiln_group_grow", 1)?, import(module, "kiln_group_insert", 3)?, import(module, "kiln_bytes_equal", 3)?]))
}

fn declare_helpers(module: &mut JITModule, spec: &StageSpec) -> Result<Option<ModuleHelpers>, String> {
    let needles = like_needles(spec);
    if needles.is_empty() {
        return Ok(None);
    }
    let mut sig = module.make_signature();
    for _ in 0..4 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig.returns.push(AbiParam::new(types::I64));
    let find = module.declare_function("kiln_find", Linkage::Import, &sig).map_err(|e| e.to_string())?;
    let (mut bytes, mut offsets) = (vec![], vec![]);
    for n in needles {
        offsets.push((n.clone(), bytes.len()));
        bytes.extend(n);
    }
    let data = module.declare_data("like_needles", Linkage::Local, false, false).map_err(|e| e.to_string())?;
    let mut description = DataDescription::new();
    description.define(bytes.into_boxed_slice());
    module.define_data(data, &description).map_err(|e| e.to_string())?;
    Ok(Some(ModuleHelpers { find, needles: data, offsets }))
}

fn signature(module: &JITModule) -> Signature {
    let mut sig = module.make_signature();
    for _ in 0..3 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig.returns.push(AbiParam::new(types::I64));
    sig
}

type Build = fn(&mut FunctionBuilder, &StageSpec, &SlotLayout, bool, &Helpers) -> Result<(), String>;

/// Defines one function; returns its id, CLIF text and code size.
fn define(
    module: &mut JITModule,
    name: &str,
    index: u32,
    spec: &StageSpec,
    layout: &SlotLayout,
    build: Build,
    no_nulls: bool,
    module_helpers: Option<&ModuleHelpers>,
    group_helpers: Option<[FuncId; 3]>,
) -> Result<(cranelift_module::FuncId, String, usize, String), String> {
    let sig = signature(module);
    let id = module.declare_function(name, Linkage::Local, &sig).map_err(|e| e.to_string())?;
    let mut ctx = Context::new();
    ctx.func.signature = sig;
    ctx.func.name = UserFuncName::user(0, index);
    let mut helpers = match module_helpers {
        Some(h) => Helpers {
            find: Some(module.declare_func_in_func(h.find, &mut ctx.func)),
            needles: Some((module.declare_data_in_func(h.needles, &mut ctx.func), h.offsets.clone())),
            group: None,
        },
        None => Helpers::default(),
    };
    if let Some(ids) = group_helpers {
        helpers.group = Some(ids.map(|id| module.declare_func_in_func(id, &mut ctx.func)));
    }
    let mut fctx = FunctionBuilderContext::new();
    let frontend = module.isa().frontend_config();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        build(&mut b, spec, layout, no_nulls, &helpers)?;
        b.finalize(frontend);
    }
    let clif = format!("; {name}\n{}", ctx.func.display());
    ctx.set_disasm(true);
    module.define_function(id, &mut ctx).map_err(|e| format!("{e:?}"))?;
    let size = ctx.compiled_code().map_or(0, |c| c.code_buffer().len());
    let disassembly = format!("; {name}\n{}", ctx.compiled_code().and_then(|c| c.vcode.clone()).unwrap_or_default());
    Ok((id, clif, size, disassembly))
}

fn compile(spec: &StageSpec) -> Result<CompiledStage, String> {
    let start = Instant::now();
    let layout = layout(spec);
    let mut module = new_module()?;
    let h = declare_helpers(&mut module, spec)?;
    let h = h.as_ref();
    let g = declare_group_helpers(&mut module, spec)?;
    let filter = if spec.conditions.is_empty() { None } else { Some(define(&mut module, "filter", 0, spec, &layout, build_filter, false, h, g)?) };
    let sink = define(&mut module, "sink", 1, spec, &layout, build_sink, false, h, g)?;
    let filter_nn = if spec.conditions.is_empty() {
        None
    } else {
        Some(define(&mut module, "filter (no NULLs)", 2, spec, &layout, build_filter, true, h, g)?)
    };
    let sink_nn = define(&mut module, "sink (no NULLs)", 3, spec, &layout, build_sink, true, h, g)?;
    module.finalize_definitions().map_err(|e| e.to_string())?;
    let mut clif = String::new();
    let mut disassembly = String::new();
    let mut code_size = 0;
    // SAFETY (both): defined above with the signature FilterFn / SinkFn describes.
    let as_filter = |module: &JITModule, id| unsafe { std::mem::transmute::<*const u8, FilterFn>(module.get_finalized_function(id)) };
    let as_sink = |module: &JITModule, id| unsafe { std::mem::transmute::<*const u8, SinkFn>(module.get_finalized_function(id)) };
    for (_, text, size, asm) in filter.iter().chain([&sink]).chain(filter_nn.iter()).chain([&sink_nn]) {
        clif.push_str(text);
        disassembly.push_str(asm);
        code_size += size;
    }
    let filter_fn = filter.as_ref().map(|(id, ..)| as_filter(&module, *id));
    let filter_no_nulls = filter_nn.as_ref().map(|(id, ..)| as_filter(&module, *id));
    let sink_fn = as_sink(&module, sink.0);
    let sink_no_nulls = as_sink(&module, sink_nn.0);
    Ok(CompiledStage {
        module: Some(module),
        filter: filter_fn,
        sink: sink_fn,
        filter_no_nulls,
        sink_no_nulls,
        layout,
        clif,
        disassembly,
        code_size,
        compile_time: start.elapsed(),
    })
}

type Cache = Mutex<HashMap<String, Result<Arc<CompiledStage>, String>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The compiled stage for `spec`, from the cache or compiled now; the error is the reason the
/// stage runs interpreted.
pub fn compile_stage(spec: &StageSpec) -> Result<Arc<CompiledStage>, String> {
    let key = spec.cache_key();
    if let Ok(c) = cache().lock() {
        if let Some(hit) = c.get(&key) {
            return hit.clone();
        }
    }
    let compiled = compile(spec).map(Arc::new);
    if let Ok(mut c) = cache().lock() {
        // Bounded: old stages are dropped (and their code freed) once no query holds them.
        if c.len() >= 256 {
            c.clear();
        }
        c.insert(key, compiled.clone());
    }
    compiled
}
