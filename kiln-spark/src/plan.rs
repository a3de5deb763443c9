//! Spark's physical subtree, as `TreeNode.toJSON` writes it, translated into a kiln plan
//! fragment: operators and expressions by class name with their fields, each tree flattened
//! in pre-order with `num-children` (children referred to by their index among the node's
//! children). Anything not translated here is refused with the reason, and Spark keeps it.
//!
//! The scan becomes a `FragmentInput` fed with the Parquet splits Spark assigned to the task
//! (`crate::splits`); Spark's expression ids are mapped to fresh kiln ids; the fragment's
//! output types must equal the types Spark declared for the subtree, column by column, or the
//! subtree stays Spark's.

use std::collections::HashMap;
use std::sync::Arc;

use kiln::arrow::datatypes::{DataType, TimeUnit};
use kiln::expr::{AggFunc, Attribute, BinaryOp, Expr, ExprId, ScalarFunc};
use kiln::physical::{AggregateMode, PhysicalPlan};
use kiln::types::ScalarValue;
use kiln::{KilnError, Result};
use serde_json::Value;

/// A Spark subtree translated: the fragment kiln runs and the columns its scan reads.
#[derive(Debug)]
pub struct Fragment {
    /// The kiln plan, its scan a `FragmentInput` (index 0).
    pub plan: Arc<PhysicalPlan>,
    /// The Parquet columns the scan reads, by name, in the order the input batches carry them.
    pub scan: Vec<Attribute>,
}

/// Translates `{"plan": <toJSON of the subtree>, "output": <its schema as JSON>}`.
pub fn translate(text: &str) -> Result<Fragment> {
    let doc: Value = serde_json::from_str(text).map_err(|e| unsupported(format!("the plan is not JSON: {e}")))?;
    let nodes = doc.get("plan").and_then(Value::as_array).ok_or_else(|| unsupported("no `plan` array"))?;
    let mut t = Translator { ids: HashMap::new(), scan: None };
    let (plan, used) = t.plan(nodes, 0)?;
    if used != nodes.len() {
        return Err(unsupported("trailing nodes after the plan's root"));
    }
    let scan = t.scan.ok_or_else(|| unsupported("the subtree reads no Parquet scan"))?;
    check_output(&plan, doc.get("output"))?;
    Ok(Fragment { plan, scan })
}

fn unsupported(what: impl std::fmt::Display) -> KilnError {
    KilnError::Unsupported(format!("[KILN_SPARK_UNSUPPORTED] {what}"))
}

fn short_class(node: &Value) -> &str {
    let class = node.get("class").and_then(Value::as_str).unwrap_or("?");
    class.rsplit('.').next().unwrap_or(class)
}

fn num_children(node: &Value) -> usize {
    node.get("num-children").and_then(Value::as_u64).unwrap_or(0) as usize
}

/// The index past the flattened subtree starting at `at`.
fn skip(nodes: &[Value], at: usize) -> Result<usize> {
    let node = nodes.get(at).ok_or_else(|| unsupported("a child is missing from the flattened tree"))?;
    let mut next = at + 1;
    for _ in 0..num_children(node) {
        next = skip(nodes, next)?;
    }
    Ok(next)
}

/// The start indices of the node at `at`'s children.
fn children_at(nodes: &[Value], at: usize) -> Result<Vec<usize>> {
    let node = &nodes[at];
    let mut out = Vec::new();
    let mut next = at + 1;
    for _ in 0..num_children(node) {
        out.push(next);
        next = skip(nodes, next)?;
    }
    Ok(out)
}

/// The child the field `name` of the node at `at` points to (its index among the children).
fn child_field(nodes: &[Value], at: usize, name: &str) -> Result<usize> {
    let index = nodes[at].get(name).and_then(Value::as_u64).ok_or_else(|| unsupported(format!("{} without `{name}`", short_class(&nodes[at]))))?;
    children_at(nodes, at)?.get(index as usize).copied().ok_or_else(|| unsupported(format!("{}'s `{name}` names no child", short_class(&nodes[at]))))
}

/// The Arrow type kiln uses for a Spark type as its JSON names it.
pub fn spark_type(name: &str) -> Result<DataType> {
    Ok(match name {
        "boolean" => DataType::Boolean,
        "byte" => DataType::Int8,
        "short" => DataType::Int16,
        "integer" => DataType::Int32,
        "long" => DataType::Int64,
        "float" => DataType::Float32,
        "double" => DataType::Float64,
        "string" => DataType::Utf8,
        "binary" => DataType::Binary,
        "date" => DataType::Date32,
        "timestamp" => DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into())),
        "timestamp_ntz" => DataType::Timestamp(TimeUnit::Microsecond, None),
        other if other.starts_with("decimal(") => kiln::sql::parse_data_type(other)?,
        other => return Err(unsupported(format!("the Spark type {other}"))),
    })
}

struct Translator {
    /// Spark's expression ids to the kiln attributes standing for them.
    ids: HashMap<u64, Attribute>,
    /// The scan's columns, once translated.
    scan: Option<Vec<Attribute>>,
}

impl Translator {
    /// The plan node at `at`; returns it and the index past its subtree.
    fn plan(&mut self, nodes: &[Value], at: usize) -> Result<(Arc<PhysicalPlan>, usize)> {
        let node = nodes.get(at).ok_or_else(|| unsupported("an empty plan"))?;
        let end = skip(nodes, at)?;
        let class = short_class(node);
        // The node's own reason first, so a fallback names the operator that stays Spark's.
        if !matches!(class, "FileSourceScanExec" | "FilterExec" | "ProjectExec" | "HashAggregateExec") {
            return Err(unsupported(format!("the operator {class}")));
        }
        if class == "HashAggregateExec" {
            for tree in list(field(node, "aggregateExpressions")?)? {
                let mode = tree.pointer("/0/mode/object").and_then(Value::as_str).unwrap_or("?");
                if !mode.ends_with("Partial$") {
                    return Err(unsupported(format!("an aggregate in mode {}", mode.rsplit('.').next().unwrap_or(mode).trim_end_matches('$'))));
                }
            }
        }
        let plan = match class {
            "FileSourceScanExec" => self.scan(node)?,
            "FilterExec" => {
                let (child, _) = self.plan(nodes, child_field(nodes, at, "child")?)?;
                let condition = self.expr(field(node, "condition")?)?;
                PhysicalPlan::Filter { condition, child }
            }
            "ProjectExec" => {
                let (child, _) = self.plan(nodes, child_field(nodes, at, "child")?)?;
                let list = self.named_list(field(node, "projectList")?)?;
                PhysicalPlan::Project { list, child }
            }
            "HashAggregateExec" => {
                let (child, _) = self.plan(nodes, child_field(nodes, at, "child")?)?;
                self.partial_aggregate(node, child)?
            }
            other => return Err(unsupported(format!("the operator {other}"))),
        };
        Ok((Arc::new(plan), end))
    }

    fn scan(&mut self, node: &Value) -> Result<PhysicalPlan> {
        if self.scan.is_some() {
            return Err(unsupported("a subtree with two scans"));
        }
        for f in ["partitionFilters", "optionalBucketSet", "optionalNumCoalescedBuckets"] {
            if node.get(f).is_some_and(|v| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty())) {
                return Err(unsupported(format!("a scan with {f}")));
            }
        }
        let output = field(node, "output")?.as_array().ok_or_else(|| unsupported("a scan's output is not a list"))?;
        let mut columns = Vec::new();
        for a in output {
            let attr = self.new_attribute(single(a)?)?;
            columns.push(attr);
        }
        self.scan = Some(columns.clone());
        Ok(PhysicalPlan::FragmentInput { index: 0, output: columns })
    }

    fn partial_aggregate(&mut self, node: &Value, child: Arc<PhysicalPlan>) -> Result<PhysicalPlan> {
        let grouping = self.named_list(field(node, "groupingExpressions")?)?;
        let mut aggregates = Vec::new();
        for tree in list(field(node, "aggregateExpressions")?)? {
            let agg = tree.as_array().ok_or_else(|| unsupported("an aggregate expression is not a tree"))?;
            let top = agg.first().ok_or_else(|| unsupported("an empty aggregate expression"))?;
            if short_class(top) != "AggregateExpression" {
                return Err(unsupported(format!("the aggregate {}", short_class(top))));
            }
            if top.get("isDistinct").and_then(Value::as_bool) != Some(false) {
                return Err(unsupported("a DISTINCT aggregate"));
            }
            let func_at = child_field(agg, 0, "aggregateFunction")?;
            let func_node = &agg[func_at];
            let func = match short_class(func_node) {
                "Sum" => AggFunc::Sum,
                "Average" => AggFunc::Avg,
                "Count" => AggFunc::Count,
                "Min" => AggFunc::Min,
                "Max" => AggFunc::Max,
                other => return Err(unsupported(format!("the aggregate function {other}"))),
            };
            let args = children_at(agg, func_at)?.into_iter().map(|c| self.expr_at(agg, c)).collect::<Result<Vec<_>>>()?;
            let call = Expr::Aggregate { func, args: args.clone(), distinct: false };
            aggregates.push(kiln::physical::aggregate_expr(func, args, false, &call)?);
        }
        Ok(PhysicalPlan::HashAggregate { mode: AggregateMode::Partial, grouping, aggregates, result: vec![], child })
    }

    /// A fresh kiln attribute for a Spark `AttributeReference`, recorded under its id.
    fn new_attribute(&mut self, node: &Value) -> Result<Attribute> {
        if short_class(node) != "AttributeReference" {
            return Err(unsupported(format!("{} where a column was expected", short_class(node))));
        }
        let name = node.get("name").and_then(Value::as_str).ok_or_else(|| unsupported("a column without a name"))?;
        let data_type = spark_type(node.get("dataType").and_then(Value::as_str).unwrap_or("?"))?;
        let nullable = node.get("nullable").and_then(Value::as_bool).unwrap_or(true);
        let attr = Attribute { name: name.to_string(), id: ExprId::next(), data_type, nullable, qualifier: vec![] };
        self.ids.insert(spark_id(node)?, attr.clone());
        Ok(attr)
    }

    /// A list of named expressions (a projection, grouping keys).
    fn named_list(&mut self, value: &Value) -> Result<Vec<Expr>> {
        list(value)?.iter().map(|tree| self.expr(tree)).collect()
    }

    /// One flattened expression tree.
    fn expr(&mut self, tree: &Value) -> Result<Expr> {
        let nodes = tree.as_array().ok_or_else(|| unsupported("an expression is not a flattened tree"))?;
        if nodes.is_empty() {
            return Err(unsupported("an empty expression"));
        }
        let e = self.expr_at(nodes, 0)?;
        if skip(nodes, 0)? != nodes.len() {
            return Err(unsupported("trailing nodes after an expression"));
        }
        Ok(e)
    }

    fn expr_at(&mut self, nodes: &[Value], at: usize) -> Result<Expr> {
        let node = &nodes[at];
        let class = short_class(node);
        let child = |t: &mut Self, name: &str| -> Result<Box<Expr>> { Ok(Box::new(t.expr_at(nodes, child_field(nodes, at, name)?)?)) };
        // Arithmetic's evaluation mode is not in the JSON: the JVM side sends only ANSI plans.
        let binary = |t: &mut Self, op: BinaryOp| -> Result<Expr> { Ok(Expr::Binary { op, left: child(t, "left")?, right: child(t, "right")? }) };
        Ok(match class {
            "AttributeReference" => {
                let id = spark_id(node)?;
                let attr = self.ids.get(&id).ok_or_else(|| unsupported(format!("a reference to a column from outside the subtree ({}#{id})", node["name"])))?;
                Expr::Attribute(attr.clone())
            }
            "Alias" => {
                let inner = child(self, "child")?;
                let name = node.get("name").and_then(Value::as_str).ok_or_else(|| unsupported("an alias without a name"))?.to_string();
                let id = ExprId::next();
                let data_type = inner.data_type()?;
                let attr = Attribute { name: name.clone(), id, data_type, nullable: inner.nullable(), qualifier: vec![] };
                self.ids.insert(spark_id(node)?, attr);
                Expr::Alias { child: inner, name, id }
            }
            "Literal" => literal(node)?,
            "And" => binary(self, BinaryOp::And)?,
            "Or" => binary(self, BinaryOp::Or)?,
            "EqualTo" => binary(self, BinaryOp::Eq)?,
            "EqualNullSafe" => binary(self, BinaryOp::EqNullSafe)?,
            "LessThan" => binary(self, BinaryOp::Lt)?,
            "LessThanOrEqual" => binary(self, BinaryOp::LtEq)?,
            "GreaterThan" => binary(self, BinaryOp::Gt)?,
            "GreaterThanOrEqual" => binary(self, BinaryOp::GtEq)?,
            "Add" => binary(self, BinaryOp::Plus)?,
            "Subtract" => binary(self, BinaryOp::Minus)?,
            "Multiply" => binary(self, BinaryOp::Multiply)?,
            "Divide" => binary(self, BinaryOp::Divide)?,
            "Not" => Expr::Not(child(self, "child")?),
            "IsNull" => Expr::IsNull(child(self, "child")?),
            "IsNotNull" => Expr::IsNotNull(child(self, "child")?),
            "Cast" => {
                let mode = node.get("evalMode").and_then(|m| m.get("object")).and_then(Value::as_str).unwrap_or("ANSI$");
                if !mode.ends_with("ANSI$") {
                    return Err(unsupported(format!("a cast in mode {}", mode.rsplit('.').next().unwrap_or(mode).trim_end_matches('$'))));
                }
                let to = spark_type(node.get("dataType").and_then(Value::as_str).unwrap_or("?"))?;
                Expr::Cast { child: child(self, "child")?, to, zone: None }
            }
            "In" => {
                let value = child(self, "value")?;
                let list = self.child_list(nodes, at, "list")?;
                Expr::InList { child: value, list, negated: false }
            }
            "Like" => {
                if !node.get("escapeChar").is_none_or(Value::is_null) {
                    return Err(unsupported("LIKE with an ESCAPE character"));
                }
                let pattern = child(self, "right")?;
                if !matches!(pattern.as_ref(), Expr::Literal(ScalarValue::Utf8(_))) {
                    return Err(unsupported("LIKE with a pattern that is not a literal"));
                }
                Expr::Like { child: child(self, "left")?, pattern, negated: false }
            }
            "CaseWhen" => {
                let mut branches = Vec::new();
                for b in list(field(node, "branches")?)? {
                    let (when, then) = (b.get("_1").ok_or_else(|| unsupported("a CASE branch without a condition"))?, b.get("_2").ok_or_else(|| unsupported("a CASE branch without a value"))?);
                    branches.push((self.expr_or_child(nodes, at, when)?, self.expr_or_child(nodes, at, then)?));
                }
                let else_expr = match node.get("elseValue") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(Box::new(self.expr_or_child(nodes, at, v)?)),
                };
                Expr::CaseWhen { branches, else_expr }
            }
            other => match function_name(other) {
                Some(name) => {
                    let func = ScalarFunc::from_name(name).ok_or_else(|| unsupported(format!("the function {name}")))?;
                    let args = children_at(nodes, at)?.into_iter().map(|c| self.expr_at(nodes, c)).collect::<Result<Vec<_>>>()?;
                    Expr::Function { func, args }
                }
                None => return Err(unsupported(format!("the expression {other}"))),
            },
        })
    }

    /// A field holding a list of child indices (`In`'s `list`).
    fn child_list(&mut self, nodes: &[Value], at: usize, name: &str) -> Result<Vec<Expr>> {
        let children = children_at(nodes, at)?;
        let indices = nodes[at].get(name).and_then(Value::as_array).ok_or_else(|| unsupported(format!("{} without `{name}`", short_class(&nodes[at]))))?;
        indices
            .iter()
            .map(|i| {
                let c = i.as_u64().and_then(|i| children.get(i as usize).copied()).ok_or_else(|| unsupported(format!("`{name}` names no child")))?;
                self.expr_at(nodes, c)
            })
            .collect()
    }

    /// A field holding either a child's index or a whole flattened tree (`CaseWhen`'s branches).
    fn expr_or_child(&mut self, nodes: &[Value], at: usize, value: &Value) -> Result<Expr> {
        match value {
            Value::Number(i) => {
                let c = i.as_u64().and_then(|i| children_at(nodes, at).ok()?.get(i as usize).copied()).ok_or_else(|| unsupported("a CASE branch names no child"))?;
                self.expr_at(nodes, c)
            }
            tree => self.expr(tree),
        }
    }
}

/// The kiln function a Spark expression class is, when its children are the function's
/// arguments in order and its other fields hold nothing kiln needs.
fn function_name(class: &str) -> Option<&'static str> {
    Some(match class {
        "Upper" => "upper",
        "Lower" => "lower",
        "Substring" => "substring",
        "Length" => "length",
        "Abs" => "abs",
        "Coalesce" => "coalesce",
        "Year" => "year",
        "Month" => "month",
        "DayOfMonth" => "dayofmonth",
        "StartsWith" => "startswith",
        "EndsWith" => "endswith",
        "Contains" => "contains",
        _ => return None,
    })
}

fn field<'a>(node: &'a Value, name: &str) -> Result<&'a Value> {
    node.get(name).ok_or_else(|| unsupported(format!("{} without `{name}`", short_class(node))))
}

fn list(value: &Value) -> Result<&Vec<Value>> {
    value.as_array().ok_or_else(|| unsupported("a list field is not a list"))
}

/// The one node of a single-node expression tree (an attribute in a list).
fn single(tree: &Value) -> Result<&Value> {
    match tree.as_array().map(|a| a.as_slice()) {
        Some([one]) => Ok(one),
        _ => Err(unsupported("a column is not a single node")),
    }
}

fn spark_id(node: &Value) -> Result<u64> {
    node.pointer("/exprId/id").and_then(Value::as_u64).ok_or_else(|| unsupported(format!("{} without an exprId", short_class(node))))
}

/// A Spark `Literal`: its value as Spark prints it, read as its type.
fn literal(node: &Value) -> Result<Expr> {
    let data_type = spark_type(node.get("dataType").and_then(Value::as_str).unwrap_or("?"))?;
    let value = match node.get("value") {
        None | Some(Value::Null) => return Ok(Expr::Literal(ScalarValue::Null(data_type))),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    // Timestamps print in the session's zone and intervals in their own syntax: not read yet.
    if !matches!(data_type, DataType::Boolean | DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Float64 | DataType::Utf8 | DataType::Date32 | DataType::Decimal128(..)) {
        return Err(unsupported(format!("a literal of type {data_type}")));
    }
    if data_type == DataType::Utf8 {
        return Ok(Expr::Literal(ScalarValue::Utf8(value)));
    }
    let cast = Expr::Cast { child: Box::new(Expr::Literal(ScalarValue::Utf8(value))), to: data_type, zone: None };
    Ok(Expr::Literal(kiln::expr::eval::evaluate_scalar(&cast)?))
}

/// The fragment's output types against those Spark declared for the subtree.
fn check_output(plan: &Arc<PhysicalPlan>, declared: Option<&Value>) -> Result<()> {
    let fields = declared.and_then(|d| d.get("fields")).and_then(Value::as_array).ok_or_else(|| unsupported("no declared output schema"))?;
    let ours = plan.output();
    if ours.len() != fields.len() {
        return Err(unsupported(format!("kiln's fragment gives {} columns where Spark's gives {}", ours.len(), fields.len())));
    }
    for (a, f) in ours.iter().zip(fields) {
        let name = f.get("name").and_then(Value::as_str).unwrap_or("?");
        let spark = spark_type(f.get("type").and_then(Value::as_str).unwrap_or("?"))?;
        if a.data_type != spark {
            return Err(unsupported(format!("column {name} is {} in kiln and {spark} in Spark", a.data_type)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln::arrow::array::{Array, AsArray, Int64Array, StringArray};
    use kiln::arrow::datatypes::Int64Type;
    use kiln::arrow::record_batch::RecordBatch;
    use serde_json::json;

    const EXPR: &str = "org.apache.spark.sql.catalyst.expressions.";
    const EXEC: &str = "org.apache.spark.sql.execution.";

    fn attr(name: &str, data_type: &str, id: u64) -> Value {
        json!({"class": format!("{EXPR}AttributeReference"), "num-children": 0, "name": name, "dataType": data_type,
               "nullable": true, "metadata": {}, "exprId": {"product-class": format!("{EXPR}ExprId"), "id": id, "jvmId": "x"}, "qualifier": []})
    }

    fn lit(value: &str, data_type: &str) -> Value {
        json!({"class": format!("{EXPR}Literal"), "num-children": 0, "value": value, "dataType": data_type})
    }

    fn binary(class: &str) -> Value {
        json!({"class": format!("{EXPR}{class}"), "num-children": 2, "left": 0, "right": 1})
    }

    fn scan(columns: &[Value]) -> Value {
        json!({"class": format!("{EXEC}FileSourceScanExec"), "num-children": 0, "relation": null,
               "output": columns.iter().map(|c| json!([c])).collect::<Vec<_>>(), "partitionFilters": [], "dataFilters": []})
    }

    /// `SELECT x + 1 AS y, s FROM t WHERE x > 2` as Spark's toJSON writes it, declared output `output`.
    fn filter_project(output: Value) -> String {
        let (x, s) = (attr("x", "long", 1), attr("s", "string", 2));
        let alias = json!({"class": format!("{EXPR}Alias"), "num-children": 1, "child": 0, "name": "y", "exprId": {"id": 3}, "qualifier": []});
        let plan = json!([
            {"class": format!("{EXEC}ProjectExec"), "num-children": 1, "projectList": [[alias, binary("Add"), x, lit("1", "long")], [s]], "child": 0},
            {"class": format!("{EXEC}FilterExec"), "num-children": 1, "condition": [binary("GreaterThan"), x, lit("2", "long")], "child": 0},
            scan(&[x, s])
        ]);
        json!({"plan": plan, "output": output}).to_string()
    }

    fn schema(fields: &[(&str, &str)]) -> Value {
        json!({"type": "struct", "fields": fields.iter().map(|(n, t)| json!({"name": n, "type": t, "nullable": true, "metadata": {}})).collect::<Vec<_>>()})
    }

    #[test]
    fn a_filter_and_projection_run_as_a_fragment_over_the_scans_batches() {
        let fragment = translate(&filter_project(schema(&[("y", "long"), ("s", "string")]))).expect("translates");
        assert_eq!(fragment.scan.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["x", "s"]);
        let batch = RecordBatch::try_from_iter([
            ("x", std::sync::Arc::new(Int64Array::from(vec![Some(1), Some(3), None, Some(5)])) as _),
            ("s", std::sync::Arc::new(StringArray::from(vec!["a", "b", "c", "d"])) as _),
        ])
        .expect("batch");
        let out: Vec<RecordBatch> = kiln::Session::new()
            .execute_fragment(fragment.plan, 0, vec![Box::new(std::iter::once(Ok(batch)))])
            .expect("starts")
            .collect::<std::result::Result<_, _>>()
            .expect("runs");
        let rows: Vec<(i64, String)> = out
            .iter()
            .flat_map(|b| {
                let (y, s) = (b.column(0).as_primitive::<Int64Type>().clone(), b.column(1).as_string::<i32>().clone());
                (0..b.num_rows()).map(move |r| (y.value(r), s.value(r).to_string()))
            })
            .collect();
        assert_eq!(rows, [(4, "b".to_string()), (6, "d".to_string())]);
        assert!(out.iter().all(|b| b.column(0).null_count() == 0));
    }

    #[test]
    fn what_kiln_does_not_run_is_refused_with_the_reason() {
        let wrong_type = translate(&filter_project(schema(&[("y", "integer"), ("s", "string")]))).expect_err("int is not bigint");
        assert!(wrong_type.to_string().contains("column y is Int64 in kiln and Int32 in Spark"), "{wrong_type}");
        let too_few = translate(&filter_project(schema(&[("y", "long")]))).expect_err("two columns");
        assert!(too_few.to_string().contains("gives 2 columns where Spark's gives 1"), "{too_few}");

        let sort = json!({"plan": [{"class": format!("{EXEC}SortExec"), "num-children": 1, "child": 0}, scan(&[attr("x", "long", 1)])], "output": schema(&[("x", "long")])});
        let err = translate(&sort.to_string()).expect_err("no sort yet");
        assert!(err.to_string().contains("[KILN_SPARK_UNSUPPORTED] the operator SortExec"), "{err}");

        let outside = json!({"plan": [{"class": format!("{EXEC}FilterExec"), "num-children": 1, "condition": [json!({"class": format!("{EXPR}IsNotNull"), "num-children": 1, "child": 0}), attr("z", "long", 9)], "child": 0}, scan(&[attr("x", "long", 1)])], "output": schema(&[("x", "long")])});
        let err = translate(&outside.to_string()).expect_err("z is not the scan's");
        assert!(err.to_string().contains("a reference to a column from outside the subtree"), "{err}");

        let initcap = json!({"plan": [{"class": format!("{EXEC}FilterExec"), "num-children": 1, "condition": [json!({"class": format!("{EXPR}InitCap"), "num-children": 1, "child": 0}), attr("x", "string", 1)], "child": 0}, scan(&[attr("x", "string", 1)])], "output": schema(&[("x", "string")])});
        let err = translate(&initcap.to_string()).expect_err("no initcap");
        assert!(err.to_string().contains("the expression InitCap"), "{err}");
    }

    #[test]
    fn literals_read_as_their_spark_types() {
        let cases = [("24.00", "decimal(15,2)", ScalarValue::Decimal(2400, 15, 2)), ("1994-01-01", "date", ScalarValue::Date32(8766)), ("7", "integer", ScalarValue::Int32(7))];
        for (value, data_type, want) in cases {
            match literal(&lit(value, data_type)).expect(value) {
                Expr::Literal(got) => assert_eq!(got, want, "{value} {data_type}"),
                other => panic!("{other:?}"),
            }
        }
        assert!(literal(&lit("2024-01-01 00:00:00", "timestamp")).is_err(), "timestamps are printed in the session's zone");
    }
}
