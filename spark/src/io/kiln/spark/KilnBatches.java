package io.kiln.spark;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A kiln task's batches as Spark's {@link ColumnarBatch}es over Arrow vectors. A batch stays
 * valid until the next call to {@link #hasNext}, as Spark's own columnar readers' do.
 */
final class KilnBatches implements Iterator<ColumnarBatch>, AutoCloseable {
  private long handle;
  private final BufferAllocator allocator;
  private ArrowStreamReader reader;
  private ColumnarBatch pending;
  private boolean done;

  KilnBatches(long handle) {
    this.handle = handle;
    this.allocator = ArrowUtils.rootAllocator().newChildAllocator("kiln-task", 0, Long.MAX_VALUE);
  }

  @Override
  public synchronized boolean hasNext() {
    if (pending != null) return true;
    if (done) return false;
    closeReader();
    byte[] bytes = KilnNative.next(handle);
    if (bytes == null) {
      close();
      return false;
    }
    try {
      reader = new ArrowStreamReader(new ByteArrayInputStream(bytes), allocator);
      reader.loadNextBatch();
      VectorSchemaRoot root = reader.getVectorSchemaRoot();
      List<FieldVector> vectors = root.getFieldVectors();
      ColumnVector[] columns = new ColumnVector[vectors.size()];
      for (int i = 0; i < columns.length; i++) {
        FieldVector v = vectors.get(i);
        columns[i] = v instanceof DecimalVector && KilnDecimalVector.fits((DecimalVector) v) ? new KilnDecimalVector((DecimalVector) v) : new ArrowColumnVector(v);
      }
      pending = new ColumnarBatch(columns, root.getRowCount());
      return true;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public synchronized ColumnarBatch next() {
    if (!hasNext()) throw new NoSuchElementException();
    ColumnarBatch b = pending;
    pending = null;
    return b;
  }

  private void closeReader() {
    if (reader == null) return;
    try {
      reader.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    reader = null;
  }

  @Override
  public synchronized void close() {
    if (done) return;
    done = true;
    pending = null;
    closeReader();
    if (handle != 0) {
      KilnNative.close(handle);
      handle = 0;
    }
    allocator.close();
  }
}
