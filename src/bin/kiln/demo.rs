//! `kiln demo`: the seeds' data sets, the article's revenue-by-country query, its plans and result.

use kiln::{ExplainMode, KilnError, Session};

/// The query of the seed article (orders x customers, shipped October orders of enterprise
/// customers, revenue by country).
pub const REVENUE_BY_COUNTRY: &str = "SELECT c.country,
       COUNT(*)      AS orders,
       SUM(o.amount) AS revenue
FROM orders o
JOIN customers c ON o.customer_id = c.customer_id
WHERE o.order_date >= '2026-10-01'
  AND o.status = 'shipped'
  AND c.segment = 'enterprise'
GROUP BY c.country
ORDER BY revenue DESC";

pub fn run(scale: f64, keep: Option<std::path::PathBuf>) -> Result<(), KilnError> {
    if !(scale > 0.0) {
        return Err(KilnError::Config(format!("--scale must be positive, got {scale}")));
    }
    // The temporary folder lives (and is deleted) with this guard.
    let (temporary, dir) = match keep {
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(|e| KilnError::io(dir.display().to_string(), e))?;
            (None, dir)
        }
        None => {
            let t = tempfile::tempdir().map_err(|e| KilnError::io("temporary directory", e))?;
            let dir = t.path().to_path_buf();
            (Some(t), dir)
        }
    };
    let paths = kiln::datasource::demo::write_demo_data(&dir, scale)?;
    let sales = dir.join("sales");
    let next = match &temporary {
        Some(_) => {
            outln!("Data sets written under {} (deleted when the demo ends; `kiln demo --keep DIR` keeps them)", dir.display());
            "`kiln demo --keep DIR`, then `kiln shell --tables DIR/sales`".to_string()
        }
        None => {
            outln!("Data sets written under {} (kept)", dir.display());
            format!("`kiln shell --tables {}`", sales.display())
        }
    };

    let shop = Session::new();
    shop.register_parquet("orders", &paths.shop_orders)?;
    shop.register_parquet("customers", &paths.shop_customers)?;
    let q = "SELECT customer_id, SUM(amount) AS revenue FROM orders WHERE status = 'paid' GROUP BY customer_id ORDER BY customer_id";
    outln!("\n-- shop: paid revenue per customer\n{q}");
    shop.sql(q)?.show()?;

    let sales = Session::new();
    sales.register_parquet("orders", &paths.sales_orders)?;
    sales.register_parquet("customers", &paths.sales_customers)?;
    outln!("\n-- sales: revenue by country (scale {scale})\n{REVENUE_BY_COUNTRY}\n");
    let df = sales.sql(REVENUE_BY_COUNTRY)?;
    df.explain(ExplainMode::Extended)?;
    let start = std::time::Instant::now();
    let (batches, metrics) = df.collect_with_metrics()?;
    let elapsed = start.elapsed();
    outln!("{}", kiln::format::show_string(&df.schema(), &batches, 20, 20, df.time_zone()).trim_end());
    outln!("({} ms)", elapsed.as_millis());
    for (table, scan) in &metrics.scans {
        outln!(
            "scan {table}: {} files read, {} row groups read, {} skipped by pushed filters, {} rows skipped by the page index, {} rows out",
            scan.files_read,
            scan.row_groups_read,
            scan.row_groups_skipped,
            scan.rows_skipped_by_page_index,
            scan.rows_out
        );
    }
    show_generated_code(&sales, &df)?;
    compiled_vs_interpreted()?;
    outln!("\nNext: {next} for an interactive session over the sales tables (.help), `kiln bench tpch --sf 1 --queries 1-22` or `kiln bench sql -f q.sql --table t=PATH` to time compiled against interpreted on your own query.");
    Ok(())
}

/// Lines of a function's annotated IR the demo keeps per comment: the comment says what the
/// code does, the first instructions show how.
const DEMO_LINES_PER_NOTE: usize = 1;

/// The fused stage of the revenue query (the one probing the join): its operators and a
/// digest of its generated code, each comment with its first instructions.
fn show_generated_code(session: &Session, df: &kiln::DataFrame) -> Result<(), KilnError> {
    let Some(id) = fused_stage(df.physical_plan()) else { return Ok(()) };
    let text = kiln::explain::codegen_stage_string(df.physical_plan(), &session.config()?, id)?;
    outln!("\n-- The main job: whole-stage code generation. Stage *({id}) fuses the filter, the join probe and the partial aggregate");
    outln!("-- into native loops over each batch (filter, join probe, aggregate sink), the comments naming each operator and expression");
    outln!("-- (all of it: `kiln explain --mode codegen --stage {id} ...`; machine code: `--conf kiln.codegen.dump=both`):\n");
    outln!("{}", digest(&text, &["; filter (no NULLs)", "; probe (no NULLs)", "; sink (no NULLs)"], DEMO_LINES_PER_NOTE));
    Ok(())
}

/// The id of the first stage holding a join probe (else the first stage).
fn fused_stage(plan: &std::sync::Arc<kiln::physical::PhysicalPlan>) -> Option<usize> {
    use kiln::physical::PhysicalPlan;
    fn has_join(p: &PhysicalPlan) -> bool {
        matches!(p, PhysicalPlan::HashJoin { .. }) || p.children().iter().any(|c| !matches!(c.as_ref(), PhysicalPlan::WholeStageCodegen { .. }) && has_join(c))
    }
    fn walk(p: &PhysicalPlan, out: &mut Vec<(usize, bool)>) {
        if let PhysicalPlan::WholeStageCodegen { id, child, fallback: None } = p {
            out.push((*id, has_join(child)));
        }
        p.children().iter().for_each(|c| walk(c, out));
    }
    let mut stages = vec![];
    walk(plan, &mut stages);
    stages.iter().find(|(_, j)| *j).or(stages.first()).map(|(id, _)| *id)
}

/// The stage's header and operator tree, then each of `functions` (their `; name` lines): every
/// comment once per run of code it covers, with its first `per_note` instructions and the
/// number of the others.
pub fn digest(explain: &str, functions: &[&str], per_note: usize) -> String {
    let lines: Vec<String> = explain.lines().map(|l| l.split_once(" */ ").map_or(l.to_string(), |(_, r)| r.to_string())).collect();
    let mut out: Vec<String> = lines.iter().take_while(|l| !l.starts_with("Generated code:")).cloned().collect();
    out.push(String::from("Generated code (a digest):"));
    for (n, function) in functions.iter().enumerate() {
        // Entry, loop and fail block are alike in every function: shown in the first.
        let common = |note: &str| n > 0 && ["entry", "fail", "row loop"].iter().any(|c| note.starts_with(c));
        let Some(start) = lines.iter().position(|l| l == function) else { continue };
        out.push((*function).to_string());
        let (mut shown, mut hidden, mut last) = (0, 0, None::<&str>);
        for l in &lines[start + 1..] {
            let t = l.trim_start();
            if l == "}" {
                break;
            }
            if let Some(note) = t.strip_prefix("; ") {
                // The same operator over several blocks: one comment.
                if common(note) {
                    if hidden > 0 {
                        out.push(format!("        ... {hidden} more"));
                    }
                    (hidden, last) = (0, None);
                    continue;
                }
                if last != Some(note) {
                    if hidden > 0 {
                        out.push(format!("        ... {hidden} more"));
                    }
                    out.push(format!("    {t}"));
                    (shown, hidden, last) = (0, 0, Some(note));
                }
            } else if last.is_none() || t.is_empty() || t.starts_with("block") {
                continue;
            } else if shown < per_note && !t.contains(" = iconst") {
                out.push(format!("        {t}"));
                shown += 1;
            } else {
                hidden += 1;
            }
        }
        if hidden > 0 {
            out.push(format!("        ... {hidden} more"));
        }
    }
    out.join("\n")
}

/// TPC-H Q1, Q3 and Q6 at SF 0.1, generated in memory: compiled against interpreted.
fn compiled_vs_interpreted() -> Result<(), KilnError> {
    outln!("\n-- Compiled against interpreted: TPC-H Q1, Q3, Q6 at SF 0.1 (generated in memory), medians of 3 runs");
    let session = Session::new();
    crate::bench::register_tpch(&session, 0.1)?;
    let queries = crate::bench::tpch_queries("1,3,6")?;
    let options = crate::bench::BenchOptions {
        runs: 3,
        mode: crate::bench::BenchMode::Both,
        format: crate::bench::BenchFormat::Table,
        explain: false,
        metrics: false,
        plot: None,
        log_scale: false,
        data: "TPC-H SF 0.1".into(),
        peers: None,
        against: vec![],
    };
    crate::bench::run(&session, &queries, &options)
}
