package io.kiln.spark;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.DecimalVector;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ArrowColumnVector;

/**
 * An Arrow decimal of precision at most 18 read as Spark's long-backed {@link Decimal}:
 * {@link ArrowColumnVector} makes a {@code BigDecimal} of each value, which cost Q3 at SF1
 * more than kiln's scan saved.
 */
final class KilnDecimalVector extends ArrowColumnVector {
  private final DecimalVector decimals;

  KilnDecimalVector(DecimalVector vector) {
    super(vector);
    this.decimals = vector;
  }

  /** Whether a vector's values fit the long-backed reading. */
  static boolean fits(DecimalVector vector) {
    return vector.getPrecision() <= Decimal.MAX_LONG_DIGITS();
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    if (decimals.isNull(rowId)) return null;
    ArrowBuf data = decimals.getDataBuffer();
    // Little-endian 128-bit two's complement: a value of at most 18 digits is its low 64 bits.
    long unscaled = data.getLong((long) rowId * DecimalVector.TYPE_WIDTH);
    return Decimal.createUnsafe(unscaled, precision, scale);
  }
}
