//! One `ExecutePlan`: its query runs on a thread of its own and appends responses as its
//! batches arrive; each RPC attached to it (the `ExecutePlan`, then any `ReattachExecute`)
//! sends them in order from its cursor. A reattachable execution (Spark Connect's default since
//! 3.5) keeps what it sent until the client releases it (`ReleaseExecute`), within a retry
//! buffer, so a client whose stream broke resumes after the last response it got.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use spark_connect_proto as pb;
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

use super::error::ReportedError;
use crate::exec::control::QueryControl;

/// Responses produced and not yet sent before the query waits for its client.
const MAX_UNSENT: u64 = 16;

/// The server's limits on executions (Spark's `spark.connect.execute.*` settings).
#[derive(Clone, Debug)]
pub struct ExecutionLimits {
    /// `spark.connect.execute.manager.detachedTimeout`: how long an execution no RPC is
    /// attached to waits for a `ReattachExecute` before it is cancelled and dropped.
    pub detached_timeout: Duration,
    /// `spark.connect.execute.reattachable.senderMaxStreamDuration`: an RPC of a reattachable
    /// execution ends after this long (the client reattaches); zero: no limit.
    pub sender_max_stream_duration: Duration,
    /// `spark.connect.execute.reattachable.senderMaxStreamSize`: an RPC of a reattachable
    /// execution ends after sending this many bytes of results; zero: no limit.
    pub sender_max_stream_size: u64,
    /// `spark.connect.execute.reattachable.observerRetryBufferSize`: the bytes of sent,
    /// unreleased responses kept for a reattach.
    pub retry_buffer_size: u64,
}

impl Default for ExecutionLimits {
    fn default() -> Self {
        ExecutionLimits {
            detached_timeout: Duration::from_secs(5 * 60),
            sender_max_stream_duration: Duration::from_secs(2 * 60),
            sender_max_stream_size: 1 << 30,
            retry_buffer_size: 10 << 20,
        }
    }
}

/// A response, or the error that ended the execution.
#[derive(Clone)]
enum Item {
    Response(Box<pb::ExecutePlanResponse>, u64),
    Failure(Status),
}

/// What a sender does next.
enum Next {
    Send(Item, bool),
    Wait,
    /// Everything was sent, or the execution was released or another RPC took it over.
    Stop,
}

struct Buffer {
    /// Kept responses in order; the front one's index is `first` (indexes count from 1).
    kept: VecDeque<Item>,
    first: u64,
    produced: u64,
    /// The index of the last response the attached RPC sent (the producer waits on it).
    sent: u64,
    /// The index of the last response any RPC sent.
    high: u64,
    /// Bytes of responses kept after they were sent.
    sent_bytes: u64,
    done: bool,
    released: bool,
    /// The attached RPC's number: a sender whose number is older stops.
    attachment: u64,
    attached: bool,
    detached_at: Instant,
}

impl Buffer {
    fn item(&self, index: u64) -> Option<&Item> {
        index.checked_sub(self.first).and_then(|i| self.kept.get(i as usize))
    }
    fn bytes(item: &Item) -> u64 {
        match item {
            Item::Response(_, b) => *b,
            Item::Failure(_) => 0,
        }
    }
    /// Drops kept responses up to `index` (never one not yet sent).
    fn drop_until(&mut self, index: u64) {
        while self.first <= index.min(self.high) {
            match self.kept.pop_front() {
                Some(item) => self.sent_bytes = self.sent_bytes.saturating_sub(Self::bytes(&item)),
                None => break,
            }
            self.first += 1;
        }
    }
}

/// One operation: its id, tags and control, and its responses.
pub struct Execution {
    pub operation_id: String,
    pub tags: Vec<String>,
    pub control: Arc<QueryControl>,
    reattachable: bool,
    limits: ExecutionLimits,
    buffer: Mutex<Buffer>,
    /// Wakes a producer waiting for the client to take responses.
    taken: Condvar,
    /// Bumped at every change a sender waits for (a response, a release, a new attachment).
    changed: watch::Sender<u64>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn cursor_error(class: &str, text: &str, operation_id: &str) -> Status {
    ReportedError {
        classes: vec!["org.apache.spark.SparkSQLException"],
        error_class: Some(class.to_string()),
        sql_state: Some("HY109".into()),
        parameters: vec![],
        message: format!("[{class}] {text} (operation {operation_id})"),
    }
    .status(None)
}

/// Spark's error for an operation the server does not hold (never started, released or abandoned).
pub fn operation_not_found(operation_id: &str) -> ReportedError {
    ReportedError {
        classes: vec!["org.apache.spark.SparkSQLException"],
        error_class: Some("INVALID_HANDLE.OPERATION_NOT_FOUND".into()),
        sql_state: Some("HY000".into()),
        parameters: vec![("handle".into(), operation_id.to_string())],
        message: format!("[INVALID_HANDLE.OPERATION_NOT_FOUND] The handle {operation_id} is invalid. Operation not found."),
    }
}

impl Execution {
    pub fn new(operation_id: String, tags: Vec<String>, control: Arc<QueryControl>, reattachable: bool, limits: ExecutionLimits) -> Arc<Execution> {
        let buffer = Buffer {
            kept: VecDeque::new(),
            first: 1,
            produced: 0,
            sent: 0,
            high: 0,
            sent_bytes: 0,
            done: false,
            released: false,
            attachment: 0,
            attached: false,
            detached_at: Instant::now(),
        };
        Arc::new(Execution { operation_id, tags, control, reattachable, limits, buffer: Mutex::new(buffer), taken: Condvar::new(), changed: watch::channel(0).0 })
    }

    fn response_id(&self, index: u64) -> String {
        format!("{}-{index}", self.operation_id)
    }
    fn index_of(&self, response_id: &str) -> Option<u64> {
        response_id.strip_prefix(&self.operation_id)?.strip_prefix('-')?.parse().ok()
    }
    fn wake_senders(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    /// Appends a response (its id set here), once the client has taken enough of those before
    /// it; false when nobody will read it (released, or detached too long): the query stops.
    pub fn push(&self, mut response: pb::ExecutePlanResponse) -> bool {
        let bytes = match &response.response_type {
            Some(pb::execute_plan_response::ResponseType::ArrowBatch(b)) => b.data.len() as u64,
            _ => 0,
        };
        let mut b = lock(&self.buffer);
        loop {
            if b.released {
                return false;
            }
            // A cancelled query runs on to its error, which the client must get.
            if b.produced - b.sent < MAX_UNSENT || self.control.is_cancelled() {
                break;
            }
            if !b.attached && b.detached_at.elapsed() >= self.limits.detached_timeout {
                drop(b);
                self.release_all();
                return false;
            }
            b = self.taken.wait_timeout(b, Duration::from_secs(1)).unwrap_or_else(|p| p.into_inner()).0;
        }
        b.produced += 1;
        response.response_id = self.response_id(b.produced);
        b.kept.push_back(Item::Response(Box::new(response), bytes));
        drop(b);
        self.wake_senders();
        true
    }

    /// Ends the execution with its last response (`ResultComplete`) or its error.
    pub fn finish(&self, last: Result<pb::ExecutePlanResponse, Status>) {
        if let Ok(response) = last {
            self.push(response);
        } else if let Err(status) = last {
            let mut b = lock(&self.buffer);
            b.produced += 1;
            b.kept.push_back(Item::Failure(status));
        }
        lock(&self.buffer).done = true;
        self.wake_senders();
    }

    /// Starts an RPC's cursor after the response `after` (the start when None); the RPC sends
    /// from there and any RPC attached before stops.
    fn attach(&self, after: Option<&str>) -> Result<(u64, u64), Status> {
        let mut b = lock(&self.buffer);
        if b.released {
            return Err(operation_not_found(&self.operation_id).status(None));
        }
        let start = match after {
            None => 1,
            Some(id) => match self.index_of(id) {
                Some(i) if i <= b.produced => i + 1,
                _ => return Err(cursor_error("INVALID_CURSOR.POSITION_NOT_FOUND", &format!("The response {id} was not found."), &self.operation_id)),
            },
        };
        if start < b.first {
            return Err(cursor_error("INVALID_CURSOR.POSITION_NOT_AVAILABLE", "The responses before the cursor were released.", &self.operation_id));
        }
        b.attachment += 1;
        b.attached = true;
        b.sent = start - 1;
        let attachment = b.attachment;
        drop(b);
        self.wake_senders();
        self.taken.notify_all();
        Ok((attachment, start))
    }

    fn next(&self, attachment: u64, index: u64) -> Next {
        let b = lock(&self.buffer);
        if b.released || b.attachment != attachment {
            return Next::Stop;
        }
        match b.item(index) {
            Some(item) => Next::Send(item.clone(), b.done && index == b.produced),
            None if b.done || index <= b.produced => Next::Stop,
            None => Next::Wait,
        }
    }

    /// The attached RPC sent response `index`: a non-reattachable execution drops it, a
    /// reattachable one keeps it within the retry buffer.
    fn sent(&self, attachment: u64, index: u64) {
        let mut b = lock(&self.buffer);
        if b.attachment != attachment {
            return;
        }
        b.sent = b.sent.max(index);
        if index <= b.high {
            // Sent again after a reattach: counted already.
        } else if self.reattachable {
            b.high = index;
            b.sent_bytes += b.item(index).map(Buffer::bytes).unwrap_or(0);
            while b.sent_bytes > self.limits.retry_buffer_size && b.first <= b.high {
                let first = b.first;
                b.drop_until(first);
            }
        } else {
            b.high = index;
            b.drop_until(index);
        }
        drop(b);
        self.taken.notify_all();
    }

    /// The RPC `attachment` ended before the last response: a reattachable execution waits
    /// for a reattach, any other is released (its query cancelled).
    fn detach(&self, attachment: u64) {
        let mut b = lock(&self.buffer);
        if b.attachment != attachment || !b.attached {
            return;
        }
        b.attached = false;
        b.detached_at = Instant::now();
        drop(b);
        if !self.reattachable {
            self.release_all();
        }
        self.taken.notify_all();
    }

    /// `ReleaseExecute` until `response_id`: the responses up to it are dropped.
    pub fn release_until(&self, response_id: &str) {
        if let Some(index) = self.index_of(response_id) {
            lock(&self.buffer).drop_until(index);
            self.taken.notify_all();
        }
    }

    /// `ReleaseExecute` of all: the execution ends (its query cancelled if running) and its
    /// responses are dropped.
    pub fn release_all(&self) {
        let mut b = lock(&self.buffer);
        b.released = true;
        b.kept.clear();
        let running = !b.done;
        drop(b);
        if running {
            self.control.cancel();
        }
        self.wake_senders();
        self.taken.notify_all();
    }

    /// `Interrupt`: cancels the query if it is still running; true if it was.
    pub fn interrupt(&self) -> bool {
        let running = !lock(&self.buffer).done;
        if running {
            self.control.cancel();
            self.taken.notify_all();
        }
        running
    }

    /// True when the session no longer needs to hold the execution: released, sent whole
    /// without reattach, or detached longer than the timeout (then released here).
    pub fn finished(&self) -> bool {
        let b = lock(&self.buffer);
        if b.released || (!self.reattachable && b.done && b.sent == b.produced) {
            return true;
        }
        if !b.attached && b.detached_at.elapsed() >= self.limits.detached_timeout && b.attachment > 0 {
            drop(b);
            self.release_all();
            return true;
        }
        false
    }

    /// True while an RPC is attached to a running execution (its session is not idle).
    pub fn busy(&self) -> bool {
        let b = lock(&self.buffer);
        b.attached && !b.released
    }

    /// An RPC's stream of responses after `after` (from the start when None).
    pub fn stream(self: &Arc<Self>, after: Option<&str>) -> Result<ReceiverStream<Result<pb::ExecutePlanResponse, Status>>, Status> {
        let (attachment, mut index) = self.attach(after)?;
        let (tx, rx) = mpsc::channel(2);
        let exec = self.clone();
        tokio::spawn(async move {
            let mut changes = exec.changed.subscribe();
            let (started, mut bytes) = (Instant::now(), 0u64);
            loop {
                match exec.next(attachment, index) {
                    Next::Send(Item::Response(response, size), last) => {
                        if tx.send(Ok(*response)).await.is_err() {
                            exec.detach(attachment);
                            return;
                        }
                        exec.sent(attachment, index);
                        index += 1;
                        bytes += size;
                        let limits = &exec.limits;
                        let long = (limits.sender_max_stream_size > 0 && bytes >= limits.sender_max_stream_size)
                            || (!limits.sender_max_stream_duration.is_zero() && started.elapsed() >= limits.sender_max_stream_duration);
                        if last || (exec.reattachable && long) {
                            // Ended without `ResultComplete`: the client reattaches for the rest.
                            if !last {
                                exec.detach(attachment);
                            }
                            return;
                        }
                    }
                    Next::Send(Item::Failure(status), _) => {
                        let _ = tx.send(Err(status)).await;
                        exec.sent(attachment, index);
                        return;
                    }
                    Next::Stop => return,
                    Next::Wait => {
                        tokio::select! {
                            changed = changes.changed() => if changed.is_err() { return },
                            _ = tx.closed() => {
                                exec.detach(attachment);
                                return;
                            }
                        }
                    }
                }
            }
        });
        Ok(ReceiverStream::new(rx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(n: i64) -> pb::ExecutePlanResponse {
        let batch = pb::execute_plan_response::ArrowBatch { row_count: n, data: vec![0u8; 100].into(), ..Default::default() };
        pb::ExecutePlanResponse { response_type: Some(pb::execute_plan_response::ResponseType::ArrowBatch(batch)), ..Default::default() }
    }
    fn rows(item: &Next) -> i64 {
        match item {
            Next::Send(Item::Response(r, _), _) => match &r.response_type {
                Some(pb::execute_plan_response::ResponseType::ArrowBatch(b)) => b.row_count,
                _ => -1,
            },
            _ => -2,
        }
    }

    #[test]
    fn a_reattach_resumes_after_the_last_response_seen_until_released() {
        let exec = Execution::new("op".into(), vec![], Arc::new(QueryControl::default()), true, ExecutionLimits::default());
        for n in 1..=3 {
            assert!(exec.push(response(n)));
        }
        let (first, start) = exec.attach(None).expect("attaches");
        assert_eq!(start, 1);
        assert_eq!(rows(&exec.next(first, 1)), 1);
        exec.sent(first, 1);
        exec.sent(first, 2);
        // The client saw response 1 only (2 was lost on the way): it resumes at 2.
        let (second, start) = exec.attach(Some("op-1")).expect("reattaches");
        assert_eq!(start, 2);
        assert!(matches!(exec.next(first, 2), Next::Stop), "the older RPC stops");
        assert_eq!(rows(&exec.next(second, 2)), 2);
        assert!(matches!(exec.next(second, 4), Next::Wait));
        exec.finish(Ok(response(4)));
        assert!(matches!(exec.next(second, 4), Next::Send(_, true)), "the last response says so");
        exec.release_until("op-1");
        let err = exec.attach(Some("op-0")).err().expect("released");
        assert!(err.message().contains("INVALID_CURSOR.POSITION_NOT_AVAILABLE"), "{}", err.message());
        let err = exec.attach(Some("op-9")).err().expect("never sent");
        assert!(err.message().contains("INVALID_CURSOR.POSITION_NOT_FOUND"), "{}", err.message());
        assert!(!exec.finished());
        exec.release_all();
        assert!(exec.finished());
        let err = exec.attach(Some("op-1")).err().expect("released");
        assert!(err.message().contains("INVALID_HANDLE.OPERATION_NOT_FOUND"), "{}", err.message());
    }

    #[test]
    fn sent_responses_are_dropped_without_reattach_or_beyond_the_retry_buffer() {
        let plain = Execution::new("a".into(), vec![], Arc::new(QueryControl::default()), false, ExecutionLimits::default());
        let limits = ExecutionLimits { retry_buffer_size: 250, ..ExecutionLimits::default() };
        let kept = Execution::new("b".into(), vec![], Arc::new(QueryControl::default()), true, limits);
        for exec in [&plain, &kept] {
            let (at, _) = exec.attach(None).expect("attaches");
            for n in 1..=4 {
                assert!(exec.push(response(n)));
                exec.sent(at, n as u64);
            }
        }
        assert_eq!(lock(&plain.buffer).kept.len(), 0);
        // 100 bytes each, 250 kept at most: the last two.
        assert_eq!(lock(&kept.buffer).first, 3);
        assert!(kept.attach(Some("b-2")).is_ok());
        assert!(kept.attach(Some("b-1")).is_err());
    }

    #[test]
    fn a_detached_plain_execution_is_released_and_its_query_cancelled() {
        let control = Arc::new(QueryControl::default());
        let exec = Execution::new("op".into(), vec!["t".into()], control.clone(), false, ExecutionLimits::default());
        let (at, _) = exec.attach(None).expect("attaches");
        assert!(exec.push(response(1)));
        exec.detach(at);
        assert!(control.check().is_err(), "cancelled");
        assert!(!exec.push(response(2)), "nobody reads it");
        assert!(exec.finished());
    }

    #[test]
    fn a_producer_waits_for_its_client_and_interrupt_reaches_a_running_query() {
        let control = Arc::new(QueryControl::default());
        let exec = Execution::new("op".into(), vec![], control.clone(), true, ExecutionLimits::default());
        let (at, _) = exec.attach(None).expect("attaches");
        for n in 0..MAX_UNSENT {
            assert!(exec.push(response(n as i64)));
        }
        let producer = {
            let exec = exec.clone();
            std::thread::spawn(move || exec.push(response(99)))
        };
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(lock(&exec.buffer).produced, MAX_UNSENT, "waits while the client is behind");
        exec.sent(at, 1);
        assert!(producer.join().expect("producer"));
        assert!(exec.interrupt());
        assert!(control.check().is_err());
        exec.finish(Err(Status::cancelled("x")));
        assert!(!exec.interrupt(), "finished: nothing to interrupt");
    }
}
