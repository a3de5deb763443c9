package io.kiln.spark;

import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.ColumnarRule;
import org.apache.spark.sql.execution.SparkPlan;

/** Runs {@link KilnOverrides} before Spark inserts its row/columnar transitions. */
public class KilnColumnarRule extends ColumnarRule {
  @Override
  public Rule<SparkPlan> preColumnarTransitions() {
    return new KilnOverrides();
  }
}
