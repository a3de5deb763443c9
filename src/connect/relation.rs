//! Spark Connect relations as kiln DataFrames, each built from the unresolved plan node SQL's
//! parser builds for the same query (or the DataFrame API's method that builds it), so a
//! relation plans as its SQL does.

use std::sync::Arc;

use arrow::array::StringArray;
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use spark_connect_proto::expression::ExprType;
use spark_connect_proto::relation::RelType;
use spark_connect_proto::{aggregate, join, read, set_operation, Relation};

use super::expression::{expression, unsupported, variant_name};
use crate::dataframe::DataFrame;
use crate::error::{KilnError, Result};
use crate::expr::{Attribute, Expr};
use crate::functions::Column;
use crate::plan::{GroupingSetsKind, JoinType, LogicalPlan, SetOperationKind};
use crate::session::Session;
use crate::sql::SqlArgs;
use crate::types::ScalarValue;

fn missing(what: &str) -> KilnError {
    KilnError::unsupported(format!("[CONNECT_INVALID_PLAN] the plan has {what} without its input"))
}

fn input<'a>(r: Option<&'a Relation>, what: &str) -> Result<&'a Relation> {
    r.ok_or_else(|| missing(what))
}

fn count(n: i32, what: &str) -> Result<usize> {
    usize::try_from(n).map_err(|_| {
        KilnError::analysis_with(
            "INVALID_LIMIT_LIKE_EXPRESSION.IS_NEGATIVE",
            format!("[INVALID_LIMIT_LIKE_EXPRESSION.IS_NEGATIVE] The {what} expression \"{n}\" is invalid. The {what} expression must be equal to or greater than 0, but got {n}."),
            &[("name", what), ("expr", &format!("\"{n}\"")), ("v", &n.to_string())],
        )
    })
}

thread_local! {
    /// The plan ids of the relations translated so far (`RelationCommon.plan_id`), in order.
    static TRANSLATED: std::cell::RefCell<Vec<i64>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn translated_count() -> usize {
    TRANSLATED.with(|t| t.borrow().len())
}

fn translated_since(start: usize, end: usize) -> Vec<i64> {
    TRANSLATED.with(|t| t.borrow().get(start..end).map(<[i64]>::to_vec).unwrap_or_default())
}

/// The DataFrame of a relation, planned by `session`.
pub fn dataframe(session: &Session, rel: &Relation) -> Result<DataFrame> {
    TRANSLATED.with(|t| t.borrow_mut().clear());
    translate(session, rel)
}

fn translate(session: &Session, rel: &Relation) -> Result<DataFrame> {
    if let Some(id) = rel.common.as_ref().and_then(|c| c.plan_id) {
        TRANSLATED.with(|t| t.borrow_mut().push(id));
    }
    // A relation the client persisted is its cache (found by the relation's encoding).
    if session.has_keyed_caches() {
        if let Some(df) = session.cached_dataframe_by_key(&prost::Message::encode_to_vec(rel))? {
            return Ok(df);
        }
    }
    let kind = rel.rel_type.as_ref().ok_or_else(|| missing("a relation"))?;
    let plan = |p: LogicalPlan| session.plan(p);
    let child = |r: Option<&Relation>, what: &str| -> Result<DataFrame> { translate(session, input(r, what)?) };
    let parsed = |df: &DataFrame| df.plans().parsed.clone();
    match kind {
        RelType::Sql(s) => sql(session, s),
        RelType::Read(r) => match r.read_type.as_ref().ok_or_else(|| missing("a Read"))? {
            read::ReadType::NamedTable(t) => session.table(&t.unparsed_identifier),
            read::ReadType::DataSource(d) => data_source(session, d),
        },
        RelType::Project(p) => {
            let list = p.expressions.iter().map(expression).collect::<Result<Vec<_>>>()?;
            match p.input.as_deref() {
                Some(i) => plan(LogicalPlan::Project { list, child: parsed(&translate(session, i)?) }),
                // `spark.range(1).select(...)` has an input; a select of literals alone has none.
                None => plan(LogicalPlan::Project { list, child: Arc::new(LogicalPlan::OneRowRelation) }),
            }
        }
        RelType::Filter(f) => {
            let condition = expression(f.condition.as_ref().ok_or_else(|| missing("a Filter's condition"))?)?;
            let df = child(f.input.as_deref(), "a Filter")?;
            plan(LogicalPlan::Filter { condition, child: parsed(&df) })
        }
        RelType::Join(j) => {
            let start = translated_count();
            let left = child(j.left.as_deref(), "a Join")?;
            let middle = translated_count();
            let right = child(j.right.as_deref(), "a Join")?;
            let end = translated_count();
            let join_type = match join::JoinType::try_from(j.join_type) {
                Ok(join::JoinType::Inner | join::JoinType::Unspecified) => JoinType::Inner,
                Ok(join::JoinType::FullOuter) => JoinType::FullOuter,
                Ok(join::JoinType::LeftOuter) => JoinType::LeftOuter,
                Ok(join::JoinType::RightOuter) => JoinType::RightOuter,
                Ok(join::JoinType::LeftAnti) => JoinType::LeftAnti,
                Ok(join::JoinType::LeftSemi) => JoinType::LeftSemi,
                Ok(join::JoinType::Cross) => JoinType::Cross,
                Err(_) => return Err(unsupported(format!("join type {}", j.join_type))),
            };
            // `df1.id == df2.id`: each side's column by the plan id of its DataFrame, as Spark
            // resolves it, over the sides' analyzed plans (whose column ids these are); not for a
            // DataFrame joined with itself, whose sides share their ids.
            let (left_out, right_out) = (left.analyzed_plan().output(), right.analyzed_plan().output());
            let shared = left_out.iter().any(|a| right_out.iter().any(|b| a.id == b.id));
            let sides = if shared { vec![] } else { vec![(translated_since(start, middle), left_out), (translated_since(middle, end), right_out)] };
            let (condition, columns) = super::expression::with_plan_columns(super::expression::PlanColumns { sides, used: false }, || j.join_condition.as_ref().map(expression).transpose());
            let condition = condition?;
            let (l, r) = if columns.used { (left.analyzed_plan().clone(), right.analyzed_plan().clone()) } else { (parsed(&left), parsed(&right)) };
            plan(LogicalPlan::Join { left: l, right: r, join_type, condition, using: j.using_columns.clone(), hint: Default::default() })
        }
        RelType::SetOp(s) => {
            let left = child(s.left_input.as_deref(), "a SetOperation")?;
            let right = child(s.right_input.as_deref(), "a SetOperation")?;
            let all = s.is_all.unwrap_or(false);
            if s.allow_missing_columns.unwrap_or(false) {
                return Err(unsupported("unionByName(allowMissingColumns=True)"));
            }
            match set_operation::SetOpType::try_from(s.set_op_type) {
                Ok(set_operation::SetOpType::Union) => {
                    let union = if s.by_name.unwrap_or(false) { left.union_by_name(&right)? } else { left.union(&right)? };
                    if all {
                        Ok(union)
                    } else {
                        union.distinct()
                    }
                }
                Ok(set_operation::SetOpType::Intersect) => plan(LogicalPlan::SetOperation { kind: SetOperationKind::Intersect, all, left: parsed(&left), right: parsed(&right) }),
                Ok(set_operation::SetOpType::Except) => plan(LogicalPlan::SetOperation { kind: SetOperationKind::Except, all, left: parsed(&left), right: parsed(&right) }),
                _ => Err(unsupported(format!("set operation type {}", s.set_op_type))),
            }
        }
        RelType::Sort(s) => {
            let order = s.order.iter().map(super::expression::sort_order).collect::<Result<Vec<_>>>()?;
            let df = child(s.input.as_deref(), "a Sort")?;
            plan(LogicalPlan::Sort { order, global: s.is_global.unwrap_or(true), child: parsed(&df) })
        }
        RelType::Limit(l) => child(l.input.as_deref(), "a Limit")?.limit(count(l.limit, "limit")?),
        RelType::Offset(o) => child(o.input.as_deref(), "an Offset")?.offset(count(o.offset, "offset")?),
        RelType::Aggregate(a) => aggregate(session, a),
        RelType::Deduplicate(d) => {
            let df = child(d.input.as_deref(), "a Deduplicate")?;
            if d.within_watermark.unwrap_or(false) {
                return Err(unsupported("dropDuplicatesWithinWatermark"));
            }
            if d.all_columns_as_keys.unwrap_or(false) || d.column_names.is_empty() {
                df.distinct()
            } else {
                let cols: Vec<&str> = d.column_names.iter().map(String::as_str).collect();
                df.drop_duplicates(&cols)
            }
        }
        RelType::Range(r) => {
            if r.step == 0 {
                return Err(KilnError::exec("[FAILED_FUNCTION_CALL] range: the step must not be 0"));
            }
            let splits = r.num_partitions.map(|n| usize::try_from(n).map_err(|_| KilnError::exec(format!("range: {n} partitions")))).transpose()?;
            let range = crate::datasource::range::RangeSpec { start: r.start.unwrap_or(0), end: r.end, step: r.step, splits };
            plan(LogicalPlan::Range { output: vec![Attribute::new("id".to_string(), DataType::Int64, false)], range })
        }
        RelType::SubqueryAlias(s) => {
            if !s.qualifier.is_empty() {
                return Err(unsupported("SubqueryAlias with a qualifier"));
            }
            child(s.input.as_deref(), "a SubqueryAlias")?.alias(&s.alias)
        }
        RelType::LocalRelation(l) => local_relation(session, l.data.as_deref(), l.schema.as_deref()),
        RelType::ToDf(t) => {
            let df = child(t.input.as_deref(), "a ToDF")?;
            let output = df.analyzed_plan().output();
            if output.len() != t.column_names.len() {
                return Err(KilnError::analysis_with(
                    "INVALID_COLUMN_NAMES_FOR_TODF",
                    format!("toDF: the number of new column names ({}) does not match the number of columns ({}).", t.column_names.len(), output.len()),
                    &[],
                ));
            }
            let list = output.iter().zip(&t.column_names).map(|(a, name)| reference(a).alias(name.clone())).collect();
            plan(LogicalPlan::Project { list, child: parsed(&df) })
        }
        RelType::WithColumnsRenamed(w) => {
            let mut df = child(w.input.as_deref(), "a WithColumnsRenamed")?;
            let mut renames: Vec<(&str, &str)> = w.renames.iter().map(|r| (r.col_name.as_str(), r.new_col_name.as_str())).collect();
            let mut legacy: Vec<(&String, &String)> = w.rename_columns_map.iter().collect();
            legacy.sort();
            renames.extend(legacy.into_iter().map(|(a, b)| (a.as_str(), b.as_str())));
            for (existing, new) in renames {
                df = df.with_column_renamed(existing, new)?;
            }
            Ok(df)
        }
        RelType::WithColumns(w) => {
            let mut columns = vec![];
            for alias in &w.aliases {
                let [name] = alias.name.as_slice() else {
                    return Err(unsupported("withColumns with a multi-part alias"));
                };
                let value = expression(alias.expr.as_deref().ok_or_else(|| missing("a withColumns alias"))?)?;
                columns.push((name.as_str(), Column::from_expr(value)));
            }
            child(w.input.as_deref(), "a WithColumns")?.with_columns(columns)
        }
        RelType::Drop(d) => {
            let df = child(d.input.as_deref(), "a Drop")?;
            let mut names: Vec<String> = d.column_names.clone();
            for c in &d.columns {
                match &c.expr_type {
                    Some(ExprType::UnresolvedAttribute(a)) => names.push(super::expression::name_parts(&a.unparsed_identifier)?.pop().unwrap_or_default()),
                    _ => return Err(unsupported("drop of a column that is not a column name")),
                }
            }
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            df.drop(&names)
        }
        RelType::ShowString(s) => {
            if s.vertical {
                return Err(unsupported("show(vertical=True)"));
            }
            let df = child(s.input.as_deref(), "a ShowString")?;
            let text = df.show_string(count(s.num_rows, "show")?, count(s.truncate, "truncate")?)?;
            one_string(session, "show_string", text)
        }
        RelType::Hint(h) => {
            if !h.parameters.is_empty() {
                return Err(unsupported("a hint with parameters"));
            }
            child(h.input.as_deref(), "a Hint")?.hint(&h.name)
        }
        RelType::Catalog(c) => catalog(session, c),
        other => Err(unsupported(format!("relation {}", variant_name(&format!("{other:?}"))))),
    }
}

/// `spark.catalog`'s cache calls; the others are refused by name.
fn catalog(session: &Session, c: &spark_connect_proto::Catalog) -> Result<DataFrame> {
    use spark_connect_proto::catalog::CatType;
    match c.cat_type.as_ref().ok_or_else(|| missing("a Catalog call"))? {
        CatType::IsCached(t) => {
            let cached = session.is_cached(&t.table_name)?;
            let schema = Arc::new(Schema::new(vec![Field::new("value", DataType::Boolean, false)]));
            let batch = RecordBatch::try_new(schema, vec![Arc::new(arrow::array::BooleanArray::from(vec![cached]))])?;
            session.create_dataframe(vec![batch])
        }
        CatType::CacheTable(t) => {
            let level = t.storage_level.as_ref().map(super::types::storage_level).unwrap_or(crate::catalog::cached::StorageLevel::MEMORY_AND_DISK);
            session.cache_table_with(&t.table_name, level)?;
            session.empty_result()
        }
        CatType::UncacheTable(t) => {
            session.uncache_table(&t.table_name, false)?;
            session.empty_result()
        }
        CatType::ClearCache(_) => {
            session.clear_cache()?;
            session.empty_result()
        }
        other => Err(unsupported(format!("spark.catalog call {}", variant_name(&format!("{other:?}"))))),
    }
}

/// A reference to an output column, qualified when it has a qualifier.
fn reference(a: &Attribute) -> Expr {
    Expr::UnresolvedAttribute([a.qualifier.clone(), vec![a.name.clone()]].concat())
}

/// A one-row, one-column string result (`show_string`).
fn one_string(session: &Session, name: &str, text: String) -> Result<DataFrame> {
    let schema = Arc::new(Schema::new(vec![Field::new(name, DataType::Utf8, false)]));
    let batch = RecordBatch::try_new(schema, vec![Arc::new(StringArray::from(vec![text]))])?;
    session.create_dataframe(vec![batch])
}

fn scalar(e: Expr, what: &str) -> Result<ScalarValue> {
    match e {
        Expr::Literal(v) => Ok(v),
        other => Err(unsupported(format!("a SQL parameter `{what}` that is not a literal ({other})"))),
    }
}

/// The arguments of `spark.sql(query, args)`, named or positional (older clients send the
/// deprecated literal fields).
#[allow(deprecated)]
pub fn sql_args(s: &spark_connect_proto::Sql) -> Result<Option<SqlArgs>> {
    let mut named = vec![];
    for (k, v) in &s.named_arguments {
        named.push((k.clone(), scalar(expression(v)?, k)?));
    }
    for (k, v) in &s.args {
        named.push((k.clone(), scalar(super::expression::literal(v)?, k)?));
    }
    let mut positional = vec![];
    for (i, v) in s.pos_arguments.iter().enumerate() {
        positional.push(scalar(expression(v)?, &i.to_string())?);
    }
    for (i, v) in s.pos_args.iter().enumerate() {
        positional.push(scalar(super::expression::literal(v)?, &i.to_string())?);
    }
    Ok(match (named.is_empty(), positional.is_empty()) {
        (true, true) => None,
        (false, true) => Some(SqlArgs::Named(named)),
        (true, false) => Some(SqlArgs::Positional(positional)),
        (false, false) => {
            return Err(KilnError::analysis("INVALID_QUERY_MIXED_QUERY_PARAMETERS", "[INVALID_QUERY_MIXED_QUERY_PARAMETERS] Parameterized query must either use positional, or named parameters, but not both."))
        }
    })
}

fn sql(session: &Session, s: &spark_connect_proto::Sql) -> Result<DataFrame> {
    match sql_args(s)? {
        None => session.sql(&s.query),
        Some(args) => session.sql_with_args(&s.query, args),
    }
}

fn data_source(session: &Session, d: &read::DataSource) -> Result<DataFrame> {
    let format = d.format.as_deref().unwrap_or("parquet").to_ascii_lowercase();
    if d.schema.as_deref().is_some_and(|s| !s.is_empty()) {
        return Err(unsupported(format!("reading {format} with a user-given schema")));
    }
    if !d.predicates.is_empty() {
        return Err(unsupported("a data source with predicates (JDBC)"));
    }
    let [path] = d.paths.as_slice() else {
        return Err(unsupported(format!("reading {} paths at once", d.paths.len())));
    };
    let mut options: Vec<(&str, &str)> = d.options.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    options.sort();
    match format.as_str() {
        "parquet" => session.read_parquet(path),
        "csv" => session.read_csv(path, &options),
        "json" => session.read_json(path, &options),
        other => Err(unsupported(format!("the data source format `{other}`"))),
    }
}

/// `createDataFrame`'s rows: an Arrow IPC stream.
fn local_relation(session: &Session, data: Option<&[u8]>, schema: Option<&str>) -> Result<DataFrame> {
    let Some(data) = data else {
        return Err(unsupported(format!("a LocalRelation without data (schema {})", schema.unwrap_or("none"))));
    };
    let reader = arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(data), None)?;
    let arrow_schema = reader.schema();
    if arrow_schema.fields().is_empty() {
        // A command's empty result (CREATE VIEW): no columns, no rows.
        return session.plan(LogicalPlan::LocalRelation { output: vec![], data: vec![] });
    }
    let mut batches = reader.collect::<std::result::Result<Vec<_>, _>>()?;
    if batches.is_empty() {
        batches.push(RecordBatch::new_empty(arrow_schema));
    }
    session.create_dataframe(batches)
}

fn aggregate(session: &Session, a: &spark_connect_proto::Aggregate) -> Result<DataFrame> {
    let df = translate(session, input(a.input.as_deref(), "an Aggregate")?)?;
    let grouping = a.grouping_expressions.iter().map(expression).collect::<Result<Vec<_>>>()?;
    let measures = a.aggregate_expressions.iter().map(expression).collect::<Result<Vec<_>>>()?;
    let aggregates = [grouping.clone(), measures].concat();
    let child = df.plans().parsed.clone();
    let sets = |kind: GroupingSetsKind, elements: Vec<Vec<usize>>, exprs: Vec<Expr>| LogicalPlan::GroupingSets { kind, elements, exprs, aggregates: aggregates.clone(), child: child.clone() };
    let each = (0..grouping.len()).map(|i| vec![i]).collect::<Vec<_>>();
    let plan = match aggregate::GroupType::try_from(a.group_type) {
        Ok(aggregate::GroupType::Groupby) => LogicalPlan::Aggregate { grouping, aggregates: aggregates.clone(), child: child.clone() },
        Ok(aggregate::GroupType::Rollup) => sets(GroupingSetsKind::Rollup, each, grouping),
        Ok(aggregate::GroupType::Cube) => sets(GroupingSetsKind::Cube, each, grouping),
        Ok(aggregate::GroupType::GroupingSets) => {
            let mut exprs: Vec<Expr> = grouping;
            let mut elements = vec![];
            for set in &a.grouping_sets {
                let mut element = vec![];
                for e in &set.grouping_set {
                    let e = expression(e)?;
                    let at = match exprs.iter().position(|x| *x == e) {
                        Some(at) => at,
                        None => {
                            exprs.push(e);
                            exprs.len() - 1
                        }
                    };
                    element.push(at);
                }
                elements.push(element);
            }
            sets(GroupingSetsKind::GroupingSets, elements, exprs)
        }
        Ok(aggregate::GroupType::Pivot) => return Err(unsupported("relation Aggregate with pivot")),
        _ => return Err(unsupported(format!("aggregate group type {}", a.group_type))),
    };
    session.plan(plan)
}

#[cfg(test)]
mod tests {
    //! Each relation kind plans to the optimized plan of the SQL that says the same.

    use super::*;
    use spark_connect_proto::expression::{self as pe, literal::LiteralType};
    use spark_connect_proto::{Expression, Sql};

    fn rel(kind: RelType) -> Relation {
        Relation { common: None, rel_type: Some(kind) }
    }
    fn boxed(r: Relation) -> Option<Box<Relation>> {
        Some(Box::new(r))
    }
    fn expr(kind: ExprType) -> Expression {
        Expression { common: None, expr_type: Some(kind) }
    }
    fn col(name: &str) -> Expression {
        expr(ExprType::UnresolvedAttribute(pe::UnresolvedAttribute { unparsed_identifier: name.into(), plan_id: None, is_metadata_column: None }))
    }
    fn int(v: i32) -> Expression {
        expr(ExprType::Literal(pe::Literal { literal_type: Some(LiteralType::Integer(v)), ..Default::default() }))
    }
    fn call(name: &str, args: Vec<Expression>) -> Expression {
        expr(ExprType::UnresolvedFunction(pe::UnresolvedFunction { function_name: name.into(), arguments: args, ..Default::default() }))
    }
    fn alias(e: Expression, name: &str) -> Expression {
        expr(ExprType::Alias(Box::new(pe::Alias { expr: Some(Box::new(e)), name: vec![name.into()], metadata: None })))
    }
    fn sort(e: Expression, descending: bool) -> pe::SortOrder {
        let direction = if descending { pe::sort_order::SortDirection::Descending } else { pe::sort_order::SortDirection::Ascending };
        pe::SortOrder { child: Some(Box::new(e)), direction: direction as i32, null_ordering: 0 }
    }
    fn table(name: &str) -> Relation {
        rel(RelType::Read(spark_connect_proto::Read {
            read_type: Some(read::ReadType::NamedTable(read::NamedTable { unparsed_identifier: name.into(), options: Default::default() })),
            is_streaming: false,
        }))
    }

    fn session() -> Session {
        let s = Session::new();
        s.sql("CREATE TEMP VIEW t AS SELECT * FROM VALUES (1, 'a', 2.0D), (2, 'b', 3.5D), (2, 'b', NULL) AS t(k, v, x)").unwrap();
        s.sql("CREATE TEMP VIEW u AS SELECT * FROM VALUES (1, 10), (3, 30) AS u(k, w)").unwrap();
        s
    }

    /// The optimized plan's tree with expression ids left out (each planning numbers afresh).
    fn optimized(df: &DataFrame) -> String {
        let ids = regex::Regex::new(r"#\d+L?").unwrap();
        ids.replace_all(&crate::plan::tree_string(df.optimized_plan()), "#").into_owned()
    }

    fn assert_same_plan(relation: Relation, sql: &str) {
        let s = session();
        let connect = dataframe(&s, &relation).unwrap_or_else(|e| panic!("{sql}: {e}"));
        let expected = s.sql(sql).unwrap();
        assert_eq!(optimized(&connect), optimized(&expected), "relation planned unlike `{sql}`");
        assert_eq!(connect.collect().unwrap(), expected.collect().unwrap(), "{sql}");
    }

    #[test]
    fn sql_and_read() {
        assert_same_plan(rel(RelType::Sql(Sql { query: "SELECT k FROM t WHERE x > 2".into(), ..Default::default() })), "SELECT k FROM t WHERE x > 2");
        assert_same_plan(table("t"), "SELECT * FROM t");
    }

    #[test]
    fn project_filter_sort_limit() {
        let project = rel(RelType::Project(Box::new(spark_connect_proto::Project { input: boxed(table("t")), expressions: vec![col("k"), alias(call("+", vec![col("k"), int(1)]), "k1")] })));
        assert_same_plan(project, "SELECT k, k + 1 AS k1 FROM t");
        let filter = rel(RelType::Filter(Box::new(spark_connect_proto::Filter { input: boxed(table("t")), condition: Some(call(">", vec![col("k"), int(1)])) })));
        assert_same_plan(filter, "SELECT * FROM t WHERE k > 1");
        let sorted = rel(RelType::Sort(Box::new(spark_connect_proto::Sort { input: boxed(table("t")), order: vec![sort(col("k"), true), sort(col("x"), false)], is_global: Some(true) })));
        assert_same_plan(sorted.clone(), "SELECT * FROM t ORDER BY k DESC, x ASC");
        let limit = rel(RelType::Limit(Box::new(spark_connect_proto::Limit { input: boxed(sorted), limit: 2 })));
        assert_same_plan(limit, "SELECT * FROM t ORDER BY k DESC, x ASC LIMIT 2");
    }

    #[test]
    fn join_and_set_operations() {
        let using = rel(RelType::Join(Box::new(spark_connect_proto::Join {
            left: boxed(table("t")),
            right: boxed(table("u")),
            join_type: join::JoinType::LeftOuter as i32,
            using_columns: vec!["k".into()],
            ..Default::default()
        })));
        assert_same_plan(using, "SELECT * FROM t LEFT JOIN u USING (k)");
        let union = |op: set_operation::SetOpType, all: bool| {
            rel(RelType::SetOp(Box::new(spark_connect_proto::SetOperation {
                left_input: boxed(table("t")),
                right_input: boxed(table("t")),
                set_op_type: op as i32,
                is_all: Some(all),
                ..Default::default()
            })))
        };
        assert_same_plan(union(set_operation::SetOpType::Union, true), "SELECT * FROM t UNION ALL SELECT * FROM t");
        assert_same_plan(union(set_operation::SetOpType::Union, false), "SELECT * FROM t UNION SELECT * FROM t");
        assert_same_plan(union(set_operation::SetOpType::Except, false), "SELECT * FROM t EXCEPT SELECT * FROM t");
        assert_same_plan(union(set_operation::SetOpType::Intersect, true), "SELECT * FROM t INTERSECT ALL SELECT * FROM t");
    }

    #[test]
    fn aggregates_and_distinct() {
        let agg = |group_type: aggregate::GroupType| {
            rel(RelType::Aggregate(Box::new(spark_connect_proto::Aggregate {
                input: boxed(table("t")),
                group_type: group_type as i32,
                grouping_expressions: vec![col("v")],
                aggregate_expressions: vec![alias(call("sum", vec![col("k")]), "s")],
                ..Default::default()
            })))
        };
        assert_same_plan(agg(aggregate::GroupType::Groupby), "SELECT v, sum(k) AS s FROM t GROUP BY v");
        assert_same_plan(agg(aggregate::GroupType::Rollup), "SELECT v, sum(k) AS s FROM t GROUP BY ROLLUP(v)");
        let distinct = rel(RelType::Deduplicate(Box::new(spark_connect_proto::Deduplicate { input: boxed(table("t")), all_columns_as_keys: Some(true), ..Default::default() })));
        assert_same_plan(distinct, "SELECT DISTINCT * FROM t");
    }

    #[test]
    fn range_alias_and_renames() {
        assert_same_plan(rel(RelType::Range(spark_connect_proto::Range { start: Some(1), end: 10, step: 3, num_partitions: None })), "SELECT * FROM range(1, 10, 3)");
        let aliased = rel(RelType::SubqueryAlias(Box::new(spark_connect_proto::SubqueryAlias { input: boxed(table("t")), alias: "s".into(), qualifier: vec![] })));
        let project = rel(RelType::Project(Box::new(spark_connect_proto::Project { input: boxed(aliased), expressions: vec![col("s.k")] })));
        assert_same_plan(project, "SELECT s.k FROM t AS s");
        let to_df = rel(RelType::ToDf(Box::new(spark_connect_proto::ToDf { input: boxed(table("u")), column_names: vec!["a".into(), "b".into()] })));
        assert_same_plan(to_df, "SELECT k AS a, w AS b FROM u");
        let with_columns = rel(RelType::WithColumns(Box::new(spark_connect_proto::WithColumns {
            input: boxed(table("u")),
            aliases: vec![pe::Alias { expr: Some(Box::new(call("*", vec![col("w"), int(2)]))), name: vec!["w2".into()], metadata: None }],
        })));
        assert_same_plan(with_columns, "SELECT *, w * 2 AS w2 FROM u");
    }

    #[test]
    fn join_condition_by_plan_ids() {
        let with_id = |mut r: Relation, id: i64| {
            r.common = Some(spark_connect_proto::RelationCommon { plan_id: Some(id), ..Default::default() });
            r
        };
        let column_of = |name: &str, id: i64| {
            expr(ExprType::UnresolvedAttribute(pe::UnresolvedAttribute { unparsed_identifier: name.into(), plan_id: Some(id), is_metadata_column: None }))
        };
        // Both sides have `k`: by name alone the condition would be ambiguous.
        let join = rel(RelType::Join(Box::new(spark_connect_proto::Join {
            left: boxed(with_id(table("t"), 1)),
            right: boxed(with_id(table("u"), 2)),
            join_condition: Some(call("==", vec![column_of("k", 1), column_of("k", 2)])),
            join_type: join::JoinType::Inner as i32,
            ..Default::default()
        })));
        assert_same_plan(join, "SELECT * FROM t JOIN u ON t.k = u.k");
    }

    #[test]
    fn unsupported_relations_are_named() {
        let tail = rel(RelType::Tail(Box::new(spark_connect_proto::Tail { input: boxed(table("t")), limit: 1 })));
        let err = dataframe(&session(), &tail).unwrap_err().to_string();
        assert!(err.contains("UNSUPPORTED_FEATURE") && err.contains("Tail"), "{err}");
    }
}
