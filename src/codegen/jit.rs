//! The JIT: compiles a stage's two functions into one Cranelift module, and caches compiled
//! stages by plan shape so a repeated query compiles once. A module's code is freed when the
//! last reference to its stage goes away.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cranelift_codegen::ir::{types, AbiParam, Signature, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, DataDescription, DataId, FuncId, Linkage, Module};

use super::helpers::{kiln_bytes_eq, kiln_find, kiln_hash_bytes, like_needles, Helpers};
use super::layout::{indexed_sink, layout, SlotLayout};
use super::operators::filter::build_filter;
use super::pipeline::{build_probe, build_sink};
use super::spec::StageSpec;
use crate::hashtable::group_table;

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
    /// An aggregate over joins: the probe that materializes the joined rows' indices
    /// (same signature as a sink), and its variant without NULLs.
    pub probe: Option<(SinkFn, SinkFn)>,
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
    /// The LIKE searchers the code's needle table points at: built once, not per row.
    _finders: Vec<Box<memchr::memmem::Finder<'static>>>,
    /// The Bloom filters the code reads in place (by address), kept alive while it runs.
    filters: Vec<arrow::array::ArrayRef>,
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
    builder.symbol("kiln_hash_bytes", kiln_hash_bytes as *const u8);
    builder.symbol("kiln_bytes_eq", kiln_bytes_eq as *const u8);
    builder.symbol("kiln_group_grow", group_table::kiln_group_grow as *const u8);
    builder.symbol("kiln_group_insert", group_table::kiln_group_insert as *const u8);
    builder.symbol("kiln_bytes_equal", group_table::kiln_bytes_equal as *const u8);
    Ok(JITModule::new(builder))
}

/// The helpers declared in the module: the search helper and the needles' data object when
/// the stage has LIKE patterns with middle pieces, the string hash and compare helpers when a
/// join has a string key.
#[derive(Default)]
struct ModuleHelpers {
    find: Option<(FuncId, DataId, Vec<(Vec<u8>, usize)>)>,
    /// The searchers the needle table's words point at (each boxed: its address is fixed).
    finders: Vec<Box<memchr::memmem::Finder<'static>>>,
    strings: Option<(FuncId, FuncId)>,
    /// The group table's helpers, when generated code groups rows.
    group: Option<[FuncId; 3]>,
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

fn declare_helpers(module: &mut JITModule, spec: &StageSpec) -> Result<ModuleHelpers, String> {
    let mut h = ModuleHelpers::default();
    let string_keys = spec.joins.iter().flat_map(|j| &j.stream_keys).any(|k| k.data_type().ok() == Some(arrow::datatypes::DataType::Utf8));
    if string_keys {
        h.strings = Some((import(module, "kiln_hash_bytes", 2)?, import(module, "kiln_bytes_eq", 3)?));
    }
    if spec.groups_in_code() {
        h.group = Some([import(module, "kiln_group_grow", 1)?, import(module, "kiln_group_insert", 3)?, import(module, "kiln_bytes_equal", 3)?]);
    }
    let needles = like_needles(spec);
    if needles.is_empty() {
        return Ok(h);
    }
    let find = import(module, "kiln_find", 3)?;
    // The table holds a pointer to each needle's searcher: building memmem's searcher per
    // value would cost more than the search of a short string.
    let (mut bytes, mut offsets) = (vec![], vec![]);
    for n in needles {
        let finder = Box::new(memchr::memmem::Finder::new(&n).into_owned());
        offsets.push((n, bytes.len()));
        bytes.extend((std::ptr::from_ref::<memchr::memmem::Finder<'static>>(&finder) as u64).to_le_bytes());
        h.finders.push(finder);
    }
    let data = module.declare_data("like_needles", Linkage::Local, false, false).map_err(|e| e.to_string())?;
    let mut description = DataDescription::new();
    description.define(bytes.into_boxed_slice());
    module.define_data(data, &description).map_err(|e| e.to_string())?;
    h.find = Some((find, data, offsets));
    Ok(h)
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
    module_helpers: &ModuleHelpers,
    text: bool,
) -> Result<(cranelift_module::FuncId, String, usize, String), String> {
    let sig = signature(module);
    let id = module.declare_function(name, Linkage::Local, &sig).map_err(|e| e.to_string())?;
    let mut ctx = Context::new();
    ctx.func.signature = sig;
    ctx.func.name = UserFuncName::user(0, index);
    let mut helpers = Helpers { notes: text.then(Default::default), ..Default::default() };
    if let Some((find, needles, offsets)) = &module_helpers.find {
        helpers.find = Some(module.declare_func_in_func(*find, &mut ctx.func));
        helpers.needles = Some((module.declare_data_in_func(*needles, &mut ctx.func), offsets.clone()));
    }
    if let Some((hash, eq)) = module_helpers.strings {
        helpers.hash_bytes = Some(module.declare_func_in_func(hash, &mut ctx.func));
        helpers.bytes_eq = Some(module.declare_func_in_func(eq, &mut ctx.func));
    }
    if let Some(ids) = module_helpers.group {
        helpers.group = Some(ids.map(|id| module.declare_func_in_func(id, &mut ctx.func)));
    }
    let mut fctx = FunctionBuilderContext::new();
    let frontend = module.isa().frontend_config();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        build(&mut b, spec, layout, no_nulls, &helpers)?;
        b.finalize(frontend);
    }
    // The IR and machine code as text only for EXPLAIN CODEGEN: rendering them costs more than
    // compiling a small stage.
    let clif = match &helpers.notes {
        Some(notes) if text => format!("; {name}\n{}", annotate(&ctx.func.display().to_string(), &notes.borrow())),
        _ => String::new(),
    };
    ctx.set_disasm(text);
    module.define_function(id, &mut ctx).map_err(|e| format!("{e:?}"))?;
    let size = ctx.compiled_code().map_or(0, |c| c.code_buffer().len());
    let disassembly =
        if text { format!("; {name}\n{}", ctx.compiled_code().and_then(|c| c.vcode.clone()).unwrap_or_default()) } else { String::new() };
    Ok((id, clif, size, disassembly))
}

/// Cranelift's IR text with each instruction's source location (`@0003`, the index of a note
/// plus one) turned into a comment line where the note changes, and after each block header:
/// every block names the operator and expression its code implements.
fn annotate(ir: &str, notes: &[String]) -> String {
    // Cranelift pads every instruction to this column once a function has source locations.
    const PAD: usize = 36;
    let mut out = String::with_capacity(ir.len() * 2);
    let mut last: Option<usize> = None;
    for line in ir.lines() {
        let (loc, body) = match line.as_bytes().first() {
            Some(b'@') if line.len() > PAD => (usize::from_str_radix(&line[1..5], 16).ok(), &line[PAD..]),
            Some(b' ') if line.len() > PAD && line[..PAD].trim().is_empty() => (None, &line[PAD..]),
            _ => {
                let t = line.trim_start();
                if t.starts_with("block") {
                    last = None;
                    out.push_str(t);
                } else {
                    out.push_str(line);
                }
                out.push('\n');
                continue;
            }
        };
        if let Some(n) = loc.filter(|n| Some(*n) != last) {
            if let Some(text) = n.checked_sub(1).and_then(|i| notes.get(i)) {
                out.push_str(&format!("    ; {text}\n"));
            }
            last = Some(n);
        }
        out.push_str("    ");
        out.push_str(body);
        out.push('\n');
    }
    out
}

fn compile(spec: &StageSpec, text: bool) -> Result<CompiledStage, String> {
    let start = Instant::now();
    let layout = layout(spec);
    let mut module = new_module()?;
    let mut h = declare_helpers(&mut module, spec)?;
    let finders = std::mem::take(&mut h.finders);
    let h = &h;
    let filter = if !spec.has_filter() { None } else { Some(define(&mut module, "filter", 0, spec, &layout, build_filter, false, h, text)?) };
    let sink = define(&mut module, "sink", 1, spec, &layout, build_sink, false, h, text)?;
    let filter_nn = if !spec.has_filter_without_nulls() {
        None
    } else {
        Some(define(&mut module, "filter (no NULLs)", 2, spec, &layout, build_filter, true, h, text)?)
    };
    let sink_nn = define(&mut module, "sink (no NULLs)", 3, spec, &layout, build_sink, true, h, text)?;
    let probe = if indexed_sink(spec) {
        Some((
            define(&mut module, "probe", 4, spec, &layout, build_probe, false, h, text)?,
            define(&mut module, "probe (no NULLs)", 5, spec, &layout, build_probe, true, h, text)?,
        ))
    } else {
        None
    };
    module.finalize_definitions().map_err(|e| e.to_string())?;
    let mut clif = String::new();
    let mut disassembly = String::new();
    let mut code_size = 0;
    // SAFETY (both): defined above with the signature FilterFn / SinkFn describes.
    let as_filter = |module: &JITModule, id| unsafe { std::mem::transmute::<*const u8, FilterFn>(module.get_finalized_function(id)) };
    let as_sink = |module: &JITModule, id| unsafe { std::mem::transmute::<*const u8, SinkFn>(module.get_finalized_function(id)) };
    let probes: Vec<_> = probe.iter().flat_map(|(a, b)| [a, b]).collect();
    for (_, text, size, asm) in filter.iter().chain([&sink]).chain(filter_nn.iter()).chain([&sink_nn]).chain(probes) {
        clif.push_str(text);
        disassembly.push_str(asm);
        code_size += size;
    }
    let filter_fn = filter.as_ref().map(|(id, ..)| as_filter(&module, *id));
    let filter_no_nulls = filter_nn.as_ref().map(|(id, ..)| as_filter(&module, *id));
    let sink_fn = as_sink(&module, sink.0);
    let sink_no_nulls = as_sink(&module, sink_nn.0);
    let probe = probe.as_ref().map(|(a, b)| (as_sink(&module, a.0), as_sink(&module, b.0)));
    Ok(CompiledStage {
        module: Some(module),
        filter: filter_fn,
        sink: sink_fn,
        filter_no_nulls,
        sink_no_nulls,
        probe,
        layout,
        clif,
        disassembly,
        code_size,
        compile_time: start.elapsed(),
        _finders: finders,
        filters: vec![],
    })
}

/// Compiled stages of one session, keyed by the stage's shape (`StageSpec::cache_key`), so the
/// same query planned again does not compile again. Bounded: the least recently used stage goes
/// first (its code is freed once no running query holds it). Failures are not kept: a stage that
/// did not compile is tried again next time.
pub struct StageCache {
    entries: Mutex<HashMap<String, (Arc<CompiledStage>, u64)>>,
    capacity: usize,
    tick: AtomicU64,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl Default for StageCache {
    fn default() -> Self {
        StageCache::new(DEFAULT_CACHE_STAGES)
    }
}

/// Stages a session keeps compiled.
pub const DEFAULT_CACHE_STAGES: usize = 256;

impl StageCache {
    /// A cache holding at most `capacity` stages.
    pub fn new(capacity: usize) -> StageCache {
        StageCache { entries: Mutex::default(), capacity: capacity.max(1), tick: AtomicU64::new(0), hits: AtomicU64::new(0), misses: AtomicU64::new(0) }
    }

    /// The compiled stage for `spec` (without IR text), and whether it came from the cache.
    pub fn get_or_compile(&self, spec: &StageSpec) -> (Result<Arc<CompiledStage>, String>, bool) {
        let (key, filters) = spec.cache_key_and_filters();
        let tick = self.tick.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut c) = self.entries.lock() {
            if let Some((stage, used)) = c.get_mut(&key) {
                // The code reads the filters it was compiled with: the same bits, or compile again.
                if same_filters(&stage.filters, &filters) {
                    *used = tick;
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    return (Ok(stage.clone()), true);
                }
            }
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let compiled = compile(spec, false).map(|mut stage| {
            stage.filters = filters;
            Arc::new(stage)
        });
        if let (Ok(stage), Ok(mut c)) = (&compiled, self.entries.lock()) {
            if c.len() >= self.capacity {
                if let Some(oldest) = c.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone()) {
                    c.remove(&oldest);
                }
            }
            c.insert(key, (stage.clone(), tick));
        }
        (compiled, false)
    }

    /// Lookups answered from the cache, and stages compiled, so far.
    pub fn hits_and_misses(&self) -> (u64, u64) {
        (self.hits.load(Ordering::Relaxed), self.misses.load(Ordering::Relaxed))
    }

    /// Stages held now.
    pub fn len(&self) -> usize {
        self.entries.lock().map_or(0, |c| c.len())
    }

    /// Whether no stage is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// True when two lists of Bloom filters hold the same bits.
fn same_filters(a: &[arrow::array::ArrayRef], b: &[arrow::array::ArrayRef]) -> bool {
    use arrow::array::AsArray;
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y) || x.as_binary::<i32>().value(0) == y.as_binary::<i32>().value(0))
}

/// The compiled stage for `spec` with its IR and machine code as text, compiled now (for
/// EXPLAIN CODEGEN); the error is the reason the stage runs interpreted.
pub fn compile_stage(spec: &StageSpec) -> Result<Arc<CompiledStage>, String> {
    compile(spec, true).map(Arc::new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physical::PhysicalPlan;

    fn stage(sql: &str) -> StageSpec {
        let s = crate::Session::new();
        s.sql("CREATE TABLE t (a INT, b BIGINT)").expect("table");
        let df = s.sql(sql).expect("plans");
        fn find(p: &Arc<PhysicalPlan>) -> Option<StageSpec> {
            if let PhysicalPlan::WholeStageCodegen { child, .. } = p.as_ref() {
                return StageSpec::from_plan(child).ok();
            }
            p.children().into_iter().find_map(find)
        }
        find(df.physical_plan()).expect("a compiled stage")
    }

    #[test]
    fn repeated_stages_hit_the_cache_and_the_oldest_goes_first() {
        let cache = StageCache::new(2);
        let (a, b, c) = (stage("SELECT a + 1 FROM t WHERE b > 2"), stage("SELECT a * 2 FROM t"), stage("SELECT b - 3 FROM t"));
        assert!(!cache.get_or_compile(&a).1);
        assert!(cache.get_or_compile(&stage("SELECT a + 1 FROM t WHERE b > 2")).1, "the same query planned again");
        assert!(!cache.get_or_compile(&b).1);
        assert!(cache.get_or_compile(&a).1);
        // Full: c evicts b, the least recently used.
        assert!(!cache.get_or_compile(&c).1);
        assert_eq!(cache.len(), 2);
        assert!(cache.get_or_compile(&a).1);
        assert!(!cache.get_or_compile(&b).1, "evicted");
        assert_eq!(cache.hits_and_misses(), (3, 4));
        // Stages compiled for the cache carry no IR text; EXPLAIN's do.
        let (compiled, _) = cache.get_or_compile(&a);
        assert!(compiled.expect("compiles").clif.is_empty());
        assert!(!compile_stage(&a).expect("compiles").clif.is_empty());
    }
}
