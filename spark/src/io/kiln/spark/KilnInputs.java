package io.kiln.spark;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.util.Iterator;
import java.util.Map;
import java.util.WeakHashMap;

import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.execution.joins.HashedRelation;
import org.apache.spark.sql.execution.joins.UnsafeHashedRelation;
import org.apache.spark.sql.execution.joins.ValueRowWithKeyIndex;
import org.apache.spark.sql.types.StructType;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark's rows a kiln task reads — a broadcast's, its shuffle partition's — as one Arrow IPC
 * stream each, written by Spark's own {@link ArrowWriter}.
 */
final class KilnInputs {
  private KilnInputs() {}

  /** Rows per Arrow batch. */
  private static final int BATCH_ROWS = 8192;

  /**
   * Each broadcast's stream, made once per executor: every task of the join reads the same
   * rows. Weak keys: a stream goes when Spark drops its broadcast.
   */
  private static final Map<Object, byte[]> BROADCASTS = new WeakHashMap<>();

  /** A broadcast hash join's build rows: those of the hashed relation Spark broadcast. */
  static byte[] broadcast(Object value, StructType schema) {
    if (!(value instanceof HashedRelation)) {
      throw new KilnException("[KILN_SPARK_INPUT] a broadcast of " + value.getClass().getName() + " where a hashed relation was expected");
    }
    synchronized (BROADCASTS) {
      byte[] cached = BROADCASTS.get(value);
      if (cached != null) return cached;
    }
    // A copy: the relation's iterators share state between the tasks reading it.
    HashedRelation relation = ((HashedRelation) value).asReadOnlyCopy();
    byte[] bytes = rows(relation instanceof UnsafeHashedRelation ? values(relation) : byKey(relation), schema);
    synchronized (BROADCASTS) {
      BROADCASTS.put(value, bytes);
    }
    return bytes;
  }

  /** Every row of a relation that lists them (a relation of keys of any type). */
  private static Iterator<InternalRow> values(HashedRelation relation) {
    Iterator<ValueRowWithKeyIndex> values = CollectionConverters.asJava(relation.valuesWithKeyIndex());
    return new Iterator<InternalRow>() {
      @Override
      public boolean hasNext() {
        return values.hasNext();
      }

      @Override
      public InternalRow next() {
        return values.next().getValue();
      }
    };
  }

  /** Every row of a relation, key by key (a relation of long keys lists its rows no other way). */
  private static Iterator<InternalRow> byKey(HashedRelation relation) {
    Iterator<InternalRow> keys = CollectionConverters.asJava(relation.keys());
    return new Iterator<InternalRow>() {
      private Iterator<InternalRow> current = java.util.Collections.emptyIterator();

      @Override
      public boolean hasNext() {
        while (!current.hasNext() && keys.hasNext()) {
          scala.collection.Iterator<InternalRow> rows = relation.get(keys.next());
          if (rows != null) current = CollectionConverters.asJava(rows);
        }
        return current.hasNext();
      }

      @Override
      public InternalRow next() {
        if (!hasNext()) throw new java.util.NoSuchElementException();
        return current.next();
      }
    };
  }

  /** The rows as one Arrow IPC stream of the schema's columns. */
  static byte[] rows(Iterator<InternalRow> rows, StructType schema) {
    ArrowWriter writer = ArrowWriter.create(schema, "UTC", false, false);
    VectorSchemaRoot root = writer.root();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ArrowStreamWriter stream = new ArrowStreamWriter(root, null, Channels.newChannel(out))) {
      stream.start();
      int n = 0;
      while (rows.hasNext()) {
        writer.write(rows.next());
        if (++n == BATCH_ROWS) {
          writer.finish();
          stream.writeBatch();
          writer.reset();
          n = 0;
        }
      }
      if (n > 0) {
        writer.finish();
        stream.writeBatch();
      }
      stream.end();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      root.close();
    }
    return out.toByteArray();
  }
}
