package io.kiln.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

import org.apache.spark.Partition;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A subtree of Spark's physical plan run by kiln: one kiln task per partition of the subtree's
 * Parquet scan (the splits Spark assigned), producing columnar batches.
 */
public class KilnExec extends SparkPlan {
  private final SparkPlan replaced;
  private final String request;

  /**
   * A test hook: a file path; the first kiln task that creates the file fails after its first
   * batch, as a lost executor's task would, so that Spark's retry of it can be checked.
   */
  public static final String FAIL_TASK_ONCE = "spark.kiln.test.failTaskOnce";

  public KilnExec(SparkPlan replaced, String request) {
    this.replaced = replaced;
    this.request = request;
    copyTagsFrom(replaced);
    unsetTagValue(KilnOverrides.FALLBACK);
  }

  /** The Spark subtree this node runs. */
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
      if (p.children().size() != 1) break;
      p = p.children().head();
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
  public Seq<SparkPlan> children() {
    return CollectionConverters.asScala(new ArrayList<SparkPlan>()).toList();
  }

  @Override
  public SparkPlan withNewChildrenInternal(IndexedSeq<SparkPlan> newChildren) {
    return this;
  }

  @Override
  public boolean supportsColumnar() {
    return true;
  }

  @Override
  public RDD<InternalRow> doExecute() {
    throw new UnsupportedOperationException("KilnExec produces columnar batches");
  }

  @Override
  public RDD<ColumnarBatch> doExecuteColumnar() {
    FileSourceScanExec scan = (FileSourceScanExec) replaced.collectLeaves().head();
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
    String failOnce = conf().getConfString(FAIL_TASK_ONCE, "");
    return jsc.parallelize(tasks, Math.max(1, tasks.size())).mapPartitions(new RunTask(request, failOnce)).rdd();
  }

  @Override
  public int productArity() {
    return 2;
  }

  @Override
  public Object productElement(int n) {
    return n == 0 ? replaced : request;
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

  /** Runs the subtree over one task's splits (at most one {@link Splits} per partition). */
  static final class RunTask implements FlatMapFunction<Iterator<Splits>, ColumnarBatch> {
    private final String request;
    private final String failOnce;

    RunTask(String request, String failOnce) {
      this.request = request;
      this.failOnce = failOnce;
    }

    @Override
    public Iterator<ColumnarBatch> call(Iterator<Splits> input) {
      if (!input.hasNext()) return Collections.emptyIterator();
      Splits s = input.next();
      KilnNative.ensureLoaded();
      KilnBatches batches = new KilnBatches(KilnNative.open(request, s.paths, s.starts, s.lengths));
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
