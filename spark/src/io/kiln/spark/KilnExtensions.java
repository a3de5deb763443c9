package io.kiln.spark;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.execution.ColumnarRule;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/** {@code spark.sql.extensions=io.kiln.spark.KilnExtensions}: injects kiln's columnar rule. */
public class KilnExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    extensions.injectColumnar(new AbstractFunction1<SparkSession, ColumnarRule>() {
      @Override
      public ColumnarRule apply(SparkSession session) {
        return new KilnColumnarRule();
      }
    });
    return BoxedUnit.UNIT;
  }
}
