package io.kiln.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

import org.apache.spark.Partition;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction2;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.RowToColumnarExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A subtree of Spark's physical plan run by kiln, producing columnar batches: one kiln task per
 * partition of the subtree's Parquet scan (the splits Spark assigned) or of the shuffles it
 * reads. Its children are the subtree's inputs — Spark's broadcasts and shuffles — whose rows
 * each task hands kiln (a broadcast's whole, a shuffle's partition).
 */
public class KilnExec extends SparkPlan {
  private final SparkPlan replaced;
  private final String request;
  private final Seq<SparkPlan> inputs;

  /**
   * A test hook: a file path; the first kiln task that creates the file fails after its first
   * batch, as a lost executor's task would, so that Spark's retry of it can be checked.
   */
  public static final String FAIL_TASK_ONCE = "spark.kiln.test.failTaskOnce";

  public KilnExec(SparkPlan replaced, String request, Seq<SparkPlan> inputs) {
    this.replaced = replaced;
    this.request = request;
    this.inputs = inputs;
    copyTagsFrom(replaced);
    unsetTagValue(KilnOverrides.FALLBACK);
  }

  /** The Spark subtree this node runs (its inputs as they were when it was replaced). */
  public SparkPlan replaced() {
    return replaced;
  }

  @Override
  public String nodeName() {
    return "KilnExec";
  }

  @Override
  public String simpleString(int maxFields) {
    StringBuilder chain = new StringBuilder();
    SparkPlan p = replaced;
    while (true) {
      if (chain.length() > 0) chain.append(" <- ");
      chain.append(p.nodeName().trim());
      // Down the one child that is not an input (a join's stream side).
      List<SparkPlan> next = new ArrayList<>();
      for (SparkPlan c : CollectionConverters.asJava(p.children())) if (!KilnOverrides.isInput(c)) next.add(c);
      if (next.size() != 1) break;
      p = next.get(0);
    }
    List<String> names = new ArrayList<>();
    for (Attribute a : CollectionConverters.asJava(output())) names.add(a.toString());
    return "KilnExec [" + String.join(", ", names) + "] (" + chain + ")";
  }

  @Override
  public Seq<Attribute> output() {
    return replaced.output();
  }

  @Override
  public Partitioning outputPartitioning() {
    return replaced.outputPartitioning();
  }

  @Override
  public Seq<SortOrder> outputOrdering() {
    return replaced.outputOrdering();
  }

  @Override
  public Seq<SparkPlan> children() {
    return inputs;
  }

  @Override
  public SparkPlan withNewChildrenInternal(IndexedSeq<SparkPlan> newChildren) {
    return new KilnExec(replaced, request, newChildren.toList());
  }

  @Override
  public boolean supportsColumnar() {
    return true;
  }

  @Override
  public RDD<InternalRow> doExecute() {
    throw new UnsupportedOperationException("KilnExec produces columnar batches");
  }

  /** An input as Spark runs it: the row-to-columnar transition Spark puts above it is kiln's to make. */
  private static SparkPlan unwrap(SparkPlan input) {
    return input instanceof RowToColumnarExec ? ((RowToColumnarExec) input).child() : input;
  }

  @Override
  public RDD<ColumnarBatch> doExecuteColumnar() {
    List<SparkPlan> in = new ArrayList<>();
    for (SparkPlan c : CollectionConverters.asJava(inputs)) in.add(unwrap(c));
    Broadcast<?>[] broadcasts = new Broadcast<?>[in.size()];
    StructType[] schemas = new StructType[in.size()];
    List<RDD<InternalRow>> shuffles = new ArrayList<>();
    for (int i = 0; i < in.size(); i++) {
      schemas[i] = in.get(i).schema();
      if (KilnOverrides.isBroadcast(in.get(i))) broadcasts[i] = in.get(i).executeBroadcast();
      else shuffles.add(in.get(i).execute());
    }
    RunTask task = new RunTask(request, conf().getConfString(FAIL_TASK_ONCE, ""), broadcasts, schemas);
    if (shuffles.size() == 1) {
      return shuffles.get(0).toJavaRDD().mapPartitions(rows -> task.run(null, List.of(rows))).rdd();
    }
    if (shuffles.size() == 2) {
      JavaRDD<InternalRow> right = shuffles.get(1).toJavaRDD();
      return shuffles.get(0).toJavaRDD().zipPartitions(right, (FlatMapFunction2<Iterator<InternalRow>, Iterator<InternalRow>, ColumnarBatch>) (l, r) -> task.run(null, List.of(l, r))).rdd();
    }
    FileSourceScanExec scan = scanOf(replaced);
    List<Splits> tasks = new ArrayList<>();
    for (Partition p : scan.inputRDD().partitions()) {
      PartitionedFile[] files = ((FilePartition) p).files();
      Splits s = new Splits(files.length);
      for (int i = 0; i < files.length; i++) {
        s.paths[i] = files[i].filePath().toUri().getPath();
        s.starts[i] = files[i].start();
        s.lengths[i] = files[i].length();
      }
      tasks.add(s);
    }
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(sparkContext());
    return jsc.parallelize(tasks, Math.max(1, tasks.size())).mapPartitions(splits -> splits.hasNext() ? task.run(splits.next(), List.of()) : Collections.emptyIterator()).rdd();
  }

  /** The subtree's Parquet scan (not one below its inputs). */
  private static FileSourceScanExec scanOf(SparkPlan plan) {
    if (plan instanceof FileSourceScanExec) return (FileSourceScanExec) plan;
    if (KilnOverrides.isInput(plan)) return null;
    for (SparkPlan c : CollectionConverters.asJava(plan.children())) {
      FileSourceScanExec s = scanOf(c);
      if (s != null) return s;
    }
    return null;
  }

  @Override
  public int productArity() {
    return 3;
  }

  @Override
  public Object productElement(int n) {
    return n == 0 ? replaced : n == 1 ? request : inputs;
  }

  @Override
  public boolean canEqual(Object that) {
    return that instanceof KilnExec;
  }

  /** One task's Parquet file ranges. */
  static final class Splits implements Serializable {
    final String[] paths;
    final long[] starts;
    final long[] lengths;

    Splits(int n) {
      paths = new String[n];
      starts = new long[n];
      lengths = new long[n];
    }
  }

  /** Runs the subtree as one task: over its splits or its shuffles' rows, with the broadcasts. */
  static final class RunTask implements Serializable {
    private final String request;
    private final String failOnce;
    /** Per input: its broadcast, or null for a shuffle. */
    private final Broadcast<?>[] broadcasts;
    private final StructType[] schemas;

    RunTask(String request, String failOnce, Broadcast<?>[] broadcasts, StructType[] schemas) {
      this.request = request;
      this.failOnce = failOnce;
      this.broadcasts = broadcasts;
      this.schemas = schemas;
    }

    Iterator<ColumnarBatch> run(Splits splits, List<Iterator<InternalRow>> shuffles) {
      Splits s = splits == null ? new Splits(0) : splits;
      KilnNative.ensureLoaded();
      byte[][] inputs = new byte[schemas.length][];
      int next = 0;
      for (int i = 0; i < inputs.length; i++) {
        inputs[i] = broadcasts[i] != null ? KilnInputs.broadcast(broadcasts[i].value(), schemas[i]) : KilnInputs.rows(shuffles.get(next++), schemas[i]);
      }
      KilnBatches batches = new KilnBatches(KilnNative.open(request, s.paths, s.starts, s.lengths, inputs));
      TaskContext task = TaskContext.get();
      if (task != null) task.addTaskCompletionListener((org.apache.spark.util.TaskCompletionListener) ctx -> batches.close());
      if (!failOnce.isEmpty() && claim(failOnce)) return failingAfterFirst(batches);
      return batches;
    }

    private static boolean claim(String path) {
      try {
        return new java.io.File(path).createNewFile();
      } catch (java.io.IOException e) {
        return false;
      }
    }

    /** The task's batches up to its first, then the hook's failure. */
    private static Iterator<ColumnarBatch> failingAfterFirst(KilnBatches batches) {
      return new Iterator<ColumnarBatch>() {
        private boolean first = true;

        @Override
        public boolean hasNext() {
          if (first) return true;
          throw new KilnException("[KILN_TEST_TASK_KILLED] the test hook " + FAIL_TASK_ONCE + " failed this task once");
        }

        @Override
        public ColumnarBatch next() {
          first = false;
          if (batches.hasNext()) return batches.next();
          throw new KilnException("[KILN_TEST_TASK_KILLED] the test hook " + FAIL_TASK_ONCE + " failed this task once");
        }
      };
    }
  }
}
