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
