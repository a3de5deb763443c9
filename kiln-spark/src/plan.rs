//! Spark's physical subtree, as `TreeNode.toJSON` writes it, translated into a kiln plan
//! fragment: operators and expressions by class name with their fields, each tree flattened
//! in pre-order with `num-children` (children referred to by their index among the node's
//! children). Anything not translated here is refused with the reason, and Spark keeps it.
//!
//! The scan becomes a `FragmentInput` fed with the Parquet splits Spark assigned to the task
//! (`crate::splits`). What Spark computes below the subtree — its broadcasts and shuffles —
//! arrives as placeholders (`LocalTableScanExec` leaves, numbered in the order the tree lists
//! them, with the kind of each in the request's `inputs`) and becomes `FragmentInput`s fed with
//! the rows Spark hands over. Spark's expression ids are mapped to fresh kiln ids; the
//! fragment's output types must equal the types Spark declared for the subtree, column by
//! column, or the subtree stays Spark's.

use std::collections::HashMap;
use std::sync::Arc;

use kiln::arrow::datatypes::{DataType, TimeUnit};
use kiln::expr::{AggFunc, Attribute, BinaryOp, Expr, ExprId, ScalarFunc, SortOrder};
use kiln::physical::{AggregateExpr, AggregateMode, BuildSide, HashJoinKind, PhysicalPlan};
use kiln::plan::JoinType;
use kiln::types::ScalarValue;
use kiln::{KilnError, Result};
use serde_json::Value;

/// A Spark subtree translated: the fragment kiln runs and what its inputs carry.
#[derive(Debug)]
pub struct Fragment {
    /// The kiln plan: input `i` < `inputs.len()` is Spark's `i`-th placeholder, the scan's is
    /// `inputs.len()`.
    pub plan: Arc<PhysicalPlan>,
    /// The Parquet columns the scan reads, by name, in the order the input batches carry them.
    pub scan: Option<Vec<Attribute>>,
    /// The columns of each input Spark hands over, in placeholder order.
    pub inputs: Vec<Vec<Attribute>>,
}

/// What a placeholder stands for (the request's `inputs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InputKind {
    /// A broadcast's rows: only a broadcast hash join's build side reads one.
    Broadcast,
    /// A shuffle's rows for this task's partition.
    Rows,
}

/// Translates `{"plan": <toJSON of the subtree>, "output": <its schema as JSON>, "inputs":
/// ["broadcast" | "rows", ...]}`.
pub fn translate(text: &str) -> Result<Fragment> {
    let doc: Value = serde_json::from_str(text).map_err(|e| unsupported(format!("the plan is not JSON: {e}")))?;
    let nodes = doc.get("plan").and_then(Value::as_array).ok_or_else(|| unsupported("no `plan` array"))?;
    let mut kinds = Vec::new();
    for k in doc.get("inputs").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
        kinds.push(match k.as_str() {
            Some("broadcast") => InputKind::Broadcast,
            Some("rows") => InputKind::Rows,
            other => return Err(unsupported(format!("an input of kind {other:?}"))),
        });
    }
    let placeholders = nodes.iter().filter(|n| short_class(n) == PLACEHOLDER).count();
    if placeholders != kinds.len() {
        return Err(unsupported(format!("{placeholders} placeholders for {} inputs", kinds.len())));
    }
    let mut t = Translator { ids: HashMap::new(), scan: None, inputs: vec![None; kinds.len()], kinds, outer_refs: false };
    let (plan, used) = t.plan(nodes, 0)?;
    if used != nodes.len() {
        return Err(unsupported("trailing nodes after the plan's root"));
    }
    if t.scan.is_none() && !t.kinds.contains(&InputKind::Rows) {
        return Err(unsupported("the subtree reads neither a Parquet scan nor a shuffle"));
    }
    if t.kinds.contains(&InputKind::Rows) && !does_work(&plan) {
        return Err(unsupported("a subtree over a shuffle without a join, aggregate or sort (converting the rows would cost more than kiln saves)"));
    }
    check_output(&plan, doc.get("output"))?;
    let inputs = t.inputs.into_iter().map(|i| i.ok_or_else(|| unsupported("an input the plan does not read"))).collect::<Result<Vec<_>>>()?;
    Ok(Fragment { plan, scan: t.scan, inputs })
}

/// The class of the leaves standing for Spark's inputs (an empty `LocalTableScanExec`).
const PLACEHOLDER: &str = "LocalTableScanExec";

/// Whether kiln does enough in the plan to pay for converting a shuffle's rows.
fn does_work(plan: &Arc<PhysicalPlan>) -> bool {
    matches!(plan.as_ref(), PhysicalPlan::HashAggregate { .. } | PhysicalPlan::HashJoin { .. } | PhysicalPlan::SortMergeJoin { .. } | PhysicalPlan::Sort { .. })
        || plan.children().into_iter().any(does_work)
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
    /// Each placeholder's columns, once translated.
    inputs: Vec<Option<Vec<Attribute>>>,
    /// What each placeholder stands for.
    kinds: Vec<InputKind>,
    /// A final aggregate's function arguments name columns below the shuffle: read for their
    /// types only.
    outer_refs: bool,
}

impl Translator {
    /// The plan node at `at`; returns it and the index past its subtree.
    fn plan(&mut self, nodes: &[Value], at: usize) -> Result<(Arc<PhysicalPlan>, usize)> {
        let node = nodes.get(at).ok_or_else(|| unsupported("an empty plan"))?;
        let end = skip(nodes, at)?;
        let class = short_class(node);
        // The node's own reason first, so a fallback names the operator that stays Spark's.
        let supported = ["FileSourceScanExec", "FilterExec", "ProjectExec", "HashAggregateExec", "BroadcastHashJoinExec", "SortMergeJoinExec", "SortExec", PLACEHOLDER];
        if !supported.contains(&class) {
            return Err(unsupported(format!("the operator {class}")));
        }
        let plan = match class {
            "FileSourceScanExec" => self.scan(node)?,
            PLACEHOLDER => {
                let (index, kind) = self.placeholder(nodes, at)?;
                if kind != InputKind::Rows {
                    return Err(unsupported("a broadcast read other than as a broadcast hash join's build side"));
                }
                self.input(node, index)?
            }
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
                let mode = aggregate_mode(node)?;
                let (child, _) = self.plan(nodes, child_field(nodes, at, "child")?)?;
                match mode {
                    AggregateMode::Partial => self.partial_aggregate(node, child)?,
                    _ => self.final_aggregate(node, child)?,
                }
            }
            "BroadcastHashJoinExec" => self.broadcast_join(nodes, at)?,
            "SortMergeJoinExec" => {
                let join_type = join_type(node)?;
                let (left, _) = self.plan(nodes, child_field(nodes, at, "left")?)?;
                let (right, _) = self.plan(nodes, child_field(nodes, at, "right")?)?;
                let (left_keys, right_keys) = (self.named_list(field(node, "leftKeys")?)?, self.named_list(field(node, "rightKeys")?)?);
                let condition = self.condition(node)?;
                PhysicalPlan::SortMergeJoin { left_keys, right_keys, join_type, condition, left, right }
            }
            "SortExec" => {
                let (child, _) = self.plan(nodes, child_field(nodes, at, "child")?)?;
                let order = list(field(node, "sortOrder")?)?.iter().map(|tree| self.sort_order(tree)).collect::<Result<Vec<_>>>()?;
                // One task's partition, sorted: what Spark's SortExec gives per partition.
                PhysicalPlan::Sort { order, global: false, child }
            }
            other => return Err(unsupported(format!("the operator {other}"))),
        };
        Ok((Arc::new(plan), end))
    }

    /// The placeholder at `at`: its input's index (its rank among the placeholders) and kind.
    fn placeholder(&self, nodes: &[Value], at: usize) -> Result<(usize, InputKind)> {
        let index = nodes[..at].iter().filter(|n| short_class(n) == PLACEHOLDER).count();
        let kind = *self.kinds.get(index).ok_or_else(|| unsupported("a placeholder without its input"))?;
        Ok((index, kind))
    }

    /// Input `index`'s leaf, its columns those of the placeholder.
    fn input(&mut self, node: &Value, index: usize) -> Result<PhysicalPlan> {
        let mut columns = Vec::new();
        for a in list(field(node, "output")?)? {
            columns.push(self.new_attribute(single(a)?)?);
        }
        self.inputs[index] = Some(columns.clone());
        Ok(PhysicalPlan::FragmentInput { index, output: columns })
    }

    /// A broadcast hash join: the stream side translated, the build side Spark's broadcast.
    fn broadcast_join(&mut self, nodes: &[Value], at: usize) -> Result<PhysicalPlan> {
        let node = &nodes[at];
        let join_type = join_type(node)?;
        let build_side = match node.pointer("/buildSide/object").and_then(Value::as_str).unwrap_or("?") {
            b if b.ends_with("BuildRight$") => BuildSide::BuildRight,
            b if b.ends_with("BuildLeft$") => BuildSide::BuildLeft,
            other => return Err(unsupported(format!("a join built on {other}"))),
        };
        if node.get("isNullAwareAntiJoin").and_then(Value::as_bool) != Some(false) {
            return Err(unsupported("a null-aware anti join (NOT IN)"));
        }
        // Spark's hashed relation leaves out build rows with a null key, which only the joins
        // that never emit an unmatched build row can do without.
        let streams_only = match build_side {
            BuildSide::BuildRight => matches!(join_type, JoinType::Inner | JoinType::LeftOuter | JoinType::LeftSemi | JoinType::LeftAnti),
            BuildSide::BuildLeft => matches!(join_type, JoinType::Inner | JoinType::RightOuter),
        };
        if !streams_only {
            return Err(unsupported(format!("a broadcast {join_type:?} join built on the {build_side:?} side")));
        }
        let (left_at, right_at) = (child_field(nodes, at, "left")?, child_field(nodes, at, "right")?);
        let build_at = if build_side == BuildSide::BuildRight { right_at } else { left_at };
        if short_class(&nodes[build_at]) != PLACEHOLDER || self.placeholder(nodes, build_at)?.1 != InputKind::Broadcast {
            return Err(unsupported("a broadcast join whose build side is not Spark's broadcast"));
        }
        let side = |t: &mut Self, child_at: usize| -> Result<Arc<PhysicalPlan>> {
            if child_at != build_at {
                return Ok(t.plan(nodes, child_at)?.0);
            }
            let index = t.placeholder(nodes, child_at)?.0;
            Ok(Arc::new(t.input(&nodes[child_at], index)?))
        };
        let (left, right) = (side(self, left_at)?, side(self, right_at)?);
        let (left_keys, right_keys) = (self.named_list(field(node, "leftKeys")?)?, self.named_list(field(node, "rightKeys")?)?);
        let condition = self.condition(node)?;
        // The build rows as kiln's own broadcast joins read them.
        let broadcast = |keys: &[Expr], child: Arc<PhysicalPlan>| Arc::new(PhysicalPlan::BroadcastExchange { keys: keys.to_vec(), null_aware: false, plan_id: 0, child });
        let (left, right) = match build_side {
            BuildSide::BuildRight => (left, broadcast(&right_keys, right)),
            BuildSide::BuildLeft => (broadcast(&left_keys, left), right),
        };
        Ok(PhysicalPlan::HashJoin { kind: HashJoinKind::Broadcast, left_keys, right_keys, join_type, build_side, condition, null_aware: false, left, right })
    }

    /// A join's optional extra condition.
    fn condition(&mut self, node: &Value) -> Result<Option<Expr>> {
        match node.get("condition") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(a)) if a.is_empty() => Ok(None),
            Some(tree) => Ok(Some(self.expr(tree)?)),
        }
    }

    fn sort_order(&mut self, tree: &Value) -> Result<SortOrder> {
        let nodes = tree.as_array().ok_or_else(|| unsupported("a sort order is not a flattened tree"))?;
        let top = nodes.first().ok_or_else(|| unsupported("an empty sort order"))?;
        if short_class(top) != "SortOrder" {
            return Err(unsupported(format!("{} where a sort order was expected", short_class(top))));
        }
        let ascending = top.pointer("/direction/object").and_then(Value::as_str).unwrap_or("?").ends_with("Ascending$");
        let nulls_first = top.pointer("/nullOrdering/object").and_then(Value::as_str).unwrap_or("?").ends_with("NullsFirst$");
        let expr = self.expr_at(nodes, child_field(nodes, 0, "child")?)?;
        Ok(SortOrder { expr, ascending, nulls_first })
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
        Ok(PhysicalPlan::FragmentInput { index: self.kinds.len(), output: columns })
    }

    fn partial_aggregate(&mut self, node: &Value, child: Arc<PhysicalPlan>) -> Result<PhysicalPlan> {
        let grouping = self.named_list(field(node, "groupingExpressions")?)?;
        let aggregates = self.aggregates(node)?;
        Ok(PhysicalPlan::HashAggregate { mode: AggregateMode::Partial, grouping, aggregates, result: vec![], child })
    }

    /// A final aggregate over partial buffers: its input is the grouping columns, then each
    /// function's buffer columns in order (Spark's `initialInputBufferOffset` says where they
    /// start), whatever engine computed them.
    fn final_aggregate(&mut self, node: &Value, child: Arc<PhysicalPlan>) -> Result<PhysicalPlan> {
        let grouping = self.named_list(field(node, "groupingExpressions")?)?;
        self.outer_refs = true;
        let aggregates = self.aggregates(node);
        self.outer_refs = false;
        let mut aggregates = aggregates?;
        let input = child.output();
        let mut at = node.get("initialInputBufferOffset").and_then(Value::as_u64).ok_or_else(|| unsupported("a final aggregate without its buffer offset"))? as usize;
        let results = list(field(node, "aggregateAttributes")?)?;
        if results.len() != aggregates.len() {
            return Err(unsupported("a final aggregate whose results do not match its functions"));
        }
        for (agg, spark_result) in aggregates.iter_mut().zip(results) {
            for b in agg.buffer.iter_mut() {
                let column = input.get(at).ok_or_else(|| unsupported("a final aggregate's input lacks a buffer column"))?;
                if column.data_type != b.data_type {
                    return Err(unsupported(format!("an aggregate buffer {} is {} in kiln and {} in Spark", b.name, b.data_type, column.data_type)));
                }
                *b = column.clone();
                at += 1;
            }
            let spark_result = single(spark_result)?;
            let spark_type = spark_type(spark_result.get("dataType").and_then(Value::as_str).unwrap_or("?"))?;
            if spark_type != agg.result.data_type {
                return Err(unsupported(format!("the aggregate {} gives {} in kiln and {spark_type} in Spark", agg.result.name, agg.result.data_type)));
            }
            self.ids.insert(spark_id(spark_result)?, agg.result.clone());
        }
        if at != input.len() {
            return Err(unsupported("a final aggregate's input has columns past its buffers"));
        }
        let result = self.named_list(field(node, "resultExpressions")?)?;
        Ok(PhysicalPlan::HashAggregate { mode: AggregateMode::Final, grouping, aggregates, result, child })
    }

    /// The aggregate functions of a `HashAggregateExec`.
    fn aggregates(&mut self, node: &Value) -> Result<Vec<AggregateExpr>> {
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
        Ok(aggregates)
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
                match self.ids.get(&id) {
                    Some(attr) => Expr::Attribute(attr.clone()),
                    None if self.outer_refs => {
                        let name = node.get("name").and_then(Value::as_str).unwrap_or("?");
                        Expr::Attribute(Attribute::new(name, spark_type(node.get("dataType").and_then(Value::as_str).unwrap_or("?"))?, true))
                    }
                    None => return Err(unsupported(format!("a reference to a column from outside the subtree ({}#{id})", node["name"]))),
                }
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
                Expr::CaseWhen { branches, else_expr, if_form: false }
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

/// Every aggregate's mode, when they share one kiln runs (partial or final).
fn aggregate_mode(node: &Value) -> Result<AggregateMode> {
    let mut modes = Vec::new();
    for tree in list(field(node, "aggregateExpressions")?)? {
        let mode = tree.pointer("/0/mode/object").and_then(Value::as_str).unwrap_or("?");
        let mode = mode.rsplit('.').next().unwrap_or(mode).trim_end_matches('$');
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    match modes.as_slice() {
        [] | ["Partial"] => Ok(AggregateMode::Partial),
        ["Final"] if node.get("initialInputBufferOffset").is_some() => Ok(AggregateMode::Final),
        _ => Err(unsupported(format!("an aggregate in mode {}", modes.join(" and ")))),
    }
}

/// A join's type, as Spark's case object names it.
fn join_type(node: &Value) -> Result<JoinType> {
    let name = node.pointer("/joinType/object").and_then(Value::as_str).unwrap_or("?");
    Ok(match name.rsplit('.').next().unwrap_or(name).trim_end_matches('$') {
        "Inner" => JoinType::Inner,
        "LeftOuter" => JoinType::LeftOuter,
        "RightOuter" => JoinType::RightOuter,
        "FullOuter" => JoinType::FullOuter,
        "LeftSemi" => JoinType::LeftSemi,
        "LeftAnti" => JoinType::LeftAnti,
        _ => return Err(unsupported(format!("the join type {name}"))),
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
        assert_eq!(fragment.scan.iter().flatten().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["x", "s"]);
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

        let window = json!({"plan": [{"class": format!("{EXEC}WindowExec"), "num-children": 1, "child": 0}, scan(&[attr("x", "long", 1)])], "output": schema(&[("x", "long")])});
        let err = translate(&window.to_string()).expect_err("no window yet");
        assert!(err.to_string().contains("[KILN_SPARK_UNSUPPORTED] the operator WindowExec"), "{err}");

        let outside = json!({"plan": [{"class": format!("{EXEC}FilterExec"), "num-children": 1, "condition": [json!({"class": format!("{EXPR}IsNotNull"), "num-children": 1, "child": 0}), attr("z", "long", 9)], "child": 0}, scan(&[attr("x", "long", 1)])], "output": schema(&[("x", "long")])});
        let err = translate(&outside.to_string()).expect_err("z is not the scan's");
        assert!(err.to_string().contains("a reference to a column from outside the subtree"), "{err}");

        let initcap = json!({"plan": [{"class": format!("{EXEC}FilterExec"), "num-children": 1, "condition": [json!({"class": format!("{EXPR}InitCap"), "num-children": 1, "child": 0}), attr("x", "string", 1)], "child": 0}, scan(&[attr("x", "string", 1)])], "output": schema(&[("x", "string")])});
        let err = translate(&initcap.to_string()).expect_err("no initcap");
        assert!(err.to_string().contains("the expression InitCap"), "{err}");
    }

    fn placeholder(columns: &[Value]) -> Value {
        json!({"class": format!("{EXEC}LocalTableScanExec"), "num-children": 0, "output": columns.iter().map(|c| json!([c])).collect::<Vec<_>>(), "rows": [], "stream": null})
    }

    fn longs(names: &[&str], columns: &[Vec<Option<i64>>]) -> RecordBatch {
        RecordBatch::try_from_iter(names.iter().zip(columns).map(|(n, c)| (*n, std::sync::Arc::new(Int64Array::from(c.clone())) as _))).expect("batch")
    }

    fn ipc(batch: &RecordBatch) -> Vec<u8> {
        crate::ipc_bytes(batch).expect("ipc")
    }

    /// Runs a fragment over IPC inputs, codegen on and off; its rows of longs, sorted.
    fn run_over(request: &str, inputs: &[RecordBatch]) -> Vec<Vec<Option<i64>>> {
        let mut answers = Vec::new();
        for codegen in ["true", "false"] {
            let fragment = translate(request).expect("translates");
            let session = kiln::Session::new();
            session.set_conf("spark.sql.codegen.wholeStage", codegen).expect("set");
            let plan = if codegen == "true" { kiln::internals::codegen::collapse_codegen_stages(&fragment.plan) } else { fragment.plan };
            let streams = inputs.iter().zip(fragment.inputs).map(|(b, c)| crate::inputs::read(ipc(b), c).expect("reads")).collect();
            let out: Vec<RecordBatch> = session.execute_fragment(plan, 0, streams).expect("starts").collect::<std::result::Result<_, _>>().expect("runs");
            let mut rows: Vec<Vec<Option<i64>>> = out
                .iter()
                .flat_map(|b| {
                    (0..b.num_rows()).map(move |r| (0..b.num_columns()).map(|c| b.column(c).as_primitive_opt::<Int64Type>().filter(|a| !a.is_null(r)).map(|a| a.value(r))).collect()).collect::<Vec<_>>()
                })
                .collect();
            rows.sort();
            answers.push(rows);
        }
        assert_eq!(answers[0], answers[1], "codegen and interpreted agree");
        answers.remove(0)
    }

    #[test]
    fn a_broadcast_join_over_a_shuffle_probes_sparks_broadcast_rows() {
        // SELECT k, v, w FROM broadcast(b) JOIN s ON b.k = s.k (BuildLeft, inner), then left semi.
        let (k, w, k2, v) = (attr("k", "long", 1), attr("w", "long", 2), attr("k2", "long", 3), attr("v", "long", 4));
        let join = |kind: &str, build: &str| json!({"class": format!("{EXEC}BroadcastHashJoinExec"), "num-children": 2, "leftKeys": [[if build == "BuildLeft" { k.clone() } else { k2.clone() }]],
            "rightKeys": [[if build == "BuildLeft" { k2.clone() } else { k.clone() }]], "joinType": {"object": format!("org.apache.spark.sql.catalyst.plans.{kind}$")},
            "buildSide": {"object": format!("org.apache.spark.sql.catalyst.optimizer.{build}$")}, "left": 0, "right": 1, "isNullAwareAntiJoin": false, "isSkewJoin": false});
        let build = longs(&["k", "w"], &[vec![Some(1), Some(2), Some(2), None], vec![Some(10), Some(20), Some(21), Some(99)]]);
        let stream = longs(&["k2", "v"], &[vec![Some(2), Some(3), None, Some(1)], vec![Some(200), Some(300), Some(0), Some(100)]]);
        let inner = json!({"plan": [join("Inner", "BuildLeft"), placeholder(&[k.clone(), w.clone()]), placeholder(&[k2.clone(), v.clone()])],
            "output": schema(&[("k", "long"), ("w", "long"), ("k2", "long"), ("v", "long")]), "inputs": ["broadcast", "rows"]});
        let rows = run_over(&inner.to_string(), &[build.clone(), stream.clone()]);
        let want: Vec<Vec<Option<i64>>> = [[1, 10, 1, 100], [2, 20, 2, 200], [2, 21, 2, 200]].iter().map(|r| r.iter().map(|&x| Some(x)).collect()).collect();
        assert_eq!(rows, want);

        let semi = json!({"plan": [join("LeftSemi", "BuildRight"), placeholder(&[k2.clone(), v.clone()]), placeholder(&[k.clone(), w.clone()])],
            "output": schema(&[("k2", "long"), ("v", "long")]), "inputs": ["rows", "broadcast"]});
        let rows = run_over(&semi.to_string(), &[stream.clone(), build.clone()]);
        assert_eq!(rows, vec![vec![Some(1), Some(100)], vec![Some(2), Some(200)]]);

        let wrong_side = json!({"plan": [join("Inner", "BuildLeft"), placeholder(&[k.clone(), w.clone()]), placeholder(&[k2.clone(), v.clone()])],
            "output": schema(&[("k", "long"), ("w", "long"), ("k2", "long"), ("v", "long")]), "inputs": ["rows", "rows"]});
        let err = translate(&wrong_side.to_string()).expect_err("the build side is a shuffle");
        assert!(err.to_string().contains("build side is not Spark's broadcast"), "{err}");
        let full = json!({"plan": [join("FullOuter", "BuildLeft"), placeholder(&[k.clone(), w]), placeholder(&[k2, v])],
            "output": schema(&[("k", "long"), ("w", "long"), ("k2", "long"), ("v", "long")]), "inputs": ["broadcast", "rows"]});
        let err = translate(&full.to_string()).expect_err("full outer");
        assert!(err.to_string().contains("broadcast FullOuter join"), "{err}");
    }

    fn sum(mode: &str, of: &Value) -> Value {
        json!([{"class": format!("{EXPR}aggregate.AggregateExpression"), "num-children": 1, "aggregateFunction": 0, "mode": {"object": format!("{EXPR}aggregate.{mode}$")}, "isDistinct": false},
               {"class": format!("{EXPR}aggregate.Sum"), "num-children": 1, "child": 0}, of])
    }

    #[test]
    fn partial_and_final_aggregates_over_a_join_and_a_shuffle() {
        let (k, w, k2, v) = (attr("k", "long", 1), attr("w", "long", 2), attr("k2", "long", 3), attr("v", "long", 4));
        let build = longs(&["k", "w"], &[vec![Some(1), Some(2), Some(2), None], vec![Some(10), Some(20), Some(21), Some(99)]]);
        let stream = longs(&["k2", "v"], &[vec![Some(2), Some(3), None, Some(1)], vec![Some(200), Some(300), Some(0), Some(100)]]);
        // SELECT k, partial_sum(v) FROM broadcast(b) JOIN s ON k = k2 GROUP BY k
        let partial = json!({"plan": [
            {"class": format!("{EXEC}aggregate.HashAggregateExec"), "num-children": 1, "groupingExpressions": [[k.clone()]], "aggregateExpressions": [sum("Partial", &v)],
             "aggregateAttributes": [[attr("sum(v)", "long", 50)]], "initialInputBufferOffset": 0, "resultExpressions": [[k.clone()], [attr("sum", "long", 60)]], "child": 0},
            {"class": format!("{EXEC}joins.BroadcastHashJoinExec"), "num-children": 2, "leftKeys": [[k.clone()]], "rightKeys": [[k2.clone()]], "joinType": {"object": "org.apache.spark.sql.catalyst.plans.Inner$"},
             "buildSide": {"object": "org.apache.spark.sql.catalyst.optimizer.BuildLeft$"}, "left": 0, "right": 1, "isNullAwareAntiJoin": false, "isSkewJoin": false},
            placeholder(&[k.clone(), w.clone()]),
            {"class": format!("{EXEC}ProjectExec"), "num-children": 1, "projectList": [[k2.clone()], [v.clone()]], "child": 0},
            {"class": format!("{EXEC}FilterExec"), "num-children": 1, "condition": [json!({"class": format!("{EXPR}IsNotNull"), "num-children": 1, "child": 0}), k2.clone()], "child": 0},
            placeholder(&[k2.clone(), v.clone()])],
            "output": schema(&[("k", "long"), ("sum", "long")]), "inputs": ["broadcast", "rows"]});
        let rows = run_over(&partial.to_string(), &[build, stream]);
        assert_eq!(rows, vec![vec![Some(1), Some(100)], vec![Some(2), Some(400)]]);

        // ... then the final aggregate over the shuffled partial buffers.
        let alias = json!({"class": format!("{EXPR}Alias"), "num-children": 1, "child": 0, "name": "s", "exprId": {"id": 51}, "qualifier": []});
        let last = json!({"plan": [
            {"class": format!("{EXEC}aggregate.HashAggregateExec"), "num-children": 1, "groupingExpressions": [[k.clone()]], "aggregateExpressions": [sum("Final", &v)],
             "aggregateAttributes": [[attr("sum(v)", "long", 50)]], "initialInputBufferOffset": 1, "resultExpressions": [[k.clone()], [alias, attr("sum(v)", "long", 50)]], "child": 0},
            placeholder(&[k.clone(), attr("sum", "long", 60)])],
            "output": schema(&[("k", "long"), ("s", "long")]), "inputs": ["rows"]});
        let buffers = longs(&["k", "sum"], &[vec![Some(1), Some(2), Some(1), Some(3)], vec![Some(100), Some(400), Some(5), None]]);
        let rows = run_over(&last.to_string(), &[buffers]);
        assert_eq!(rows, vec![vec![Some(1), Some(105)], vec![Some(2), Some(400)], vec![Some(3), None]]);
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

