package io.kiln.spark;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.catalyst.trees.TreeNodeTag;
import org.apache.spark.sql.execution.ExecSubqueryExpression;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.LocalTableScanExec;
import org.apache.spark.sql.execution.adaptive.AQEShuffleReadExec;
import org.apache.spark.sql.execution.adaptive.BroadcastQueryStageExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.apache.spark.sql.execution.exchange.BroadcastExchangeLike;
import org.apache.spark.sql.execution.exchange.Exchange;
import org.apache.spark.sql.execution.exchange.ReusedExchangeExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Replaces each maximal subtree kiln runs with a {@link KilnExec}, top down; a node kept by
 * Spark carries the reason in the tag {@link #FALLBACK} (shown by {@link KilnExplain}).
 * kiln decides what it runs (it translates the subtree's {@code toJSON}); this side checks
 * only what the JSON does not say: that every leaf is a Parquet scan of local files or one of
 * Spark's exchanges (a broadcast, a shuffle), whose rows the subtree reads as its inputs. In
 * the JSON each input is a placeholder: an empty {@code LocalTableScanExec} of its columns.
 */
public class KilnOverrides extends Rule<SparkPlan> {
  /** Why kiln does not run the subtree rooted at a node. */
  public static final TreeNodeTag<String> FALLBACK = new TreeNodeTag<>("kiln.fallback");

  /** {@code spark.kiln.enabled}: false leaves every plan to Spark. */
  public static final String ENABLED = "spark.kiln.enabled";

  @Override
  public SparkPlan apply(SparkPlan plan) {
    if (!"true".equalsIgnoreCase(conf().getConfString(ENABLED, "true"))) return plan;
    if (!conf().ansiEnabled()) {
      // The plan's JSON does not carry arithmetic's evaluation mode; kiln evaluates as ANSI.
      plan.setTagValue(FALLBACK, "[KILN_SPARK_UNSUPPORTED] spark.sql.ansi.enabled=false (kiln evaluates as ANSI)");
      return plan;
    }
    String error = KilnNative.load();
    if (error != null) {
      plan.setTagValue(FALLBACK, "[KILN_NATIVE_LIBRARY_NOT_LOADED] " + error);
      return plan;
    }
    return convert(plan);
  }

  private SparkPlan convert(SparkPlan plan) {
    if (plan instanceof KilnExec) return plan;
    if (isInput(plan)) return convertChildren(plan);
    List<SparkPlan> inputs = new ArrayList<>();
    collectInputs(plan, inputs);
    String reason = leafReason(plan);
    if (reason == null) reason = inputsReason(plan, inputs);
    if (reason == null) reason = expressionReason(plan);
    String request = null;
    if (reason == null) {
      request = request(plan, inputs);
      reason = KilnNative.check(request);
    }
    if (reason == null) {
      List<SparkPlan> children = new ArrayList<>();
      for (SparkPlan input : inputs) children.add(convert(input));
      return new KilnExec(plan, request, CollectionConverters.asScala(children).toList());
    }
    plan.setTagValue(FALLBACK, reason);
    return convertChildren(plan);
  }

  private SparkPlan convertChildren(SparkPlan plan) {
    if (plan.children().isEmpty()) return plan;
    List<SparkPlan> children = new ArrayList<>();
    for (SparkPlan child : CollectionConverters.asJava(plan.children())) children.add(convert(child));
    return plan.withNewChildren(CollectionConverters.asScala(children).toList());
  }

  /**
   * Whether a node's rows reach a subtree as one of its inputs: Spark's exchanges (as query
   * stages under adaptive execution, or read through an {@code AQEShuffleRead}) stay Spark's.
   */
  static boolean isInput(SparkPlan plan) {
    return plan instanceof Exchange || plan instanceof QueryStageExec || plan instanceof AQEShuffleReadExec || plan instanceof ReusedExchangeExec;
  }

  /** Whether an input is a broadcast (read whole by every task) rather than a shuffle. */
  static boolean isBroadcast(SparkPlan input) {
    if (input instanceof ReusedExchangeExec) input = ((ReusedExchangeExec) input).child();
    return input instanceof BroadcastExchangeLike || input instanceof BroadcastQueryStageExec;
  }

  /** The subtree's inputs, in the order {@code toJSON} lists them (pre-order). */
  private static void collectInputs(SparkPlan plan, List<SparkPlan> out) {
    if (isInput(plan)) {
      out.add(plan);
      return;
    }
    for (SparkPlan child : CollectionConverters.asJava(plan.children())) collectInputs(child, out);
  }

  /** Why the subtree's inputs keep it Spark's: a task reads one scan or the same partition of its shuffles. */
  private static String inputsReason(SparkPlan plan, List<SparkPlan> inputs) {
    List<SparkPlan> shuffles = new ArrayList<>();
    for (SparkPlan input : inputs) if (!isBroadcast(input)) shuffles.add(input);
    if (shuffles.isEmpty()) return null;
    if (hasScan(plan)) return "[KILN_SPARK_UNSUPPORTED] a subtree reading both a scan and a shuffle";
    if (shuffles.size() > 2) return "[KILN_SPARK_UNSUPPORTED] a subtree reading more than two shuffles";
    int partitions = shuffles.get(0).outputPartitioning().numPartitions();
    for (SparkPlan s : shuffles) {
      if (s.outputPartitioning().numPartitions() != partitions) return "[KILN_SPARK_UNSUPPORTED] shuffles of different partition counts";
    }
    return null;
  }

  private static boolean hasScan(SparkPlan plan) {
    if (plan instanceof FileSourceScanExec) return true;
    if (isInput(plan)) return false;
    for (SparkPlan child : CollectionConverters.asJava(plan.children())) if (hasScan(child)) return true;
    return false;
  }

  /**
   * What kiln translates: Spark's JSON of the subtree (its inputs as placeholders), the schema
   * it must produce and the kind of each input.
   */
  static String request(SparkPlan plan, List<SparkPlan> inputs) {
    StringBuilder kinds = new StringBuilder();
    for (SparkPlan input : inputs) kinds.append(kinds.length() == 0 ? "" : ",").append(isBroadcast(input) ? "\"broadcast\"" : "\"rows\"");
    return "{\"plan\":" + withPlaceholders(plan, inputs).toJSON() + ",\"output\":" + plan.schema().json() + ",\"inputs\":[" + kinds + "]}";
  }

  private static SparkPlan withPlaceholders(SparkPlan plan, List<SparkPlan> inputs) {
    if (inputs.contains(plan)) {
      return new LocalTableScanExec(plan.output(), CollectionConverters.asScala(new ArrayList<InternalRow>()).toList(), Option.empty(), false);
    }
    if (plan.children().isEmpty() || inputs.isEmpty()) return plan;
    List<SparkPlan> children = new ArrayList<>();
    for (SparkPlan child : CollectionConverters.asJava(plan.children())) children.add(withPlaceholders(child, inputs));
    return plan.withNewChildren(CollectionConverters.asScala(children).toList());
  }

  /**
   * Why an expression of the subtree keeps it Spark's, for what {@code toJSON} does not say: one
   * evaluated in a mode other than ANSI ({@code try_cast}, {@code try_add}, ...), or a subquery
   * (a scan's pushed filters too: Spark runs them only when it executes the scan itself).
   */
  static String expressionReason(SparkPlan plan) {
    if (isInput(plan)) return null;
    for (Expression e : CollectionConverters.asJava(plan.expressions())) {
      String reason = expressionReason(e);
      if (reason != null) return reason;
    }
    for (SparkPlan child : CollectionConverters.asJava(plan.children())) {
      String reason = expressionReason(child);
      if (reason != null) return reason;
    }
    return null;
  }

  private static String expressionReason(Expression e) {
    if (e instanceof ExecSubqueryExpression) return "[KILN_SPARK_UNSUPPORTED] the subquery " + e.prettyName();
    try {
      Object mode = e.getClass().getMethod("evalMode").invoke(e);
      if (mode != null && !"ANSI".equals(mode.toString())) {
        return "[KILN_SPARK_UNSUPPORTED] " + e.prettyName() + " in " + mode + " mode (kiln evaluates as ANSI)";
      }
    } catch (ReflectiveOperationException absent) {
      // No evaluation mode: the expression means the same in every mode.
    }
    for (Expression child : CollectionConverters.asJava(e.children())) {
      String reason = expressionReason(child);
      if (reason != null) return reason;
    }
    return null;
  }

  /** Why a leaf of the subtree keeps it Spark's, or null when kiln can read every leaf. */
  static String leafReason(SparkPlan plan) {
    if (isInput(plan)) return null;
    if (!plan.children().isEmpty()) {
      for (SparkPlan child : CollectionConverters.asJava(plan.children())) {
        String reason = leafReason(child);
        if (reason != null) return reason;
      }
      return null;
    }
    for (SparkPlan leaf : List.of(plan)) {
      if (!(leaf instanceof FileSourceScanExec)) {
        return "[KILN_SPARK_UNSUPPORTED] the input " + leaf.nodeName() + " (kiln reads Parquet scans and Spark's exchanges)";
      }
      FileSourceScanExec scan = (FileSourceScanExec) leaf;
      if (!(scan.relation().fileFormat() instanceof ParquetFileFormat)) {
        return "[KILN_SPARK_UNSUPPORTED] a scan of " + scan.relation().fileFormat() + " (kiln reads Parquet)";
      }
      if (!scan.relation().partitionSchema().isEmpty()) {
        return "[KILN_SPARK_UNSUPPORTED] a scan of a partitioned table";
      }
      if (scan.bucketedScan()) {
        return "[KILN_SPARK_UNSUPPORTED] a bucketed scan";
      }
      for (org.apache.hadoop.fs.Path root : CollectionConverters.asJava(scan.relation().location().rootPaths())) {
        String scheme = root.toUri().getScheme();
        if (scheme != null && !scheme.equals("file")) {
          return "[KILN_SPARK_UNSUPPORTED] files on " + scheme + " (kiln reads local files)";
        }
      }
    }
    return null;
  }
}
