//! kiln as Spark's native engine: the JNI entry points of `io.kiln.spark.KilnNative`, the
//! library the Spark plugin (`spark/` at the repository's top level) loads.
//!
//! The plugin hands over a supported physical subtree as Spark's own `TreeNode.toJSON` with
//! its output schema ([`plan::translate`] makes a kiln plan fragment of it), then, per task,
//! the Parquet splits Spark assigned and the rows of Spark's broadcasts and shuffles the
//! subtree reads, each input one Arrow IPC stream ([`inputs`]); kiln runs the fragment through
//! [`kiln::Session::execute_fragment`] and hands back each batch as an Arrow IPC stream, which
//! the JVM side wraps as a `ColumnarBatch`. No panic crosses into the JVM: each entry point
//! catches it and raises `io.kiln.spark.KilnException`, whose message starts with kiln's
//! error class (`[DIVIDE_BY_ZERO] ...`).

pub mod inputs;
pub mod plan;
pub mod splits;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};

use jni::objects::{JByteArray, JClass, JLongArray, JObjectArray, JString};
use jni::sys::{jbyteArray, jlong, jstring};
use jni::JNIEnv;
use kiln::arrow::error::ArrowError;
use kiln::arrow::ipc::writer::StreamWriter;
use kiln::arrow::record_batch::RecordBatch;
use kiln::{KilnError, RecordBatchStream, Session};

use crate::splits::Split;

/// The process's kiln session: settings and the compiled-stage cache every task shares.
fn session() -> &'static Session {
    static SESSION: OnceLock<Session> = OnceLock::new();
    SESSION.get_or_init(Session::new)
}

/// An error as the Java exception's message: kiln's error class first.
fn message(e: &KilnError) -> String {
    let text = e.to_string();
    match e.error_class() {
        Some(class) => match text.find(&format!("[{class}]")) {
            Some(at) => text[at..].to_string(),
            None => format!("[{class}] {text}"),
        },
        None => format!("[KILN_ERROR] {text}"),
    }
}

fn arrow_message(e: &ArrowError) -> String {
    match e {
        ArrowError::ExternalError(inner) => match inner.downcast_ref::<KilnError>() {
            Some(k) => message(k),
            None => format!("[KILN_ERROR] {inner}"),
        },
        other => format!("[KILN_ERROR] {other}"),
    }
}

/// Runs `body`, turning its error or panic into a pending `KilnException`; `fallback` is what
/// the JVM gets back then (it sees the exception, not the value).
fn guarded<T>(env: &mut JNIEnv, fallback: T, body: impl FnOnce(&mut JNIEnv) -> Result<T, String>) -> T {
    let outcome = catch_unwind(AssertUnwindSafe(|| body(env)));
    let text = match outcome {
        Ok(Ok(value)) => return value,
        Ok(Err(text)) => text,
        Err(panic) => {
            let what = panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_default();
            format!("[INTERNAL_ERROR] kiln panicked: {what} (this is a bug in kiln)")
        }
    };
    // An exception already pending (from a failed JNI call) is the one Java sees.
    if !env.exception_check().unwrap_or(true) {
        let _ = env.throw_new("io/kiln/spark/KilnException", text);
    }
    fallback
}

fn jni_error(e: jni::errors::Error) -> String {
    format!("[KILN_JNI_ERROR] {e}")
}

fn read_string(env: &mut JNIEnv, s: &JString) -> Result<String, String> {
    Ok(env.get_string(s).map_err(jni_error)?.into())
}

/// `KilnNative.check(planJson)`: null when kiln runs the subtree, else why not.
#[no_mangle]
pub extern "system" fn Java_io_kiln_spark_KilnNative_check<'l>(mut env: JNIEnv<'l>, _class: JClass<'l>, plan: JString<'l>) -> jstring {
    guarded(&mut env, std::ptr::null_mut(), |env| {
        let text = read_string(env, &plan)?;
        match plan::translate(&text) {
            Ok(_) => Ok(std::ptr::null_mut()),
            Err(e) => Ok(env.new_string(message(&e)).map_err(jni_error)?.into_raw()),
        }
    })
}

/// One task's run of a fragment: the batches still to come.
struct Task {
    batches: RecordBatchStream,
}

/// `KilnNative.open(planJson, paths, starts, lengths, inputs)`: starts the task over its
/// Parquet splits and its inputs (an Arrow IPC stream for each of the subtree's
/// placeholders); returns its handle for `next` and `close`.
#[no_mangle]
pub extern "system" fn Java_io_kiln_spark_KilnNative_open<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    plan: JString<'l>,
    paths: JObjectArray<'l>,
    starts: JLongArray<'l>,
    lengths: JLongArray<'l>,
    inputs: JObjectArray<'l>,
) -> jlong {
    guarded(&mut env, 0, |env| {
        let text = read_string(env, &plan)?;
        let n = env.get_array_length(&paths).map_err(jni_error)? as usize;
        let (mut from, mut len) = (vec![0i64; n], vec![0i64; n]);
        env.get_long_array_region(&starts, 0, &mut from).map_err(jni_error)?;
        env.get_long_array_region(&lengths, 0, &mut len).map_err(jni_error)?;
        let mut list = Vec::with_capacity(n);
        for i in 0..n {
            let path = JString::from(env.get_object_array_element(&paths, i as i32).map_err(jni_error)?);
            list.push(Split { path: read_string(env, &path)?, start: from[i], length: len[i] });
        }
        let count = env.get_array_length(&inputs).map_err(jni_error)?;
        let mut streams = Vec::with_capacity(count as usize);
        for i in 0..count {
            let bytes = JByteArray::from(env.get_object_array_element(&inputs, i).map_err(jni_error)?);
            if bytes.is_null() {
                return Err(format!("[KILN_SPARK_INPUT] input {i} is null"));
            }
            streams.push(env.convert_byte_array(&bytes).map_err(jni_error)?);
        }
        let task = open(&text, list, streams).map_err(|e| message(&e))?;
        Ok(Box::into_raw(Box::new(task)) as jlong)
    })
}

fn open(text: &str, list: Vec<Split>, streams: Vec<Vec<u8>>) -> kiln::Result<Task> {
    let fragment = plan::translate(text)?;
    if streams.len() != fragment.inputs.len() {
        return Err(KilnError::exec(format!("[KILN_SPARK_INPUT] the subtree reads {} inputs, the task gave {}", fragment.inputs.len(), streams.len())));
    }
    let session = session();
    let plan = if session.config()?.whole_stage_codegen { kiln::internals::codegen::collapse_codegen_stages(&fragment.plan) } else { fragment.plan };
    let mut batches = Vec::with_capacity(streams.len() + 1);
    for (bytes, columns) in streams.into_iter().zip(fragment.inputs) {
        batches.push(inputs::read(bytes, columns)?);
    }
    if let Some(scan) = fragment.scan {
        batches.push(splits::read(list, scan));
    }
    let batches = session.execute_fragment(Arc::clone(&plan), 0, batches)?;
    Ok(Task { batches })
}

/// `KilnNative.next(handle)`: the next batch as an Arrow IPC stream (schema and one batch),
/// or null at the end.
#[no_mangle]
pub extern "system" fn Java_io_kiln_spark_KilnNative_next<'l>(mut env: JNIEnv<'l>, _class: JClass<'l>, handle: jlong) -> jbyteArray {
    guarded(&mut env, std::ptr::null_mut(), |env| {
        if handle == 0 {
            return Err("[KILN_SPARK_CLOSED] next() on a closed task".into());
        }
        // The handle came from `open` and is freed only by `close`, which the JVM calls once.
        let task = unsafe { &mut *(handle as *mut Task) };
        match task.batches.next() {
            None => Ok(std::ptr::null_mut()),
            Some(Err(e)) => Err(arrow_message(&e)),
            Some(Ok(batch)) => {
                let bytes = ipc_bytes(&batch).map_err(|e| arrow_message(&e))?;
                Ok(env.byte_array_from_slice(&bytes).map_err(jni_error)?.into_raw())
            }
        }
    })
}

fn ipc_bytes(batch: &RecordBatch) -> Result<Vec<u8>, ArrowError> {
    let mut out = Vec::with_capacity(batch.get_array_memory_size() + 1024);
    let mut writer = StreamWriter::try_new(&mut out, &batch.schema())?;
    writer.write(batch)?;
    writer.finish()?;
    drop(writer);
    Ok(out)
}

/// `KilnNative.close(handle)`: stops the task (if still running) and frees it.
#[no_mangle]
pub extern "system" fn Java_io_kiln_spark_KilnNative_close<'l>(mut env: JNIEnv<'l>, _class: JClass<'l>, handle: jlong) {
    guarded(&mut env, (), |_| {
        if handle != 0 {
            // Taken back from `open`'s `Box::into_raw`; the JVM closes each handle once.
            drop(unsafe { Box::from_raw(handle as *mut Task) });
        }
        Ok(())
    })
}
