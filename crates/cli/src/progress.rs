//! A spinner on stderr with elapsed time and bytes written, for long foreground commands
//! run from a terminal (EXEC-5's progress events, shown to a person).

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use wavesh_exec::{Progress, ProgressSink};

/// The spinner; cleared when dropped.
pub struct Spinner {
    bar: ProgressBar,
}

impl Spinner {
    /// A spinner when stderr is a terminal, else nothing.
    pub fn start_if_terminal() -> Option<Spinner> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::new_spinner();
        let style = ProgressStyle::with_template("{spinner} running {elapsed} · {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        Some(Spinner { bar })
    }

    /// The sink that feeds this spinner.
    pub fn sink(&self) -> ProgressSink {
        let bar = self.bar.clone();
        Arc::new(move |progress: Progress| {
            if bar.is_hidden() {
                return;
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            bar.set_message(format!("{} written", human_bytes(progress.output_bytes)));
        })
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
