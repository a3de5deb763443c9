//! A progress line on stderr for a query that runs over a second: stages done of total, rows
//! and bytes scanned, elapsed time. Only when stderr is a terminal: piped output stays clean.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{HumanBytes, HumanCount, ProgressBar, ProgressDrawTarget, ProgressStyle};
use kiln::exec::control::{Progress, QueryControl};

/// How long a query runs before its progress shows.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Draws `control`'s progress until dropped.
pub struct ProgressLine {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ProgressLine {
    /// Starts watching; draws nothing when stderr is not a terminal.
    pub fn start(control: &Arc<QueryControl>) -> ProgressLine {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::io::stderr().is_terminal().then(|| {
            let (stop, control) = (stop.clone(), control.clone());
            std::thread::spawn(move || watch(&control, &stop))
        });
        ProgressLine { stop, thread }
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The progress line's text.
pub fn message(p: &Progress, elapsed: Duration) -> String {
    format!(
        "stage {}/{} | {} rows, {} scanned | {:.1} s",
        p.stages_done.min(p.stages_total),
        p.stages_total,
        HumanCount(p.rows_scanned),
        HumanBytes(p.bytes_scanned),
        elapsed.as_secs_f64()
    )
}

fn watch(control: &QueryControl, stop: &AtomicBool) {
    let start = Instant::now();
    let tick = Duration::from_millis(50);
    while start.elapsed() < SHOW_AFTER {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(tick);
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(ProgressStyle::with_template("{spinner} {msg}").unwrap_or_else(|_| ProgressStyle::default_spinner()));
    while !stop.load(Ordering::Relaxed) {
        bar.set_message(message(&control.progress(), start.elapsed()));
        bar.tick();
        std::thread::sleep(tick * 2);
    }
    bar.finish_and_clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_stages_rows_bytes_and_time() {
        let p = Progress { stages_done: 1, stages_total: 3, rows_scanned: 1_234_567, bytes_scanned: 3 << 20 };
        assert_eq!(message(&p, Duration::from_millis(2500)), "stage 1/3 | 1,234,567 rows, 3.00 MiB scanned | 2.5 s");
    }
}
