//! A progress bar on stderr that appears only on a terminal, and only once a
//! run has taken more than a moment.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Delay before the bar appears, so short runs print nothing.
const SHOW_AFTER: Duration = Duration::from_millis(1500);

/// Progress over a known (or unknown) number of requests.
pub struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    shown: bool,
    total: Option<u64>,
}

impl Progress {
    /// A bar for `total` requests; silent when `quiet` or stderr is not a terminal.
    pub fn new(total: Option<u64>, quiet: bool) -> Self {
        let bar = if quiet || !std::io::stderr().is_terminal() {
            None
        } else {
            let b = match total {
                Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::hidden()),
                None => ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden()),
            };
            let style = ProgressStyle::with_template(
                "{msg:24} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} ({per_sec}, eta {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            b.set_style(style);
            Some(b)
        };
        Progress {
            bar,
            started: Instant::now(),
            shown: false,
            total,
        }
    }

    /// Reports `done` requests of phase `phase`.
    pub fn update(&mut self, done: u64, phase: &str) {
        let Some(b) = &self.bar else { return };
        if !self.shown && self.started.elapsed() >= SHOW_AFTER {
            b.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
        if phase == "run" {
            if let Some(n) = self.total {
                b.set_length(n);
            }
        } else {
            b.set_length(done.max(1));
        }
        b.set_message(phase.to_string());
        b.set_position(done);
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
