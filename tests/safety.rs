//! The generated code's memory: never writable and executable at once (W^X). After stages are
//! compiled and run, no page of the process is mapped `rwx`.

#[cfg(target_os = "linux")]
#[test]
fn no_page_is_writable_and_executable_after_compiling_stages() {
    let session = kiln::Session::new();
    session.set_conf("spark.sql.codegen.wholeStage", "true").expect("setting");
    let df = session
        .sql("SELECT k, sum(v) FROM VALUES (1, 2.5), (2, 3.5), (1, 4.0) AS t(k, v) WHERE v > 1 GROUP BY k ORDER BY k")
        .expect("plans");
    let (rows, metrics) = df.collect_with_metrics().expect("runs");
    assert_eq!(rows.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
    assert!(metrics.codegen.stages_compiled > 0, "stages were compiled: {:?}", metrics.codegen);
    let maps = std::fs::read_to_string("/proc/self/maps").expect("the process's memory maps");
    let wx: Vec<&str> = maps.lines().filter(|l| l.split_whitespace().nth(1).is_some_and(|p| p.contains('w') && p.contains('x'))).collect();
    assert!(wx.is_empty(), "pages mapped writable and executable:\n{}", wx.join("\n"));
}

/// The boundary where generated code gets its column buffers (`input_slots`) checks each column
/// against the compiled stage: a batch whose column has another type than the stage reads (an
/// Int64 column where the code reads 4-byte ints, a type without a slot reader) is an error
/// before any generated code runs, never an out-of-bounds read or a null pointer.
#[test]
fn a_compiled_stage_rejects_a_batch_whose_columns_differ_from_its_plan() {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Float32Array, Int32Array, Int64Array, RecordBatch};
    use kiln::codegen::{compile_stage, output_batch, StageSpec};
    use kiln::physical::PhysicalPlan;

    fn stage(plan: &Arc<PhysicalPlan>) -> Option<Arc<PhysicalPlan>> {
        match plan.as_ref() {
            PhysicalPlan::WholeStageCodegen { fallback: None, child, .. } => Some(child.clone()),
            _ => plan.children().into_iter().find_map(stage),
        }
    }
    let batch = |column: ArrayRef| RecordBatch::try_from_iter([("i", column)]).expect("batch");
    let session = kiln::Session::new();
    session.register_batches("t", vec![batch(Arc::new(Int32Array::from(vec![1, 2, 3])))]).expect("table");
    session.set_conf("spark.sql.codegen.wholeStage", "true").expect("setting");
    let df = session.sql("SELECT i * 2 AS x FROM t WHERE i > 1").expect("plans");
    let node = stage(df.physical_plan()).expect("a compiled stage");
    let spec = StageSpec::from_plan(&node).expect("a stage");
    let compiled = compile_stage(&spec).expect("compiles");

    let good = output_batch(&spec, &compiled, &batch(Arc::new(Int32Array::from(vec![1, 2, 3]))), &[]).expect("runs").expect("compiled");
    assert_eq!(good.num_rows(), 2);
    let wide = output_batch(&spec, &compiled, &batch(Arc::new(Int64Array::from(vec![1, 2, 3]))), &[]);
    let err = wide.expect_err("an Int64 column where the stage reads Int32").to_string();
    assert!(err.contains("is Int64, the compiled stage reads Int32"), "{err}");
    let other = output_batch(&spec, &compiled, &batch(Arc::new(Float32Array::from(vec![1.0, 2.0, 3.0]))), &[]);
    let err = other.expect_err("a Float32 column").to_string();
    assert!(err.contains("is Float32"), "{err}");
}

/// A column of Arrow's Null type has no validity bitmap, yet every value is NULL: generated code
/// testing it (`z IS NULL` in a compiled filter) must see NULLs, as the interpreter does.
#[test]
fn generated_code_reads_a_null_typed_column_as_nulls() {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int32Array, NullArray, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema};

    let z: ArrayRef = Arc::new(NullArray::new(3));
    let a: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3]));
    // Declared nullable, and not (as `RecordBatch::try_from_iter` declares it): NullType is
    // always nullable to Spark, whatever the field says.
    for nullable in [true, false] {
        let schema = Arc::new(Schema::new(vec![Field::new("z", DataType::Null, nullable), Field::new("a", DataType::Int32, true)]));
        let session = kiln::Session::new();
        session.register_batches("t", vec![RecordBatch::try_new(schema, vec![z.clone(), a.clone()]).expect("batch")]).expect("table");
        for codegen in ["true", "false"] {
            session.set_conf("spark.sql.codegen.wholeStage", codegen).expect("setting");
            let df = session.sql("SELECT count(*) FROM t WHERE z IS NULL AND a > 1").expect("plans");
            let (rows, metrics) = df.collect_with_metrics().expect("runs");
            let csv = kiln::format::result_csv(&df.schema(), &rows);
            assert_eq!(csv.lines().nth(1), Some("2"), "codegen {codegen}: {csv}");
            if codegen == "true" {
                assert!(metrics.codegen.stages_compiled > 0, "the filter compiled: {:?}", metrics.codegen);
            }
        }
    }
}
