//! The host API: DataFrame code builds the plans SQL builds. TPC-H Q1, Q3, Q5 and the seed's
//! revenue-by-country query, each written as SQL and as DataFrame code, must give the same
//! optimized and physical plans once ExprIds and plan ids are masked; and the same rows.

use std::path::Path;

use kiln::functions::*;
use kiln::{DataFrame, ExplainMode, JoinType, Result, Session};

mod common;

fn session(dataset: &str) -> Session {
    let session = Session::builder().config("spark.sql.shuffle.partitions", "8").config("spark.sql.maxMetadataStringLength", "100000").build().expect("valid settings");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/data").join(dataset);
    for entry in std::fs::read_dir(&dir).expect("reference data") {
        let path = entry.expect("entry").path();
        let name = path.file_stem().and_then(|s| s.to_str()).expect("utf-8 name").to_string();
        session.register_parquet(&name, &path).expect("registers");
    }
    session
}

fn sql_of(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/queries").join(format!("{name}.sql"));
    std::fs::read_to_string(path).expect("reference query")
}

/// Asserts equal optimized and physical plans (ids masked) and equal rows.
fn assert_same(name: &str, sql: &DataFrame, df: &DataFrame) {
    let masked = |d: &DataFrame| {
        (
            common::mask_ids(&d.optimized_plan().tree_string()),
            common::mask_ids(&d.explain_string(ExplainMode::Simple).expect("explains")),
        )
    };
    let (sql_opt, sql_phys) = masked(sql);
    let (df_opt, df_phys) = masked(df);
    assert_eq!(sql_opt, df_opt, "{name}: optimized plans differ\n--- SQL\n{sql_opt}\n--- DataFrame\n{df_opt}");
    assert_eq!(sql_phys, df_phys, "{name}: physical plans differ\n--- SQL\n{sql_phys}\n--- DataFrame\n{df_phys}");
    let rows = |d: &DataFrame| kiln::format::result_csv(&d.schema(), &d.collect().expect("runs"));
    assert_eq!(rows(sql), rows(df), "{name}: rows differ");
}

/// `(1 - l_discount)` times the extended price: revenue in Q1, Q3 and Q5.
fn disc_price() -> Column {
    col("l_extendedprice") * (lit(1) - col("l_discount"))
}

fn q1(s: &Session) -> Result<DataFrame> {
    s.table("lineitem")?
        .filter(col("l_shipdate").le(expr("date '1998-12-01' - interval '90' day")))?
        .group_by([col("l_returnflag"), col("l_linestatus")])
        .agg([
            sum(col("l_quantity")).alias("sum_qty"),
            sum(col("l_extendedprice")).alias("sum_base_price"),
            sum(disc_price()).alias("sum_disc_price"),
            sum(disc_price() * (lit(1) + col("l_tax"))).alias("sum_charge"),
            avg(col("l_quantity")).alias("avg_qty"),
            avg(col("l_extendedprice")).alias("avg_price"),
            avg(col("l_discount")).alias("avg_disc"),
            count(col("*")).alias("count_order"),
        ])?
        .order_by([col("l_returnflag"), col("l_linestatus")])
}

fn q3(s: &Session) -> Result<DataFrame> {
    let customer = s.table("customer")?;
    let orders = s.table("orders")?;
    let lineitem = s.table("lineitem")?;
    customer
        .join_all(&orders)?
        .join_all(&lineitem)?
        .filter(
            col("c_mktsegment")
                .eq("BUILDING")
                .and(col("c_custkey").eq(col("o_custkey")))
                .and(col("l_orderkey").eq(col("o_orderkey")))
                .and(col("o_orderdate").lt(expr("date '1995-03-15'")))
                .and(col("l_shipdate").gt(expr("date '1995-03-15'"))),
        )?
        .group_by([col("l_orderkey"), col("o_orderdate"), col("o_shippriority")])
        .agg([sum(disc_price()).alias("revenue")])?
        .select([col("l_orderkey"), col("revenue"), col("o_orderdate"), col("o_shippriority")])?
        .order_by([desc(col("revenue")), col("o_orderdate")])?
        .limit(10)
}

fn q5(s: &Session) -> Result<DataFrame> {
    let mut from = s.table("customer")?;
    for t in ["orders", "lineitem", "supplier", "nation", "region"] {
        from = from.join_all(&s.table(t)?)?;
    }
    from.filter(
        col("c_custkey")
            .eq(col("o_custkey"))
            .and(col("l_orderkey").eq(col("o_orderkey")))
            .and(col("l_suppkey").eq(col("s_suppkey")))
            .and(col("c_nationkey").eq(col("s_nationkey")))
            .and(col("s_nationkey").eq(col("n_nationkey")))
            .and(col("n_regionkey").eq(col("r_regionkey")))
            .and(col("r_name").eq("ASIA"))
            .and(col("o_orderdate").ge(expr("date '1994-01-01'")))
            .and(col("o_orderdate").lt(expr("date '1994-01-01' + interval '1' year"))),
    )?
    .group_by([col("n_name")])
    .agg([sum(disc_price()).alias("revenue")])?
    .order_by([desc(col("revenue"))])
}

/// The seed's PySpark, line for line.
fn revenue_by_country(s: &Session) -> Result<DataFrame> {
    let orders = s.table("orders")?.alias("o")?;
    let customers = s.table("customers")?.alias("c")?;
    orders
        .join_on(&customers, col("o.customer_id").eq(col("c.customer_id")), JoinType::Inner)?
        .where_(col("o.order_date").ge("2026-10-01").and(col("o.status").eq("shipped")).and(col("c.segment").eq("enterprise")))?
        .group_by([col("c.country")])
        .agg([count(col("*")).alias("orders"), sum(col("o.amount")).alias("revenue")])?
        .order_by([desc(col("revenue"))])
}

#[test]
fn tpch_q1_q3_q5_plan_as_their_sql() {
    let s = session("tpch");
    for (name, build) in [("tpch_q01", q1 as fn(&Session) -> Result<DataFrame>), ("tpch_q03", q3), ("tpch_q05", q5)] {
        let sql = s.sql(&sql_of(name)).expect("SQL plans");
        let df = build(&s).unwrap_or_else(|e| panic!("{name} DataFrame: {e}"));
        assert_same(name, &sql, &df);
    }
}

#[test]
fn revenue_by_country_plans_as_its_sql() {
    let s = session("sales");
    let sql = s.sql(&sql_of("sales_enterprise_revenue")).expect("SQL plans");
    let df = revenue_by_country(&s).expect("DataFrame plans");
    assert_same("revenue_by_country", &sql, &df);
}

mod udfs {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, AsArray, Float64Array, Int64Array};
    use arrow::datatypes::{DataType, Int64Type};
    use kiln::functions::*;
    use kiln::udf::{ScalarUdf, Signature, Volatility};
    use kiln::{ExplainMode, Session};

    fn plus_one(args: &[ArrayRef]) -> kiln::Result<ArrayRef> {
        Ok(Arc::new(args[0].as_primitive::<Int64Type>().iter().map(|v| v.map(|v| v + 1)).collect::<Int64Array>()))
    }

    fn session() -> Session {
        let s = Session::new();
        let udf = |name: &str, f: fn(&[ArrayRef]) -> kiln::Result<ArrayRef>, v| ScalarUdf::new(name, Signature::Exact(vec![DataType::Int64]), DataType::Int64, v, f);
        s.register_udf(udf("plus_one", plus_one, Volatility::Immutable)).unwrap();
        s.register_udf(udf("boom", |_| panic!("kaboom"), Volatility::Immutable)).unwrap();
        s.register_udf(udf("short", |_| Ok(Arc::new(Int64Array::from(vec![1i64])) as ArrayRef), Volatility::Immutable)).unwrap();
        s.register_udf(udf("wrong_type", |a| Ok(Arc::new(Float64Array::from(vec![0.0; a[0].len()])) as ArrayRef), Volatility::Immutable)).unwrap();
        s.register_udf(udf("noisy", plus_one, Volatility::Volatile)).unwrap();
        s.sql("CREATE TABLE t (a INT, b BIGINT)").unwrap();
        s.sql("INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)").unwrap();
        s
    }

    #[test]
    fn udf_runs_from_sql_and_rust_in_both_modes() {
        for codegen in ["true", "false"] {
            let s = session();
            s.set_conf("spark.sql.codegen.wholeStage", codegen).unwrap();
            // The int argument is cast to the UDF's bigint.
            let sql = s.sql("SELECT sum(plus_one(a)) AS x FROM t WHERE plus_one(b) > 11").unwrap().collect().unwrap();
            assert_eq!(sql[0].column(0).as_primitive::<Int64Type>().value(0), 7);
            let df = s.table("t").unwrap().filter(call_udf("plus_one", [col("b")]).gt(11)).unwrap().agg([sum(call_udf("plus_one", [col("a")])).alias("x")]).unwrap();
            assert_eq!(df.collect().unwrap()[0].column(0).as_primitive::<Int64Type>().value(0), 7);
        }
    }

    #[test]
    fn udf_is_opaque_to_the_optimizer() {
        let s = session();
        let dir = tempfile::tempdir().unwrap();
        s.table("t").unwrap().write_parquet(dir.path().join("p"), &[]).unwrap();
        s.register_parquet("p", dir.path().join("p")).unwrap();
        let plan = s.sql("SELECT a FROM p WHERE plus_one(b) > 11 AND a > 0").unwrap().explain_string(ExplainMode::Simple).unwrap();
        let pushed = plan.split("PushedFilters: ").nth(1).and_then(|p| p.split(']').next()).expect("a scan line");
        assert!(pushed.contains("GreaterThan(a,0)") && !pushed.contains("plus_one"), "{plan}");
        assert!(plan.lines().any(|l| l.contains("Filter") && l.contains("(plus_one(b#")), "{plan}");
        // Never folded, even over a literal.
        let folded = s.sql("SELECT plus_one(1) AS x").unwrap();
        assert!(folded.optimized_plan().tree_string().contains("plus_one(1) AS x"), "{}", folded.optimized_plan().tree_string());
        // A volatile UDF is not deterministic: its filter is not pushed below the join.
        let join = s.sql("SELECT * FROM t x JOIN t y ON x.a = y.a WHERE noisy(x.b) > 0").unwrap();
        let tree = join.optimized_plan().tree_string();
        let filter_line = tree.lines().position(|l| l.contains("noisy(")).expect("noisy in the plan");
        let join_line = tree.lines().position(|l| l.contains("Join Inner")).expect("a join");
        assert!(filter_line < join_line, "{tree}");
    }

    /// A stage with a UDF runs interpreted, counted as such (never a silent fallback); the
    /// stages without one stay compiled.
    #[test]
    fn udf_stage_is_counted_interpreted() {
        let s = session();
        s.set_conf("spark.sql.codegen.wholeStage", "true").unwrap();
        let df = s.sql("SELECT a, count(1) AS n FROM t WHERE plus_one(b) > 11 GROUP BY a").unwrap();
        let (_, metrics) = df.collect_with_metrics().unwrap();
        assert!(metrics.codegen.stages_interpreted >= 1, "{:?}", metrics.codegen);
        assert!(metrics.codegen.stages_compiled >= 1, "{:?}", metrics.codegen);
        assert_eq!(metrics.codegen.stages_fell_back, 0, "{:?}", metrics.codegen);
        let codegen = df.explain_string(ExplainMode::Codegen).unwrap();
        assert!(codegen.contains("user-defined function plus_one"), "{codegen}");
    }

    /// Counts its rows; `panic_at` makes `update` panic, `short_state` returns too few rows.
    struct Counting {
        counts: Vec<i64>,
        panics: bool,
        short_state: bool,
    }

    impl kiln::udf::Accumulator for Counting {
        fn resize(&mut self, groups: usize) {
            self.counts.resize(groups, 0);
        }
        fn update(&mut self, gids: &[u32], _: &[ArrayRef]) -> kiln::Result<()> {
            assert!(!self.panics, "accumulator bug");
            gids.iter().for_each(|g| self.counts[*g as usize] += 1);
            Ok(())
        }
        fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> kiln::Result<()> {
            let c = state[0].as_primitive::<Int64Type>();
            gids.iter().enumerate().for_each(|(i, g)| self.counts[*g as usize] += c.value(i));
            Ok(())
        }
        fn state(&mut self) -> kiln::Result<Vec<ArrayRef>> {
            let n = if self.short_state { 0 } else { self.counts.len() };
            Ok(vec![Arc::new(Int64Array::from(self.counts[..n].to_vec()))])
        }
        fn evaluate(&mut self) -> kiln::Result<ArrayRef> {
            Ok(Arc::new(Int64Array::from(self.counts.clone())))
        }
    }

    #[test]
    fn udaf_groups_in_both_modes_and_its_faults_are_errors() {
        use arrow::datatypes::Field;
        use kiln::udf::AggregateUdf;
        for codegen in ["true", "false"] {
            let s = session();
            s.set_conf("spark.sql.codegen.wholeStage", codegen).unwrap();
            s.set_conf("spark.sql.shuffle.partitions", "3").unwrap();
            for (name, panics, short_state) in [("my_count", false, false), ("bad_count", true, false), ("short_count", false, true)] {
                let state = vec![Field::new("n", DataType::Int64, false)];
                s.register_udaf(AggregateUdf::new(name, Signature::Any(1), DataType::Int64, state, move || Box::new(Counting { counts: vec![], panics, short_state }))).unwrap();
            }
            let df = s.sql("SELECT a % 2 AS k, my_count(b) AS n, count(b) AS c FROM t GROUP BY a % 2 ORDER BY k").unwrap();
            let rows = kiln::format::result_csv(&df.schema(), &df.collect().unwrap());
            assert_eq!(rows, "k,n,c\n0,1,1\n1,2,2\n", "{codegen}");
            let global = s.table("t").unwrap().agg([call_udf("my_count", [col("a")])]).unwrap().collect().unwrap();
            assert_eq!(global[0].column(0).as_primitive::<Int64Type>().value(0), 3);
            let e = s.sql("SELECT bad_count(b) FROM t GROUP BY a").and_then(|d| d.collect()).expect_err("panics").to_string();
            assert!(e.contains("`bad_count`") && e.contains("accumulator bug"), "{e}");
            let e = s.sql("SELECT short_count(b) FROM t GROUP BY a").and_then(|d| d.collect()).expect_err("short").to_string();
            assert!(e.contains("`short_count`") && e.contains("state has 0 rows"), "{e}");
            assert_eq!(s.table("t").unwrap().count().unwrap(), 3, "the session stays usable");
        }
    }

    #[test]
    fn bad_udfs_are_errors_and_the_session_stays_usable() {
        let s = session();
        let err = |sql: &str| s.sql(sql).and_then(|df| df.collect()).expect_err(sql).to_string();
        let e = err("SELECT boom(b) FROM t");
        assert!(e.contains("`boom`") && e.contains("kaboom"), "{e}");
        let e = err("SELECT short(b) FROM t");
        assert!(e.contains("`short`") && e.contains("1 values for 3 rows"), "{e}");
        let e = err("SELECT wrong_type(b) FROM t");
        assert!(e.contains("`wrong_type`") && e.contains("Float64"), "{e}");
        let e = err("SELECT plus_one(b, a) FROM t");
        assert!(e.contains("WRONG_NUM_ARGS") && e.contains("plus_one"), "{e}");
        let e = err("SELECT plus_one('x') FROM t");
        assert!(e.contains("UNEXPECTED_INPUT_TYPE") && e.contains("plus_one"), "{e}");
        let e = err("SELECT plus_on(b) FROM t");
        assert!(e.contains("Did you mean `plus_one`?"), "{e}");
        assert_eq!(s.sql("SELECT plus_one(b) FROM t").unwrap().count().unwrap(), 3);
    }
}

mod transformations {
    use arrow::array::AsArray;
    use arrow::datatypes::Int64Type;
    use kiln::functions::*;
    use kiln::{JoinType, Session};

    fn session() -> Session {
        let s = Session::new();
        s.sql("CREATE TABLE t (k STRING, v INT)").unwrap();
        s.sql("INSERT INTO t VALUES ('a', 1), ('a', 2), ('b', 3), (NULL, 4)").unwrap();
        s
    }

    fn ints(df: &kiln::DataFrame) -> Vec<i64> {
        df.collect().unwrap().iter().flat_map(|b| b.column(0).as_primitive::<Int64Type>().iter().map(|v| v.unwrap_or(-1)).collect::<Vec<_>>()).collect()
    }

    #[test]
    fn errors_come_at_the_call_with_a_suggestion() {
        let t = session().table("t").unwrap();
        let e = t.select([col("vv")]).err().expect("unknown column").to_string();
        assert!(e.contains("`vv`") && e.contains("Did you mean `v`?"), "{e}");
        let e = t.filter(expr("v +")).err().expect("bad expression").to_string();
        assert!(e.contains("[PARSE_SYNTAX_ERROR] Syntax error"), "{e}");
        let e = t.select([col("v").cast("decimal(99,0)")]).err().expect("bad type").to_string();
        assert!(e.contains("precision"), "{e}");
    }

    #[test]
    fn explode_in_a_select_is_a_generate() {
        let t = session().table("t").unwrap();
        let arrays = t.select([col("k"), call_function("array", [col("v"), col("v") * 10]).alias("a")]).unwrap();
        let exploded = arrays.select([col("k"), explode(col("a")).alias("x")]).unwrap();
        assert_eq!(exploded.columns(), ["k", "x"]);
        assert!(exploded.optimized_plan().tree_string().starts_with("Generate explode("), "{}", exploded.optimized_plan().tree_string());
        let x = exploded.select([col("x").cast("bigint")]).unwrap();
        assert_eq!(ints(&x), [1, 10, 2, 20, 3, 30, 4, 40]);
        let positions = arrays.select([posexplode_outer(col("a"))]).unwrap();
        assert_eq!(positions.columns(), ["pos", "col"]);
        assert_eq!(positions.count().unwrap(), 8);
    }

    #[test]
    fn columns_and_transformations() {
        let s = session();
        let t = s.table("t").unwrap();
        assert_eq!(t.count().unwrap(), 4);
        let w = t.with_column("v", col("v") * 10).unwrap().with_column("w", col("v") + 1).unwrap();
        assert_eq!(w.columns(), ["k", "v", "w"]);
        let r = w.with_column_renamed("w", "x").unwrap().drop(&["k"]).unwrap();
        assert_eq!(r.columns(), ["v", "x"]);
        let cased = t.select([when(col("v").gt(2), lit(1i64)).otherwise(lit(0i64)).alias("big")]).unwrap();
        assert_eq!(ints(&cased), [0, 0, 1, 1]);
        let picked = t.filter(col("k").is_in(["a", "b"]).and(col("v").between(2, 3))).unwrap().select([col("v").cast("bigint")]).unwrap();
        assert_eq!(ints(&picked), [2, 3]);
        let grouped = t.group_by([col("k")]).agg([sum(col("v")).alias("s")]).unwrap().order_by([desc(col("s"))]).unwrap().select([col("s")]).unwrap();
        assert_eq!(ints(&grouped), [4, 3, 3]);
        assert_eq!(t.rollup([col("k")]).count().unwrap().count().unwrap(), 4);
        assert_eq!(t.select([col("k")]).unwrap().distinct().unwrap().count().unwrap(), 3);
        assert_eq!(t.union(&t).unwrap().count().unwrap(), 8);
        assert_eq!(t.union_by_name(&t.select([col("v"), col("k")]).unwrap()).unwrap().count().unwrap(), 8);
        let a = t.filter(col("v").le(2)).unwrap();
        assert_eq!(t.intersect(&a).unwrap().count().unwrap(), 2);
        assert_eq!(t.except(&a).unwrap().count().unwrap(), 2);
        assert_eq!(t.intersect(&t).unwrap().count().unwrap(), 4, "NULL keys match themselves");
        let j = t.alias("x").unwrap().join_on(&t.alias("y").unwrap(), col("x.v").eq(col("y.v") + 1), JoinType::Inner).unwrap();
        assert_eq!(j.count().unwrap(), 3);
        assert_eq!(t.cross_join(&t).unwrap().count().unwrap(), 16);
        assert_eq!(t.limit(3).unwrap().count().unwrap(), 3);
        assert_eq!(t.take(2).unwrap().iter().map(|b| b.num_rows()).sum::<usize>(), 2);
        assert_eq!(t.order_by([col("v").desc()]).unwrap().first().unwrap().map(|b| b.num_rows()), Some(1));
        let sel = t.select_expr(["v + 1 AS v1", "upper(k)"]).unwrap();
        assert_eq!(sel.columns(), ["v1", "upper(k)"]);
        t.filter(col("v").gt(2)).unwrap().create_or_replace_temp_view("big").unwrap();
        assert_eq!(s.sql("SELECT count(*) FROM big").unwrap().collect().unwrap()[0].column(0).as_primitive::<Int64Type>().value(0), 2);
    }

    #[test]
    fn stream_stops_when_dropped() {
        let s = session();
        let mut stream = s.table("t").unwrap().execute_stream().unwrap();
        assert!(stream.next().is_some());
        drop(stream);
        assert_eq!(s.table("t").unwrap().count().unwrap(), 4);
    }
}
