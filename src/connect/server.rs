//! The gRPC service: client sessions, and each RPC over them.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use spark_connect_proto as pb;
use spark_connect_proto::execute_plan_response::{ArrowBatch, ResponseType, ResultComplete, SqlCommandResult};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::error::ReportedError;
use super::execution::{operation_not_found, Execution, ExecutionLimits};
use super::service::spark_connect_service_server::{SparkConnectService, SparkConnectServiceServer};
use crate::error::{KilnError, Result};
use crate::exec::control::QueryControl;
use crate::session::Session;

/// The Spark version kiln answers to `spark.version`: the one whose plans and results it follows.
const SPARK_VERSION: &str = "4.3.0";
/// Errors kept per session for `FetchErrorDetails`.
const KEPT_ERRORS: usize = 32;
/// Rows per Arrow batch sent, so one response stays well under gRPC's message limits.
const ROWS_PER_MESSAGE: usize = 8192;
/// The largest request accepted (a `createDataFrame` of local rows travels in one).
const MAX_REQUEST_BYTES: usize = 512 << 20;

/// Settings pyspark's client reads that kiln does not apply: Spark's defaults, so the client
/// behaves as against Spark (plan compression off: kiln reads plans as sent).
const CLIENT_DEFAULTS: &[(&str, &str)] = &[
    ("spark.connect.session.planCompression.threshold", "-1"),
    ("spark.connect.session.planCompression.defaultAlgorithm", "NONE"),
    ("spark.sql.execution.arrow.pyspark.selfDestruct.enabled", "false"),
    ("spark.sql.execution.arrow.useLargeVarTypes", "false"),
    ("spark.sql.execution.pandas.convertToArrowArraySafely", "true"),
    ("spark.sql.execution.pandas.inferPandasDictAsMap", "false"),
    ("spark.sql.execution.pandas.structHandlingMode", "legacy"),
    ("spark.sql.execution.pyspark.binaryAsBytes", "true"),
    ("spark.sql.pyspark.inferNestedDictAsStruct.enabled", "false"),
    ("spark.sql.pyspark.jvmStacktrace.enabled", "false"),
    ("spark.sql.pyspark.legacy.inferArrayTypeFromFirstElement.enabled", "false"),
    ("spark.sql.pyspark.legacy.inferMapTypeFromFirstPair.enabled", "false"),
    ("spark.sql.repl.eagerEval.enabled", "false"),
    ("spark.sql.repl.eagerEval.maxNumRows", "20"),
    ("spark.sql.repl.eagerEval.truncate", "20"),
    ("spark.sql.session.localRelationBatchOfChunksSizeBytes", "1073741824"),
    // Local rows always travel inline (kiln keeps no artifacts), up to the request limit.
    ("spark.sql.session.localRelationCacheThreshold", "536870912"),
    ("spark.sql.session.localRelationChunkSizeBytes", "16777216"),
    ("spark.sql.session.localRelationChunkSizeRows", "10000"),
    ("spark.sql.session.localRelationSizeLimit", "536870912"),
    ("spark.sql.timestampType", "TIMESTAMP_LTZ"),
];

/// One client session: its kiln session, operations and recent errors.
struct ClientSession {
    session: Session,
    server_side_id: String,
    /// Operations by id, running or holding responses not yet released.
    executions: Mutex<HashMap<String, Arc<Execution>>>,
    errors: Mutex<VecDeque<(String, ReportedError)>>,
    last_used: Mutex<Instant>,
}

/// The server's own settings: Spark's `spark.connect.*` keys given to `kiln connect --conf`.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// `spark.connect.session.manager.defaultSessionTimeout`: a session unused this long is released.
    pub session_timeout: Duration,
    /// Limits on each execution.
    pub execution: ExecutionLimits,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions { session_timeout: Duration::from_secs(60 * 60), execution: ExecutionLimits::default() }
    }
}

impl ServerOptions {
    /// Sets a `spark.connect.*` key, with Spark's name and value syntax (`2m`, `1g`).
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let bytes = || -> Result<u64> { Ok(crate::config::parse_bytes(key, value)?.max(0) as u64) };
        match key {
            "spark.connect.session.manager.defaultSessionTimeout" => self.session_timeout = crate::config::parse_duration(key, value)?,
            "spark.connect.execute.manager.detachedTimeout" => self.execution.detached_timeout = crate::config::parse_duration(key, value)?,
            "spark.connect.execute.reattachable.senderMaxStreamDuration" => self.execution.sender_max_stream_duration = crate::config::parse_duration(key, value)?,
            "spark.connect.execute.reattachable.senderMaxStreamSize" => self.execution.sender_max_stream_size = bytes()?,
            "spark.connect.execute.reattachable.observerRetryBufferSize" => self.execution.retry_buffer_size = bytes()?,
            _ => {
                let known = ["spark.connect.session.manager.defaultSessionTimeout", "spark.connect.execute.manager.detachedTimeout", "spark.connect.execute.reattachable.senderMaxStreamDuration", "spark.connect.execute.reattachable.senderMaxStreamSize", "spark.connect.execute.reattachable.observerRetryBufferSize"];
                let hint = crate::error::closest_match(key, known.iter().copied()).map(|k| format!("; did you mean `{k}`?")).unwrap_or_default();
                return Err(KilnError::Config(format!("unknown Spark Connect server setting `{key}`{hint}")));
            }
        }
        Ok(())
    }
}

/// The Spark Connect service over kiln sessions made by a factory (the host's settings and
/// tables applied to each).
#[derive(Clone)]
pub struct ConnectServer {
    inner: Arc<Inner>,
}

struct Inner {
    new_session: Box<dyn Fn() -> Result<Session> + Send + Sync>,
    sessions: Mutex<HashMap<String, Arc<ClientSession>>>,
    options: ServerOptions,
    ids: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic elsewhere left the data as it was; the maps stay usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ConnectServer {
    /// A server whose client sessions are made by `new_session`, under `options`.
    pub fn new(new_session: impl Fn() -> Result<Session> + Send + Sync + 'static, options: ServerOptions) -> ConnectServer {
        ConnectServer { inner: Arc::new(Inner { new_session: Box::new(new_session), sessions: Mutex::default(), options, ids: AtomicU64::new(1) }) }
    }

    fn next_id(&self) -> String {
        let n = self.inner.ids.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        format!("{:08x}-{:04x}-4000-8000-{:012x}", (nanos >> 32) as u32, (nanos >> 16) as u16, n)
    }

    fn client(&self, session_id: &str) -> std::result::Result<Arc<ClientSession>, Status> {
        if session_id.is_empty() {
            return Err(ReportedError::invalid_plan("[INVALID_HANDLE.FORMAT] The handle is invalid: the request has no session id.").status(None));
        }
        let mut sessions = lock(&self.inner.sessions);
        let now = Instant::now();
        sessions.retain(|_, c| {
            let keep = now.duration_since(*lock(&c.last_used)) < self.inner.options.session_timeout || c.busy();
            if !keep {
                c.release_all();
            }
            keep
        });
        if let Some(c) = sessions.get(session_id) {
            *lock(&c.last_used) = now;
            lock(&c.executions).retain(|_, e| !e.finished());
            return Ok(c.clone());
        }
        let session = (self.inner.new_session)().map_err(|e| ReportedError::of(&e).status(None))?;
        let client = Arc::new(ClientSession {
            session,
            server_side_id: self.next_id(),
            executions: Mutex::default(),
            errors: Mutex::default(),
            last_used: Mutex::new(now),
        });
        sessions.insert(session_id.to_string(), client.clone());
        Ok(client)
    }
}

impl ClientSession {
    /// True while one of its operations has an RPC attached.
    fn busy(&self) -> bool {
        lock(&self.executions).values().any(|e| e.busy())
    }
    /// Releases every operation (their queries cancelled).
    fn release_all(&self) {
        for (_, e) in lock(&self.executions).drain() {
            e.release_all();
        }
        self.session.interrupt_all();
    }
    fn execution(&self, operation_id: &str) -> std::result::Result<Arc<Execution>, Status> {
        lock(&self.executions).get(operation_id).cloned().ok_or_else(|| self.report(operation_not_found(operation_id)))
    }
    /// The status of an error, kept for `FetchErrorDetails`.
    fn status(&self, err: &KilnError) -> Status {
        self.report(ReportedError::of(err))
    }
    fn report(&self, report: ReportedError) -> Status {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = format!("{}-e{}", self.server_side_id, NEXT.fetch_add(1, Ordering::Relaxed));
        let status = report.status(Some(&id));
        let mut errors = lock(&self.errors);
        if errors.len() == KEPT_ERRORS {
            errors.pop_front();
        }
        errors.push_back((id, report));
        status
    }
}

/// Runs the server on `addr` until the process ends; prints the address it listens on.
pub fn serve(addr: SocketAddr, server: ConnectServer) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| KilnError::internal(format!("cannot start the server's runtime: {e}")))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| KilnError::io(addr.to_string(), e))?;
        let local = listener.local_addr().map_err(|e| KilnError::io(addr.to_string(), e))?;
        eprintln!("kiln connect: listening on sc://{local}");
        let service = SparkConnectServiceServer::new(server).max_decoding_message_size(MAX_REQUEST_BYTES).max_encoding_message_size(usize::MAX);
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(tokio_stream::StreamExt::map(tokio_stream::wrappers::TcpListenerStream::new(listener), |stream| {
                // Without TCP_NODELAY a response's small messages (schema, batch, completion)
                // wait for the client's delayed ACK: about 40 ms per request.
                if let Ok(s) = &stream {
                    let _ = s.set_nodelay(true);
                }
                stream
            }))
            .await
            .map_err(|e| KilnError::io(local.to_string(), e))
    })
}

type ResponseStream = ReceiverStream<std::result::Result<pb::ExecutePlanResponse, Status>>;

/// One ExecutePlan's responses, with the ids the client checks, handed to its execution.
struct Responder {
    session_id: String,
    server_side_id: String,
    exec: Arc<Execution>,
}

impl Responder {
    fn response(&self, response_type: Option<ResponseType>, schema: Option<pb::DataType>) -> pb::ExecutePlanResponse {
        pb::ExecutePlanResponse {
            session_id: self.session_id.clone(),
            server_side_session_id: self.server_side_id.clone(),
            operation_id: self.exec.operation_id.clone(),
            response_type,
            schema,
            ..Default::default()
        }
    }
    /// Queues a response; false once no client will read it.
    fn send(&mut self, response_type: Option<ResponseType>, schema: Option<pb::DataType>) -> bool {
        self.exec.push(self.response(response_type, schema))
    }
}

/// Batches as one Arrow IPC stream (schema, batches, end).
fn ipc_stream(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>> {
    let mut out = vec![];
    // Interval columns in the Arrow types the client reads (the fields travel in the schema).
    let host = crate::types::host_arrow::host_batch(&RecordBatch::new_empty(schema.clone()))?.schema();
    let mut writer = arrow::ipc::writer::StreamWriter::try_new(&mut out, &host)?;
    // A batch of no columns and some rows cannot be read back (Arrow needs its row count); an
    // empty one stays, since the client needs a batch to build even an empty result.
    for b in batches.iter().filter(|b| b.num_columns() > 0 || b.num_rows() == 0) {
        writer.write(&crate::types::host_arrow::host_batch(b)?)?;
    }
    writer.finish()?;
    drop(writer);
    Ok(out)
}

/// Runs a plan and sends its results; Err when the client went away (nothing more to send).
fn execute(client: &ClientSession, plan: &pb::Plan, control: &Arc<QueryControl>, out: &mut Responder) -> Result<bool> {
    let session = &client.session;
    match plan.op_type.as_ref().ok_or_else(|| KilnError::unsupported("[CONNECT_INVALID_PLAN] the plan is empty"))? {
        pb::plan::OpType::Root(relation) => {
            let df = super::relation::dataframe(session, relation)?;
            let schema = df.schema();
            // The schema rides on the first batch's response: the client answers every response
            // with a ReleaseExecute, and one sent before the query has run costs it CPU while
            // the query runs.
            let mut schema_proto = Some(super::types::schema_to_proto(&schema)?);
            // Batches go out as the query yields them, small ones merged (a sort over many
            // partitions yields a sliver each, and the client pays per batch). The query runs
            // on this thread: a thread of its own would cost a start and two hand-offs a query.
            let mut offset = 0i64;
            let mut sent_any = false;
            let (mut pending, mut pending_rows): (Vec<RecordBatch>, usize) = (vec![], 0);
            // Sends the whole messages `next` completes (all that is left at the end, None);
            // false once the client is gone.
            let mut send = |next: Option<RecordBatch>| -> Result<bool> {
                let last = next.is_none();
                if let Some(b) = next {
                    pending_rows += b.num_rows();
                    pending.push(b);
                }
                if pending_rows < ROWS_PER_MESSAGE && !last {
                    return Ok(true);
                }
                let merged = match pending.len() {
                    0 => return Ok(true),
                    1 => pending.remove(0),
                    _ => arrow::compute::concat_batches(&schema, &pending)?,
                };
                pending.clear();
                // Whole messages now; a remainder waits for more rows unless this is the end.
                let ready = if last { merged.num_rows() } else { merged.num_rows() / ROWS_PER_MESSAGE * ROWS_PER_MESSAGE };
                pending_rows = merged.num_rows() - ready;
                if pending_rows > 0 {
                    pending.push(merged.slice(ready, pending_rows));
                }
                let mut start = 0;
                while start < ready {
                    let len = ROWS_PER_MESSAGE.min(ready - start);
                    let data = ipc_stream(&schema, &[merged.slice(start, len)])?;
                    let arrow = ArrowBatch { row_count: len as i64, data: data.into(), start_offset: Some(offset), ..Default::default() };
                    if !out.send(Some(ResponseType::ArrowBatch(arrow)), schema_proto.take()) {
                        return Ok(false);
                    }
                    offset += len as i64;
                    start += len;
                    sent_any = true;
                }
                Ok(true)
            };
            let (mut failed, mut gone) = (None, false);
            df.for_each_batch_with_control(control, &mut |b| match send(Some(b)) {
                Ok(go) => {
                    gone = !go;
                    go
                }
                Err(e) => {
                    failed = Some(e);
                    false
                }
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
            if gone || !send(None)? {
                return Ok(false);
            }
            if !sent_any {
                // An empty result still carries its Arrow schema.
                let data = ipc_stream(&schema, &[RecordBatch::new_empty(schema.clone())])?;
                let arrow = ArrowBatch { row_count: 0, data: data.into(), start_offset: Some(0), ..Default::default() };
                if !out.send(Some(ResponseType::ArrowBatch(arrow)), schema_proto.take()) {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        pb::plan::OpType::Command(command) => match command.command_type.as_ref() {
            Some(pb::command::CommandType::SqlCommand(c)) => {
                let sql = match c.input.as_ref().and_then(|r| r.rel_type.as_ref()) {
                    Some(pb::relation::RelType::Sql(s)) => s.clone(),
                    #[allow(deprecated)]
                    _ => pb::Sql { query: c.sql.clone(), args: c.args.clone(), pos_args: c.pos_args.clone(), named_arguments: c.named_arguments.clone(), pos_arguments: c.pos_arguments.clone() },
                };
                let args = super::relation::sql_args(&sql)?;
                let statements = crate::sql::parse_sql_with(&sql.query, args.as_ref(), session.parse_options()?)?;
                // A query runs when the client collects it; any other statement runs now and
                // its result travels back as local rows (as Spark's SqlCommand does).
                let relation = if let [crate::sql::Statement::Query(_)] = statements.as_slice() {
                    pb::Relation { common: None, rel_type: Some(pb::relation::RelType::Sql(sql)) }
                } else {
                    let df = match args {
                        None => session.sql(&sql.query)?,
                        Some(a) => session.sql_with_args(&sql.query, a)?,
                    };
                    let batches = df.collect_with_control(control)?;
                    let data = ipc_stream(&df.schema(), &batches)?;
                    pb::Relation { common: None, rel_type: Some(pb::relation::RelType::LocalRelation(pb::LocalRelation { data: Some(data.into()), schema: None })) }
                };
                Ok(out.send(Some(ResponseType::SqlCommandResult(SqlCommandResult { relation: Some(relation) })), None))
            }
            Some(pb::command::CommandType::CreateDataframeView(v)) => {
                let input = v.input.as_ref().ok_or_else(|| KilnError::unsupported("[CONNECT_INVALID_PLAN] createTempView without its input"))?;
                if v.is_global {
                    return Err(super::expression::unsupported("createGlobalTempView"));
                }
                let df = super::relation::dataframe(session, input)?;
                if !v.replace && session.table_names()?.iter().any(|t| t.eq_ignore_ascii_case(&v.name)) {
                    return Err(KilnError::analysis_with(
                        "TEMP_TABLE_OR_VIEW_ALREADY_EXISTS",
                        format!("[TEMP_TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create the temporary view `{}` because it already exists.", v.name),
                        &[("relationName", &format!("`{}`", v.name))],
                    ));
                }
                df.create_or_replace_temp_view(&v.name)?;
                Ok(true)
            }
            Some(pb::command::CommandType::WriteOperation(w)) => {
                super::command::write(session, w)?;
                Ok(true)
            }
            Some(other) => Err(super::expression::unsupported(format!("command {}", super::expression::variant_name(&format!("{other:?}"))))),
            None => Err(KilnError::unsupported("[CONNECT_INVALID_PLAN] the command is empty")),
        },
        pb::plan::OpType::CompressedOperation(_) => Err(compressed()),
    }
}

/// kiln answers `spark.connect.session.planCompression.threshold` with -1: clients send plain plans.
fn compressed() -> KilnError {
    super::expression::unsupported("a compressed plan")
}

fn explain_mode(mode: i32) -> crate::ExplainMode {
    use pb::analyze_plan_request::explain::ExplainMode as M;
    match M::try_from(mode) {
        Ok(M::Extended) => crate::ExplainMode::Extended,
        Ok(M::Codegen) => crate::ExplainMode::Codegen,
        Ok(M::Cost) => crate::ExplainMode::Cost,
        Ok(M::Formatted) => crate::ExplainMode::Formatted,
        _ => crate::ExplainMode::Simple,
    }
}

fn root<'a>(plan: Option<&'a pb::Plan>) -> Result<&'a pb::Relation> {
    match plan.and_then(|p| p.op_type.as_ref()) {
        Some(pb::plan::OpType::Root(r)) => Ok(r),
        Some(pb::plan::OpType::Command(_)) => Err(super::expression::unsupported("analyzing a command")),
        Some(pb::plan::OpType::CompressedOperation(_)) => Err(compressed()),
        None => Err(KilnError::unsupported("[CONNECT_INVALID_PLAN] the plan is empty")),
    }
}

fn analyze(session: &Session, analyze: &pb::analyze_plan_request::Analyze) -> Result<pb::analyze_plan_response::Result> {
    use pb::analyze_plan_request::Analyze as A;
    use pb::analyze_plan_response as r;
    Ok(match analyze {
        A::Schema(s) => {
            let df = super::relation::dataframe(session, root(s.plan.as_ref())?)?;
            r::Result::Schema(r::Schema { schema: Some(super::types::schema_to_proto(&df.schema())?) })
        }
        A::Explain(e) => {
            let df = super::relation::dataframe(session, root(e.plan.as_ref())?)?;
            r::Result::Explain(r::Explain { explain_string: df.explain_string(explain_mode(e.explain_mode))? })
        }
        A::TreeString(t) => {
            let df = super::relation::dataframe(session, root(t.plan.as_ref())?)?;
            r::Result::TreeString(r::TreeString { tree_string: df.schema_string() })
        }
        A::IsLocal(l) => {
            super::relation::dataframe(session, root(l.plan.as_ref())?)?;
            r::Result::IsLocal(r::IsLocal { is_local: false })
        }
        A::IsStreaming(l) => {
            super::relation::dataframe(session, root(l.plan.as_ref())?)?;
            r::Result::IsStreaming(r::IsStreaming { is_streaming: false })
        }
        A::Persist(p) => {
            let rel = p.relation.as_ref().ok_or_else(|| KilnError::unsupported("[CONNECT_INVALID_PLAN] persist() without its relation"))?;
            let df = super::relation::dataframe(session, rel)?;
            let level = p.storage_level.as_ref().map(super::types::storage_level).unwrap_or(crate::catalog::cached::StorageLevel::MEMORY_AND_DISK);
            session.cache_dataframe(&df, level, Some(prost::Message::encode_to_vec(rel)))?;
            r::Result::Persist(r::Persist {})
        }
        A::Unpersist(u) => {
            let rel = u.relation.as_ref().ok_or_else(|| KilnError::unsupported("[CONNECT_INVALID_PLAN] unpersist() without its relation"))?;
            let df = super::relation::dataframe(session, rel)?;
            session.uncache_dataframe(&df)?;
            r::Result::Unpersist(r::Unpersist {})
        }
        A::GetStorageLevel(g) => {
            let rel = g.relation.as_ref().ok_or_else(|| KilnError::unsupported("[CONNECT_INVALID_PLAN] storageLevel without its relation"))?;
            let df = super::relation::dataframe(session, rel)?;
            let level = df.storage_level()?.unwrap_or(crate::catalog::cached::StorageLevel::NONE);
            r::Result::GetStorageLevel(r::GetStorageLevel { storage_level: Some(super::types::storage_level_to_proto(&level)) })
        }
        A::SparkVersion(_) => r::Result::SparkVersion(r::SparkVersion { version: SPARK_VERSION.to_string() }),
        A::DdlParse(d) => {
            let parsed = match crate::sql::parse_data_type(&d.ddl_string) {
                Ok(t) => t,
                // `a INT, b STRING`: a struct's fields without the STRUCT<...> around them.
                Err(_) => crate::sql::parse_data_type(&format!("STRUCT<{}>", d.ddl_string))?,
            };
            r::Result::DdlParse(r::DdlParse { parsed: Some(super::types::to_proto(&parsed)?) })
        }
        other => return Err(super::expression::unsupported(format!("AnalyzePlan {}", super::expression::variant_name(&format!("{other:?}"))))),
    })
}

fn kv(key: &str, value: Option<String>) -> pb::KeyValue {
    pb::KeyValue { key: key.to_string(), value }
}

/// A setting's value as the client reads it: the session's, else Spark's default for a key
/// pyspark reads.
fn setting(session: &Session, key: &str) -> Result<Option<String>> {
    let config = session.config()?;
    if let Some(v) = config.explicit.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone()) {
        return Ok(Some(v));
    }
    Ok(config.get(key).or_else(|| CLIENT_DEFAULTS.iter().find(|(k, _)| *k == key).map(|(_, v)| v.to_string())))
}

fn conf_not_found(key: &str) -> KilnError {
    KilnError::analysis_with(
        "SQL_CONF_NOT_FOUND",
        format!("The SQL config \"{key}\" cannot be found. Please verify that the config exists."),
        &[("sqlConf", &format!("\"{key}\""))],
    )
}

fn config(session: &Session, op: &pb::config_request::operation::OpType) -> Result<(Vec<pb::KeyValue>, Vec<String>)> {
    use pb::config_request::operation::OpType as Op;
    let mut pairs = vec![];
    match op {
        Op::Set(s) => {
            for p in &s.pairs {
                session.set_conf_from_query(&p.key, p.value.as_deref().unwrap_or(""))?;
            }
        }
        Op::Get(g) => {
            for k in &g.keys {
                pairs.push(kv(k, Some(setting(session, k)?.ok_or_else(|| conf_not_found(k))?)));
            }
        }
        Op::GetWithDefault(g) => {
            for p in &g.pairs {
                pairs.push(kv(&p.key, setting(session, &p.key)?.or_else(|| p.value.clone())));
            }
        }
        Op::GetOption(g) => {
            for k in &g.keys {
                pairs.push(kv(k, setting(session, k)?));
            }
        }
        Op::GetAll(g) => {
            let mut set = session.config()?.explicit;
            set.sort();
            set.dedup_by(|a, b| a.0 == b.0);
            for (k, v) in set {
                if g.prefix.as_deref().is_none_or(|p| k.starts_with(p)) {
                    pairs.push(kv(&k, Some(v)));
                }
            }
        }
        Op::Unset(u) => {
            for k in &u.keys {
                session.reset_conf_from_query(Some(k))?;
            }
        }
        Op::IsModifiable(m) => {
            for k in &m.keys {
                let known = crate::config::SETTINGS.iter().any(|s| s.key == k);
                pairs.push(kv(k, Some((known && !crate::config::is_static(k)).to_string())));
            }
        }
    }
    Ok((pairs, vec![]))
}

fn not_served(what: &str) -> Status {
    ReportedError::of(&super::expression::unsupported(what)).status(None)
}

#[tonic::async_trait]
impl SparkConnectService for ConnectServer {
    type ExecutePlanStream = ResponseStream;
    type ReattachExecuteStream = ResponseStream;

    async fn execute_plan(&self, request: Request<pb::ExecutePlanRequest>) -> std::result::Result<Response<ResponseStream>, Status> {
        let req = request.into_inner();
        let client = self.client(&req.session_id)?;
        let operation_id = req.operation_id.clone().filter(|id| !id.is_empty()).unwrap_or_else(|| self.next_id());
        use pb::execute_plan_request::request_option::RequestOption;
        let reattachable = req.request_options.iter().any(|o| matches!(&o.request_option, Some(RequestOption::ReattachOptions(r)) if r.reattachable));
        let control = Arc::new(QueryControl::default());
        let exec = Execution::new(operation_id.clone(), req.tags.clone(), control.clone(), reattachable, self.inner.options.execution.clone());
        {
            let mut executions = lock(&client.executions);
            if executions.contains_key(&operation_id) {
                drop(executions);
                return Err(client.report(ReportedError {
                    classes: vec!["org.apache.spark.SparkSQLException"],
                    error_class: Some("INVALID_HANDLE.OPERATION_ALREADY_EXISTS".into()),
                    sql_state: Some("HY000".into()),
                    parameters: vec![("handle".into(), operation_id.clone())],
                    message: format!("[INVALID_HANDLE.OPERATION_ALREADY_EXISTS] The handle {operation_id} is invalid. Operation already exists."),
                }));
            }
            executions.insert(operation_id, exec.clone());
        }
        let stream = exec.stream(None)?;
        let mut out = Responder { session_id: req.session_id.clone(), server_side_id: client.server_side_id.clone(), exec: exec.clone() };
        tokio::task::spawn_blocking(move || {
            let plan = req.plan.unwrap_or_default();
            let last = match execute(&client, &plan, &control, &mut out) {
                Ok(true) => Ok(out.response(Some(ResponseType::ResultComplete(ResultComplete::default())), None)),
                // Nobody reads the rest.
                Ok(false) => return exec.release_all(),
                Err(e) => Err(client.status(&e)),
            };
            exec.finish(last);
        });
        Ok(Response::new(stream))
    }

    async fn analyze_plan(&self, request: Request<pb::AnalyzePlanRequest>) -> std::result::Result<Response<pb::AnalyzePlanResponse>, Status> {
        let req = request.into_inner();
        let client = self.client(&req.session_id)?;
        let analyze_request = req.analyze.ok_or_else(|| not_served("an empty AnalyzePlan"))?;
        let c = client.clone();
        let result = tokio::task::spawn_blocking(move || analyze(&c.session, &analyze_request))
            .await
            .map_err(|e| client.status(&KilnError::internal(format!("AnalyzePlan task failed: {e}"))))?
            .map_err(|e| client.status(&e))?;
        Ok(Response::new(pb::AnalyzePlanResponse { session_id: req.session_id, server_side_session_id: client.server_side_id.clone(), result: Some(result) }))
    }

    async fn config(&self, request: Request<pb::ConfigRequest>) -> std::result::Result<Response<pb::ConfigResponse>, Status> {
        let req = request.into_inner();
        let client = self.client(&req.session_id)?;
        let op = req.operation.and_then(|o| o.op_type).ok_or_else(|| not_served("an empty Config request"))?;
        let (pairs, warnings) = config(&client.session, &op).map_err(|e| client.status(&e))?;
        Ok(Response::new(pb::ConfigResponse { session_id: req.session_id, server_side_session_id: client.server_side_id.clone(), pairs, warnings }))
    }

    async fn add_artifacts(&self, _request: Request<tonic::Streaming<pb::AddArtifactsRequest>>) -> std::result::Result<Response<pb::AddArtifactsResponse>, Status> {
        Err(not_served("AddArtifacts (Python UDFs, jars, cached local relations)"))
    }

    async fn artifact_status(&self, request: Request<pb::ArtifactStatusesRequest>) -> std::result::Result<Response<pb::ArtifactStatusesResponse>, Status> {
        let req = request.into_inner();
        let client = self.client(&req.session_id)?;
        let statuses = req.names.into_iter().map(|n| (n, pb::artifact_statuses_response::ArtifactStatus { exists: false })).collect();
        Ok(Response::new(pb::ArtifactStatusesResponse { session_id: req.session_id, server_side_session_id: client.server_side_id.clone(), statuses }))
    }

    async fn interrupt(&self, request: Request<pb::InterruptRequest>) -> std::result::Result<Response<pb::InterruptResponse>, Status> {
        use pb::interrupt_request::{Interrupt, InterruptType};
        let req = request.into_inner();
        let client = self.client(&req.session_id)?;
        let mut interrupted_ids = vec![];
        for (id, exec) in lock(&client.executions).iter() {
            let hit = match (InterruptType::try_from(req.interrupt_type), &req.interrupt) {
                (Ok(InterruptType::All), _) => true,
                (Ok(InterruptType::Tag), Some(Interrupt::OperationTag(tag))) => exec.tags.contains(tag),
                (Ok(InterruptType::OperationId), Some(Interrupt::OperationId(op))) => id == op,
                _ => false,
            };
            if hit && exec.interrupt() {
                interrupted_ids.push(id.clone());
            }
        }
        Ok(Response::new(pb::InterruptResponse { session_id: req.session_id, server_side_session_id: client.server_side_id.clone(), interrupted_ids }))
    }

    async fn reattach_execute(&self, request: Request<pb::ReattachExecuteRequest>) -> std::result::Result<Response<ResponseStream>, Status> {
        let req = request.into_inner();
        let client = self.client(&req.session_id)?;
        let exec = client.execution(&req.operation_id)?;
        Ok(Response::new(exec.stream(req.last_response_id.as_deref())?))
    }

    async fn release_execute(&self, request: Request<pb::ReleaseExecuteRequest>) -> std::result::Result<Response<pb::ReleaseExecuteResponse>, Status> {
        let req = request.into_inner();
        let client = self.client(&req.session_id)?;
        use pb::release_execute_request::Release;
        // An operation already gone needs no release.
        let exec = lock(&client.executions).get(&req.operation_id).cloned();
        match (exec, &req.release) {
            (Some(exec), Some(Release::ReleaseUntil(until))) => exec.release_until(&until.response_id),
            (Some(exec), Some(Release::ReleaseAll(_)) | None) => {
                exec.release_all();
                lock(&client.executions).remove(&req.operation_id);
            }
            (None, _) => {}
        }
        Ok(Response::new(pb::ReleaseExecuteResponse { session_id: req.session_id, server_side_session_id: client.server_side_id.clone(), operation_id: Some(req.operation_id) }))
    }

    async fn release_session(&self, request: Request<pb::ReleaseSessionRequest>) -> std::result::Result<Response<pb::ReleaseSessionResponse>, Status> {
        let req = request.into_inner();
        let released = lock(&self.inner.sessions).remove(&req.session_id);
        let server_side_session_id = match released {
            Some(c) => {
                c.release_all();
                c.server_side_id.clone()
            }
            None => String::new(),
        };
        Ok(Response::new(pb::ReleaseSessionResponse { session_id: req.session_id, server_side_session_id }))
    }

    async fn fetch_error_details(&self, request: Request<pb::FetchErrorDetailsRequest>) -> std::result::Result<Response<pb::FetchErrorDetailsResponse>, Status> {
        use pb::fetch_error_details_response::{Error, SparkThrowable};
        let req = request.into_inner();
        let client = self.client(&req.session_id)?;
        let found = lock(&client.errors).iter().find(|(id, _)| *id == req.error_id).map(|(_, r)| r.clone());
        let errors = found
            .map(|r| {
                vec![Error {
                    error_type_hierarchy: r.classes.iter().map(|c| c.to_string()).collect(),
                    message: r.message.clone(),
                    spark_throwable: Some(SparkThrowable {
                        error_class: r.error_class.clone(),
                        message_parameters: r.parameters.iter().cloned().collect(),
                        sql_state: r.sql_state.clone(),
                        ..Default::default()
                    }),
                    ..Default::default()
                }]
            })
            .unwrap_or_default();
        let root_error_idx = (!errors.is_empty()).then_some(0);
        Ok(Response::new(pb::FetchErrorDetailsResponse { session_id: req.session_id, server_side_session_id: client.server_side_id.clone(), root_error_idx, errors }))
    }

    async fn clone_session(&self, _request: Request<pb::CloneSessionRequest>) -> std::result::Result<Response<pb::CloneSessionResponse>, Status> {
        Err(not_served("CloneSession"))
    }

    async fn get_status(&self, _request: Request<pb::GetStatusRequest>) -> std::result::Result<Response<pb::GetStatusResponse>, Status> {
        Err(not_served("GetStatus"))
    }
}
