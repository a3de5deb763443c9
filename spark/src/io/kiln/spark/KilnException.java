package io.kiln.spark;

import org.apache.spark.SparkThrowable;

/** An error from kiln: its message starts with kiln's error class, as {@code [DIVIDE_BY_ZERO] ...}. */
public class KilnException extends RuntimeException implements SparkThrowable {
  public KilnException(String message) {
    super(message);
  }

  @Override
  public String getCondition() {
    String m = getMessage();
    if (m != null && m.startsWith("[")) {
      int end = m.indexOf(']');
      if (end > 1) return m.substring(1, end);
    }
    return "KILN_ERROR";
  }

  @Override
  public String getSqlState() {
    return null;
  }
}
