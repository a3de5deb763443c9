#!/usr/bin/env bash
# Builds kiln-spark.jar (the plugin's JVM side) with javac against the jars of the installed
# pyspark (Maven Central is not needed): spark/build.sh [python] -> spark/target/kiln-spark.jar
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${1:-python3}"
JARS="$("$PYTHON" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
rm -rf target/classes && mkdir -p target/classes
javac --release 17 -nowarn -d target/classes -cp "$JARS/*" $(find src -name '*.java')
jar cf target/kiln-spark.jar -C target/classes .
echo "spark/target/kiln-spark.jar"
