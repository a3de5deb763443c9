package io.kiln.spark;

import java.util.Map;

import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * {@code spark.plugins=io.kiln.spark.KilnPlugin}: loads the native library when each executor
 * starts, so a missing library fails there with its reason rather than in the first task.
 */
public class KilnPlugin implements SparkPlugin {
  @Override
  public DriverPlugin driverPlugin() {
    return null;
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new ExecutorPlugin() {
      @Override
      public void init(PluginContext ctx, Map<String, String> extraConf) {
        KilnNative.ensureLoaded();
      }
    };
  }
}
