package io.kiln.spark;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.catalyst.trees.TreeNodeTag;
import org.apache.spark.sql.execution.ExecSubqueryExpression;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Replaces each maximal subtree kiln runs with a {@link KilnExec}, top down; a node kept by
 * Spark carries the reason in the tag {@link #FALLBACK} (shown by {@link KilnExplain}).
 * kiln decides what it runs (it translates the subtree's {@code toJSON}); this side checks
 * only what the JSON does not say: that every leaf is a Parquet scan of local files.
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
    String reason = leafReason(plan);
    if (reason == null) reason = expressionReason(plan);
    String request = null;
    if (reason == null) {
      request = request(plan);
      reason = KilnNative.check(request);
    }
    if (reason == null) return new KilnExec(plan, request);
    plan.setTagValue(FALLBACK, reason);
    if (plan.children().isEmpty()) return plan;
    List<SparkPlan> children = new ArrayList<>();
    for (SparkPlan child : CollectionConverters.asJava(plan.children())) children.add(convert(child));
    return plan.withNewChildren(CollectionConverters.asScala(children).toList());
  }

  /** What kiln translates: Spark's JSON of the subtree and the schema it must produce. */
  static String request(SparkPlan plan) {
    return "{\"plan\":" + plan.toJSON() + ",\"output\":" + plan.schema().json() + "}";
  }

  /**
   * Why an expression of the subtree keeps it Spark's, for what {@code toJSON} does not say: one
   * evaluated in a mode other than ANSI ({@code try_cast}, {@code try_add}, ...), or a subquery
   * (a scan's pushed filters too: Spark runs them only when it executes the scan itself).
   */
  static String expressionReason(SparkPlan plan) {
    for (SparkPlan node : CollectionConverters.asJava(plan.collect(new scala.runtime.AbstractPartialFunction<SparkPlan, SparkPlan>() {
      @Override
      public boolean isDefinedAt(SparkPlan p) {
        return true;
      }

      @Override
      public SparkPlan apply(SparkPlan p) {
        return p;
      }
    }))) {
      for (Expression e : CollectionConverters.asJava(node.expressions())) {
        String reason = expressionReason(e);
        if (reason != null) return reason;
      }
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
    for (SparkPlan leaf : CollectionConverters.asJava(plan.collectLeaves())) {
      if (!(leaf instanceof FileSourceScanExec)) {
        return "[KILN_SPARK_UNSUPPORTED] the input " + leaf.nodeName() + " (kiln reads Parquet scans so far)";
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
