//! A progress bar on a terminal, nothing when output is piped.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress(ProgressBar);

impl Progress {
    /// A bar of `len` steps, shown as `pos/len`.
    pub fn new(len: u64, what: &str) -> Self {
        Self::with_template(len, "{msg} [{bar:30}] {pos}/{len} {elapsed}", what)
    }

    /// A bar for a share of work done (0 to 1), shown as a percentage.
    pub fn share(what: &str) -> Self {
        Self::with_template(1000, "{msg} [{bar:30}] {percent}% {elapsed}", what)
    }

    fn with_template(len: u64, template: &str, what: &str) -> Self {
        // indicatif draws to stderr only when it is a terminal; piped runs stay quiet.
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(template)
                .expect("a valid template")
                .progress_chars("=> "),
        );
        bar.set_message(what.to_string());
        Self(bar)
    }

    /// Moves a [`share`](Self::share) bar to `share` (0 to 1).
    pub fn set_share(&self, share: f64) {
        self.0.set_position((share.clamp(0.0, 1.0) * 1000.0) as u64);
    }

    pub fn inc(&self) {
        self.0.inc(1);
    }

    pub fn set_length(&self, len: u64) {
        self.0.set_length(len);
    }

    pub fn set_position(&self, pos: u64) {
        self.0.set_position(pos);
    }

    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}
