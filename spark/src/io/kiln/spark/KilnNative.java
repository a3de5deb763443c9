package io.kiln.spark;

/**
 * The native library's entry points (kiln-spark/src/lib.rs). Loaded from the path in the
 * system property {@code kiln.native.lib} or the environment variable {@code KILN_NATIVE_LIB},
 * else as {@code libkiln_spark.so} from {@code java.library.path}
 * ({@code spark.executor.extraLibraryPath}).
 */
public final class KilnNative {
  private KilnNative() {}

  private static volatile Throwable loadError;
  private static volatile boolean loaded;

  /** Loads the library once; afterwards the same answer. Null when loaded, else why not. */
  public static synchronized String load() {
    if (loaded) return null;
    if (loadError != null) return loadError.toString();
    try {
      String path = System.getProperty("kiln.native.lib");
      if (path == null || path.isEmpty()) path = System.getenv("KILN_NATIVE_LIB");
      if (path != null && !path.isEmpty()) System.load(path);
      else System.loadLibrary("kiln_spark");
      loaded = true;
      return null;
    } catch (Throwable t) {
      loadError = t;
      return t.toString();
    }
  }

  static void ensureLoaded() {
    String error = load();
    if (error != null) throw new KilnException("[KILN_NATIVE_LIBRARY_NOT_LOADED] " + error);
  }

  /** Null when kiln runs the subtree ({"plan": toJSON, "output": schema JSON}), else why not. */
  public static native String check(String plan);

  /**
   * Starts one task of the subtree over its Parquet splits and its inputs (an Arrow IPC stream
   * per input, in the order of the subtree's placeholders); a handle for next and close.
   */
  public static native long open(String plan, String[] paths, long[] starts, long[] lengths, byte[][] inputs);

  /** The task's next batch as an Arrow IPC stream, or null at its end. */
  public static native byte[] next(long handle);

  /** Stops the task and frees it. */
  public static native void close(long handle);
}
