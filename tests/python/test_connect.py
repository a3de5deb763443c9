"""pyspark's Spark Connect client against `kiln connect`: SQL, the DataFrame API, settings,
errors, parallel clients and a client that goes away mid-result. Results are compared with
kiln's own (`kiln sql`), so a difference is the protocol's, not the engine's.

    KILN=target/release/kiln python tests/python/test_connect.py   # or pytest

Needs pyspark 4.3.0 with its Connect client's dependencies (pandas, pyarrow, grpcio,
grpcio-status, googleapis-common-protos, zstandard), or the 4.2 client over them:

    pip install --no-deps --target /tmp/client42 "pyspark-client==4.2.0"
    PYTHONPATH=/tmp/client42 KILN=target/release/kiln python tests/python/test_connect.py

Starts a server on a free loopback port (and one more for the reattach test). Prints `N passed, M failed` and exits non-zero when a test fails or none ran.
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings

warnings.filterwarnings("ignore", category=FutureWarning)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_spark_roundtrip import kiln_csv, run_tests  # noqa: E402 - kiln's own answers, one helper for both files

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KILN = os.environ.get("KILN", os.path.join(ROOT, "target", "release", "kiln"))
REFERENCE = os.path.join(ROOT, "tests", "reference")

_server = None


def start_server(*confs):
    """A `kiln connect` server on a free loopback port with these `--conf`s: (process, URL)."""
    args = [KILN, "connect", "--port", "0"]
    for c in confs:
        args += ["--conf", c]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    match = re.search(r"sc://(\S+)", line)
    if not match:
        proc.kill()
        raise AssertionError(f"kiln connect did not start: {line!r}")
    # Keep reading its stderr so the server never blocks on a full pipe.
    threading.Thread(target=lambda: proc.stderr.read(), daemon=True).start()
    return proc, f"sc://{match.group(1)}"


def server_url():
    """The URL of the one shared `kiln connect` server, started on first use."""
    global _server
    if _server is None:
        # Tables saved by clients land in a warehouse of this run's own.
        warehouse = tempfile.mkdtemp(prefix="kiln-connect-warehouse-")
        proc, url = start_server(f"spark.sql.warehouse.dir={warehouse}")
        _server = (proc, url, warehouse)
    return _server[1]


def new_session():
    """A Spark Connect session of its own (its own session id on the server)."""
    from pyspark.sql import SparkSession

    return SparkSession.builder.remote(server_url()).create()


def text(column):
    """A column as kiln's CAST(.. AS STRING), NULL as `NULL` (the CLI's CSV prints NULL empty)."""
    return f"coalesce(CAST({column} AS STRING), 'NULL')"


def as_strings(df):
    """The rows as `text` of each column, computed through Connect."""
    cols = [f"c{i}" for i in range(len(df.columns))]
    return [list(r) for r in df.toDF(*cols).selectExpr(*[text(c) for c in cols]).collect()]


def dataset_tables(dataset):
    folder = os.path.join(REFERENCE, "data", dataset)
    return [(os.path.splitext(os.path.basename(p))[0], p) for p in sorted(glob.glob(os.path.join(folder, "*")))]


def header(sql, key):
    m = re.search(rf"^-- {key}:\s*(.*)$", sql, re.M)
    return m.group(1).strip() if m else None


def same(got, want, what):
    assert got == want, f"{what}:\nconnect: {got[:5]}\nkiln:    {want[:5]}"


def test_reference_and_tpch_queries_through_spark_sql():
    """Every reference query (the 22 TPC-H queries at SF 0.01 among them) through `spark.sql`,
    in one client session per dataset whose tables are temp views made with `read.parquet`."""
    sessions = {}
    checked = 0
    for path in sorted(glob.glob(os.path.join(REFERENCE, "queries", "*.sql"))):
        sql = open(path).read().strip().rstrip(";")
        dataset = header(sql, "dataset")
        if dataset not in sessions:
            s = new_session()
            for name, table in dataset_tables(dataset):
                s.read.parquet(table).createOrReplaceTempView(name)
            sessions[dataset] = s
        s = sessions[dataset]
        confs = [tuple(p.strip() for p in c.split("=", 1)) for c in (header(sql, "conf") or "").split(",") if "=" in c]
        for k, v in confs:
            s.conf.set(k, v)
        try:
            df = s.sql(sql)
            got = as_strings(df)
            typed = df.collect()
        finally:
            for k, _ in confs:
                s.conf.unset(k)
        casts = ", ".join(text(f"c{i}") for i in range(len(df.columns)))
        cols = ", ".join(f"c{i}" for i in range(len(df.columns)))
        want = kiln_csv(f"SELECT {casts} FROM (\n{sql}\n) AS q({cols})", dataset_tables(dataset), confs)
        if header(sql, "order") != "defined":
            got, want = sorted(got), sorted(want)
        same(got, want, os.path.basename(path))
        assert len(typed) == len(want), f"{path}: {len(typed)} typed rows, {len(want)} expected"
        checked += 1
    for s in sessions.values():
        s.stop()
    assert checked >= 39, f"only {checked} queries ran"


def test_dataframe_api():
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    s = new_session()
    tables = dataset_tables("tpch")
    lineitem = dict(tables)["lineitem"]
    orders = dict(tables)["orders"]
    li = s.read.parquet(lineitem)
    df = (
        li.filter(F.col("l_shipdate") <= F.lit("1998-09-02").cast("date"))
        .withColumn("disc_price", F.col("l_extendedprice") * (1 - F.col("l_discount")))
        .groupBy("l_returnflag", "l_linestatus")
        .agg(F.sum("l_quantity").alias("qty"), F.count("*").alias("n"), F.sum("disc_price").alias("revenue"))
        .orderBy("l_returnflag", "l_linestatus")
    )
    want = kiln_csv(
        f"SELECT {text('l_returnflag')}, {text('l_linestatus')}, {text('sum(l_quantity)')}, {text('count(*)')}, "
        f"{text('sum(l_extendedprice * (1 - l_discount))')} FROM lineitem WHERE l_shipdate <= CAST('1998-09-02' AS DATE) "
        "GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus",
        tables,
    )
    same(as_strings(df), want, "groupBy/agg/orderBy over read.parquet")
    assert df.count() == len(want)

    # join by column name, select, limit, distinct, union, withColumnRenamed, drop
    o = s.read.parquet(orders).select("o_orderkey", "o_orderpriority")
    joined = li.join(o, li.l_orderkey == o.o_orderkey).select("l_orderkey", "o_orderpriority").distinct()
    want = kiln_csv("SELECT count(*) FROM (SELECT DISTINCT l_orderkey, o_orderpriority FROM lineitem JOIN orders ON l_orderkey = o_orderkey)", tables)
    assert str(joined.count()) == want[0][0], (joined.count(), want)
    # columns of one name on both sides, told apart by their DataFrames
    a = s.createDataFrame([(1, "x"), (2, "y")], ["k", "v"])
    b = s.createDataFrame([(2, "z"), (3, "w")], ["k", "v"])
    pairs = a.join(b, a.k == b.k).collect()
    assert [tuple(r) for r in pairs] == [(2, "y", 2, "z")], pairs
    top = joined.orderBy(F.col("l_orderkey").desc()).limit(3).withColumnRenamed("o_orderpriority", "p").drop("l_orderkey")
    assert top.columns == ["p"], top.columns
    assert len(top.union(top).collect()) == 6

    # createDataFrame from lists and pandas, F.when, a window function, toPandas
    import pandas as pd

    people = s.createDataFrame([(1, "ann", 10.5), (2, "bob", None), (3, "cy", 7.25)], ["id", "name", "score"])
    from_pandas = s.createDataFrame(pd.DataFrame({"id": [1, 2, 3], "team": ["x", "y", "x"]}))
    both = people.join(from_pandas, "id")
    ranked = both.select(
        "name",
        F.when(F.col("score").isNull(), "none").otherwise("some").alias("has"),
        F.row_number().over(Window.partitionBy("team").orderBy(F.col("id").desc())).alias("rn"),
    ).orderBy("name")
    got = [tuple(r) for r in ranked.collect()]
    assert got == [("ann", "some", 2), ("bob", "none", 1), ("cy", "some", 1)], got
    pdf = ranked.toPandas()
    assert list(pdf.columns) == ["name", "has", "rn"] and len(pdf) == 3, pdf

    # show, explain("codegen"), the schema, spark.range
    shown = people._show_string(2, 20, False)
    assert "only showing top 2 rows" in shown and "|ann|" in shown.replace(" ", ""), shown
    plan = s.sql("SELECT id * 2 FROM range(10) WHERE id > 3")._explain_string(mode="codegen")
    assert "WholeStageCodegen" in plan, plan
    assert [f.name for f in people.schema.fields] == ["id", "name", "score"]
    assert s.range(0, 10, 3).collect()[-1].id == 9

    # df.write.parquet (partitioned, then overwritten), read back; saveAsTable
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "people")
        people.write.partitionBy("name").parquet(out)
        back = s.read.parquet(out).orderBy("id")
        assert [(r.id, r.name) for r in back.collect()] == [(1, "ann"), (2, "bob"), (3, "cy")], back.collect()
        people.filter("id > 1").write.mode("overwrite").parquet(out)
        assert s.read.parquet(out).count() == 2
        people.write.saveAsTable("people_copy")
        people.write.mode("append").saveAsTable("people_copy")
        assert s.table("people_copy").count() == 6

    # spark.read.csv
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.csv")
        with open(path, "w") as f:
            f.write("a,b\n1,x\n2,y\n")
        rows = s.read.option("header", "true").option("inferSchema", "true").csv(path).orderBy("a").collect()
        assert [tuple(r) for r in rows] == [(1, "x"), (2, "y")], rows
    s.stop()


def test_settings_are_sql_set():
    from pyspark.errors import AnalysisException

    s = new_session()
    assert s.conf.get("spark.sql.shuffle.partitions") == "200"
    s.conf.set("spark.sql.shuffle.partitions", "7")
    assert s.conf.get("spark.sql.shuffle.partitions") == "7"
    assert s.sql("SET spark.sql.shuffle.partitions").collect()[0].value == "7"
    s.conf.unset("spark.sql.shuffle.partitions")
    assert s.conf.get("spark.sql.shuffle.partitions") == "200"
    assert s.conf.isModifiable("spark.sql.shuffle.partitions")
    assert not s.conf.isModifiable("spark.sql.warehouse.dir")
    try:
        s.conf.set("spark.sql.warehouse.dir", "/tmp/elsewhere")
        raise AssertionError("a static key was set")
    except AnalysisException as e:
        assert "CANNOT_MODIFY" in (e.getCondition() or ""), e.getCondition()
    s.stop()


def test_errors_are_pyspark_exceptions():
    from pyspark.errors import (AnalysisException, ArithmeticException, ArrayIndexOutOfBoundsException,
                                NumberFormatException, ParseException, SparkNoSuchElementException)

    s = new_session()
    ansi = '"spark.sql.ansi.enabled"'
    # Spark 4.3's answers through its own Connect server: exception, error class, SQLSTATE and
    # the message parameters kiln gives as Spark does (a subset where kiln's words differ).
    cases = [
        ("SELECT nosuch", AnalysisException, "UNRESOLVED_COLUMN.WITHOUT_SUGGESTION", "42703", {"objectName": "`nosuch`"}),
        ("SELEC 1", ParseException, "PARSE_SYNTAX_ERROR", "42601", {"error": "'SELEC'", "hint": ""}),
        ("SELECT 1 / 0", ArithmeticException, "DIVIDE_BY_ZERO", "22012", {"config": ansi}),
        ("SELECT 1 % 0", ArithmeticException, "REMAINDER_BY_ZERO", "22012", {"config": ansi}),
        ("SELECT * FROM no_such_table", AnalysisException, "TABLE_OR_VIEW_NOT_FOUND", "42P01", {"relationName": "`no_such_table`"}),
        ("SELECT CAST('abc' AS INT)", NumberFormatException, "CAST_INVALID_INPUT", "22018",
         {"ansiConfig": ansi, "targetType": '"INT"', "expression": "'abc'", "sourceType": '"STRING"'}),
        ("SELECT CAST(1e20 AS INT)", ArithmeticException, "CAST_OVERFLOW", "22003",
         {"value": "1.0E20D", "ansiConfig": ansi, "targetType": '"INT"', "sourceType": '"DOUBLE"'}),
        ("SELECT 2147483647 + 1", ArithmeticException, "ARITHMETIC_OVERFLOW", "22003",
         {"alternative": " Use 'try_add' to tolerate overflow and return NULL instead.", "config": ansi}),
        ("SELECT array(1,2)[5]", ArrayIndexOutOfBoundsException, "INVALID_ARRAY_INDEX", "22003", {"arraySize": "2", "indexValue": "5"}),
        ("SELECT element_at(array(1,2), 5)", ArrayIndexOutOfBoundsException, "INVALID_ARRAY_INDEX_IN_ELEMENT_AT", "22003",
         {"arraySize": "2", "indexValue": "5"}),
        ("SELECT sum(id) FROM range(3) GROUP BY 2", AnalysisException, "GROUP_BY_POS_OUT_OF_RANGE", "42805", {"index": "2", "size": "1"}),
        ("SELECT abs(1, 2)", AnalysisException, "WRONG_NUM_ARGS.WITHOUT_SUGGESTION", "42605",
         {"actualNum": "2", "docroot": "https://spark.apache.org/docs/latest", "functionName": "`abs`", "expectedNum": "1"}),
    ]
    for sql, cls, condition, state, parameters in cases:
        try:
            s.sql(sql).collect()
            raise AssertionError(f"{sql} did not fail")
        except cls as e:
            assert e.getCondition() == condition, (sql, e.getCondition())
            assert e.getSqlState() == state, (sql, e.getSqlState())
            got = e.getMessageParameters() or {}
            assert {k: got.get(k) for k in parameters} == parameters, (sql, got)
            assert f"SQLSTATE: {state}" in str(e), (sql, str(e))
    try:
        s.conf.get("spark.nosuch.key")
        raise AssertionError("an unknown key was read")
    except SparkNoSuchElementException as e:
        assert (e.getCondition(), e.getSqlState()) == ("SQL_CONF_NOT_FOUND", "42K0I"), (e.getCondition(), e.getSqlState())
        assert e.getMessageParameters() == {"sqlConf": '"spark.nosuch.key"'}, e.getMessageParameters()
    try:
        s.conf.set("spark.sql.warehouse.dir", "/tmp/elsewhere")
        raise AssertionError("a static key was set")
    except AnalysisException as e:
        assert (e.getCondition(), e.getSqlState()) == ("CANNOT_MODIFY_STATIC_CONFIG", "46110"), (e.getCondition(), e.getSqlState())
        assert e.getMessageParameters() == {"key": '"spark.sql.warehouse.dir"'}, e.getMessageParameters()
    try:
        s.read.parquet("/nonexistent/path.parquet").collect()
        raise AssertionError("a missing path was read")
    except AnalysisException as e:
        assert (e.getCondition(), e.getSqlState()) == ("PATH_NOT_FOUND", "42K03"), (e.getCondition(), e.getSqlState())
        assert e.getMessageParameters() == {"path": "file:/nonexistent/path.parquet"}, e.getMessageParameters()
    from pyspark.sql import functions as F

    try:
        s.range(3).select(F.col("nope")).collect()
        raise AssertionError("an unknown column was selected")
    except AnalysisException as e:
        assert e.getCondition().startswith("UNRESOLVED_COLUMN"), e.getCondition()
    # The session still serves queries after its errors.
    assert s.sql("SELECT 41 + 1 AS x").collect()[0].x == 42
    s.stop()


def test_two_clients_in_parallel_keep_their_own_settings_and_views():
    a, b = new_session(), new_session()
    a.conf.set("spark.sql.shuffle.partitions", "3")
    b.conf.set("spark.sql.shuffle.partitions", "5")
    a.sql("CREATE TEMP VIEW mine AS SELECT 1 AS only_a")
    errors = []

    def work(s, partitions, sees_view):
        try:
            for _ in range(5):
                assert s.conf.get("spark.sql.shuffle.partitions") == partitions
                n = s.sql("SELECT count(*) AS n FROM range(200000) GROUP BY id % 7").count()
                assert n == 7, n
                try:
                    s.table("mine").collect()
                    assert sees_view, "a temp view leaked into another session"
                except AssertionError:
                    raise
                except Exception:
                    assert not sees_view, "a session lost its own temp view"
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(a, "3", True)), threading.Thread(target=work, args=(b, "5", False))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    a.stop()
    b.stop()


def test_cache_table_and_persist():
    """CACHE TABLE / spark.catalog and df.cache() / persist() / unpersist(): later queries read
    the cached rows (Spark's InMemoryRelation in their plans), with the same answers."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F
    from pyspark.storagelevel import StorageLevel

    s = new_session()
    tables = dataset_tables("tpch")
    s.read.parquet(dict(tables)["nation"]).createOrReplaceTempView("nation")
    query = "SELECT n_name FROM nation WHERE n_regionkey = 1"
    want = kiln_csv(f"SELECT count(*) FROM ({query})", tables)[0][0]
    s.sql("CACHE TABLE nation")
    assert s.catalog.isCached("nation")
    plan = s.sql(query)._explain_string(mode="simple")
    assert "Scan In-memory table nation" in plan and "InMemoryRelation" in plan, plan
    assert str(s.sql(query).count()) == want
    s.sql("UNCACHE TABLE nation")
    assert not s.catalog.isCached("nation")
    assert "InMemoryRelation" not in s.sql(query)._explain_string(mode="simple")
    s.catalog.cacheTable("nation")
    assert s.catalog.isCached("nation")
    s.catalog.clearCache()
    assert not s.catalog.isCached("nation")
    try:
        s.sql("CACHE TABLE no_such_table")
        raise AssertionError("a missing table was cached")
    except AnalysisException as e:
        assert e.getCondition() == "TABLE_OR_VIEW_NOT_FOUND", e.getCondition()

    # df.cache(): the DataFrame and those derived from it read the cache until unpersist().
    df = s.range(100).withColumn("sq", F.col("id") * F.col("id"))
    assert not df.is_cached
    df.cache()
    assert df.is_cached and df.storageLevel == StorageLevel.MEMORY_AND_DISK_DESER, df.storageLevel
    derived = df.filter("id > 90").select("sq")
    assert "InMemoryTableScan" in derived._explain_string(mode="simple")
    assert sorted(r.sq for r in derived.collect()) == [i * i for i in range(91, 100)]
    df.unpersist()
    assert not df.is_cached
    assert "InMemoryTableScan" not in derived._explain_string(mode="simple")
    assert derived.count() == 9
    s.stop()


CLIENT_THAT_LEAVES = """
import sys, warnings
warnings.filterwarnings("ignore")
from pyspark.sql import SparkSession
s = SparkSession.builder.remote(sys.argv[1]).create()
it = s.sql("SELECT id, repeat('x', 100) AS pad FROM range(3000000)").toLocalIterator()
next(it)
print("reading", flush=True)
import time
time.sleep(60)
"""


def test_client_that_disconnects_mid_result_leaves_the_server_healthy():
    url = server_url()
    # A script file, not `python -c`: pyspark-client 4.2 takes a main module without a file
    # for a doctest run and looks for a Spark installation.
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "client_that_leaves.py")
        with open(script, "w") as f:
            f.write(CLIENT_THAT_LEAVES)
        child = subprocess.Popen([sys.executable, script, url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = child.stdout.readline()
            assert "reading" in line, f"the client did not start reading: {line!r} {child.stderr.read() if child.poll() is not None else ''}"
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(30)
    time.sleep(0.5)
    s = new_session()
    assert s.sql("SELECT sum(id) AS t FROM range(1000)").collect()[0].t == 499500
    assert _server[0].poll() is None, "the server exited"
    s.stop()


def test_interrupt_all_and_by_tag_cancel_a_running_query():
    from pyspark.errors import PySparkException

    s = new_session()
    for how in ["all", "tag"]:
        outcome = []

        def run():
            try:
                if how == "tag":
                    # Tags are the calling thread's.
                    s.addTag("slow")
                s.sql("SELECT count(*) FROM range(1000000000000) a").collect()
                outcome.append("finished")
            except PySparkException as e:
                outcome.append(e)

        t = threading.Thread(target=run)
        t.start()
        deadline = time.time() + 30
        interrupted = []
        while not interrupted and time.time() < deadline:
            time.sleep(0.1)
            if how == "all":
                interrupted = s.interruptAll()
            else:
                assert s.interruptTag("other") == []
                interrupted = s.interruptTag("slow")
        t.join(60)
        assert interrupted, f"interrupt {how}: no operation was running to interrupt"
        assert outcome and outcome[0] != "finished", outcome
        assert "OPERATION_CANCELED" in str(outcome[0]), outcome[0]
    assert s.sql("SELECT 1 AS one").collect()[0].one == 1
    s.stop()


def test_a_client_reattaches_when_the_server_ends_its_stream():
    """With `senderMaxStreamSize` 1 byte each RPC ends after one batch without ResultComplete:
    pyspark's client reattaches after the last response it got, until the result is whole."""
    from pyspark.sql.connect.client.reattach import ExecutePlanResponseReattachableIterator as It
    from pyspark.sql import SparkSession

    proc, url = start_server("spark.connect.execute.reattachable.senderMaxStreamSize=1")
    reattaches = []
    original = It._create_reattach_execute_request

    def counted(self):
        reattaches.append(self._last_returned_response_id)
        return original(self)

    It._create_reattach_execute_request = counted
    try:
        s = SparkSession.builder.remote(url).create()
        rows = s.sql("SELECT id, id * 2 AS twice FROM range(50000)").collect()
        assert [r.id for r in rows] == list(range(50000)), "rows lost, repeated or out of order"
        assert all(r.twice == 2 * r.id for r in rows)
        # 50000 rows travel as 7 batches of at most 8192: one RPC each.
        assert len(reattaches) >= 6, reattaches
        s.stop()
    finally:
        It._create_reattach_execute_request = original
        proc.terminate()
        proc.wait(30)


def test_results_stream_and_an_operation_is_reattached_released_and_interrupted_by_id():
    """The protocol below pyspark's API: a result far larger than memory starts arriving at
    once (it is streamed, not collected); a reattach resumes after the given response even
    when the broken stream had sent more; Interrupt by operation id cancels it; once released,
    the operation is gone."""
    import uuid

    import grpc
    import pyspark.sql.connect.proto as pb2
    import pyspark.sql.connect.proto.base_pb2_grpc as grpc_lib

    channel = grpc.insecure_channel(server_url()[len("sc://"):])
    stub = grpc_lib.SparkConnectServiceStub(channel)
    session_id, user, op = str(uuid.uuid4()), pb2.UserContext(user_id="test"), str(uuid.uuid4())
    ids = dict(session_id=session_id, user_context=user, operation_id=op)
    request = pb2.ExecutePlanRequest(
        plan=pb2.Plan(root=pb2.Relation(sql=pb2.SQL(query="SELECT id FROM range(1000000000000)"))),
        request_options=[pb2.ExecutePlanRequest.RequestOption(reattach_options=pb2.ReattachOptions(reattachable=True))],
        **ids,
    )
    first = stub.ExecutePlan(request, timeout=30)
    batches = []
    for response in first:
        if response.HasField("arrow_batch"):
            batches.append(response)
            if len(batches) == 3:
                break
    first.cancel()
    assert [b.arrow_batch.start_offset for b in batches] == [0, 8192, 16384], [b.arrow_batch.start_offset for b in batches]

    # The client saw the second batch only: the stream resumes with the third.
    again = stub.ReattachExecute(pb2.ReattachExecuteRequest(last_response_id=batches[1].response_id, **ids), timeout=30)
    resumed = next(again)
    assert resumed.response_id == batches[2].response_id and resumed.arrow_batch.start_offset == 16384, resumed.response_id
    stub.ReleaseExecute(pb2.ReleaseExecuteRequest(release_until=pb2.ReleaseExecuteRequest.ReleaseUntil(response_id=resumed.response_id), **ids))

    other = stub.Interrupt(pb2.InterruptRequest(session_id=session_id, user_context=user, interrupt_type=pb2.InterruptRequest.INTERRUPT_TYPE_OPERATION_ID, operation_id="no-such-op"))
    assert list(other.interrupted_ids) == []
    hit = stub.Interrupt(pb2.InterruptRequest(session_id=session_id, user_context=user, interrupt_type=pb2.InterruptRequest.INTERRUPT_TYPE_OPERATION_ID, operation_id=op))
    assert list(hit.interrupted_ids) == [op], hit
    try:
        for _ in again:
            pass
        raise AssertionError("an interrupted operation completed")
    except grpc.RpcError as e:
        assert "OPERATION_CANCELED" in (e.details() or ""), e.details()

    # Released responses cannot be read again; a released operation is gone.
    try:
        next(stub.ReattachExecute(pb2.ReattachExecuteRequest(last_response_id=batches[0].response_id, **ids), timeout=30))
        raise AssertionError("a released response was sent again")
    except grpc.RpcError as e:
        assert "INVALID_CURSOR.POSITION_NOT_AVAILABLE" in (e.details() or ""), e.details()
    stub.ReleaseExecute(pb2.ReleaseExecuteRequest(release_all=pb2.ReleaseExecuteRequest.ReleaseAll(), **ids))
    try:
        next(stub.ReattachExecute(pb2.ReattachExecuteRequest(**ids), timeout=30))
        raise AssertionError("a released operation was reattached")
    except grpc.RpcError as e:
        assert "INVALID_HANDLE.OPERATION_NOT_FOUND" in (e.details() or ""), e.details()
    # 100 partitions of 10 rows arrive as one batch (the client pays per batch).
    small = pb2.ExecutePlanRequest(
        plan=pb2.Plan(root=pb2.Relation(sql=pb2.SQL(query="SELECT id FROM range(0, 1000, 1, 100)"))),
        session_id=session_id, user_context=user, operation_id=str(uuid.uuid4()),
    )
    sizes = [r.arrow_batch.row_count for r in stub.ExecutePlan(small, timeout=30) if r.HasField("arrow_batch")]
    assert sizes == [1000], sizes
    stub.ReleaseSession(pb2.ReleaseSessionRequest(session_id=session_id, user_context=user))
    channel.close()


def stop_server():
    if _server is not None:
        _server[0].terminate()
        _server[0].wait(30)
        shutil.rmtree(_server[2], ignore_errors=True)


def main():
    import pyspark

    print(f"pyspark {pyspark.__version__}'s Connect client against {KILN}")
    return run_tests(globals(), stop_server)


if __name__ == "__main__":
    sys.exit(main())
