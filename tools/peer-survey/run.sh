#!/bin/sh
# Peer-corpus survey for kiln (not part of the repo: the corpora are other projects' files).
# 1. extract records from the bare mirrors (fetch github:gregrahn/sqllogictest, github:duckdb/duckdb,
#    github:apache/arrow-datafusion first; paths in extract.py)
# 2. run them through pyspark 4.3 (pip install pyspark==4.3.0; Java 17), keep what Spark answers as the
#    file expects; SQLite capped at 50 queries a file, DuckDB (every picked file) 30, DataFusion 120
# 3. run the Spark-passed records through kiln (expected = Spark's own rows and type letters) and
#    print pass rates and the table of failure causes
# Usage: sh run.sh [path/to/kiln]     (steps 1-2 take ~25 min; rerun only step 3 with SKIP_SPARK=1)
set -e
cd /work/survey
KILN=${1:-/work/target-corpus/release/kiln}
if [ -z "$SKIP_SPARK" ]; then
  python3 extract.py
  SURVEY_ONLY=sqlite SURVEY_OUT=spark_sqlite.jsonl python3 spark_run.py > spark_sqlite.log 2>&1
  CAP_DUCKDB=30 CAP_DF=120 SURVEY_DUCK_FILES=700 SURVEY_ONLY=duckdb,datafusion SURVEY_OUT=spark_big.jsonl python3 spark_run.py > spark_big.log 2>&1
fi
cat spark_sqlite.jsonl spark_big.jsonl > spark_merged.jsonl
SURVEY_SPARK=spark_merged.jsonl python3 kiln_run.py "$KILN"
