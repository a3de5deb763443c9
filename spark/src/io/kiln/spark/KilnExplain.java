package io.kiln.spark;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.ExtendedExplainGenerator;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code spark.sql.extendedExplainProviders=io.kiln.spark.KilnExplain}: EXPLAIN EXTENDED lists
 * the operators Spark kept and why kiln did not run them.
 */
public class KilnExplain implements ExtendedExplainGenerator {
  @Override
  public String title() {
    return "Kiln";
  }

  @Override
  public String generateExtendedInfo(SparkPlan plan) {
    List<String> lines = fallbacks(plan);
    return lines.isEmpty() ? "every operator ran in kiln" : String.join("\n", lines);
  }

  /** "Operator: reason" for each operator Spark kept, top down. */
  public static List<String> fallbacks(SparkPlan plan) {
    List<String> out = new ArrayList<>();
    collect(plan, out);
    return out;
  }

  /**
   * {operators kiln ran, operators in all} of an executed plan: Spark's operators, counting
   * those a {@code KilnExec} replaced and not the wrappers (codegen stages, transitions, query
   * stages, adaptive reads) nor the {@code KilnExec} itself.
   */
  public static int[] operatorsInKiln(SparkPlan plan) {
    int[] counts = new int[2];
    count(plan, counts, false);
    return counts;
  }

  private static void count(SparkPlan plan, int[] counts, boolean inKiln) {
    if (plan instanceof AdaptiveSparkPlanExec) {
      count(((AdaptiveSparkPlanExec) plan).executedPlan(), counts, inKiln);
      return;
    }
    if (plan instanceof QueryStageExec) {
      count(((QueryStageExec) plan).plan(), counts, inKiln);
      return;
    }
    if (plan instanceof KilnExec) {
      countReplaced(((KilnExec) plan).replaced(), counts);
      for (SparkPlan input : CollectionConverters.asJava(plan.children())) count(input, counts, false);
      return;
    }
    String name = plan.nodeName();
    boolean wrapper = name.startsWith("WholeStageCodegen") || name.equals("InputAdapter") || name.equals("ColumnarToRow")
        || name.equals("RowToColumnar") || name.equals("AQEShuffleRead");
    if (!wrapper) {
      counts[1]++;
      if (inKiln) counts[0]++;
    }
    for (SparkPlan child : CollectionConverters.asJava(plan.children())) count(child, counts, inKiln);
  }

  /** The operators a {@code KilnExec} runs: its subtree down to its inputs (counted as Spark's). */
  private static void countReplaced(SparkPlan plan, int[] counts) {
    if (KilnOverrides.isInput(plan)) return;
    counts[0]++;
    counts[1]++;
    for (SparkPlan child : CollectionConverters.asJava(plan.children())) countReplaced(child, counts);
  }

  private static void collect(SparkPlan plan, List<String> out) {
    if (plan instanceof AdaptiveSparkPlanExec) {
      collect(((AdaptiveSparkPlanExec) plan).executedPlan(), out);
      return;
    }
    if (plan instanceof QueryStageExec) {
      collect(((QueryStageExec) plan).plan(), out);
      return;
    }
    Option<String> reason = plan.getTagValue(KilnOverrides.FALLBACK);
    if (reason.isDefined()) out.add(plan.nodeName() + ": " + reason.get());
    for (SparkPlan child : CollectionConverters.asJava(plan.children())) collect(child, out);
  }
}
