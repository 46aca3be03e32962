//! The daemon's side of the channels for programs that do not hold a subscription: SIGMEM
//! registrations (`crate::sigmem`) and the systemd memory-pressure socket
//! (`crate::pressure_socket`). Kept apart from the loop so that the loop only calls in.

use std::path::Path;

use antsched_core::Nanos;
use antsched_mem::notify::Notifier;
use rustix::event::PollFlags;

use super::{Daemon, MACHINE};

impl Daemon {
    /// A `sigmem PID SIGNO [DOMAIN]` request of client `i`: the reply's text, or why not.
    pub(super) fn register_sigmem(&mut self, i: usize, arg: &str) -> Result<String, String> {
        let (pid, signo, domain) = crate::sigmem::parse(arg)?;
        let name = domain.unwrap_or_else(|| MACHINE.to_string());
        let found = self.domains.iter().find(|d| d.name == name).or_else(|| {
            let canonical = std::fs::canonicalize(&name).ok()?;
            self.domains
                .iter()
                .find(|d| Path::new(&d.name) == canonical)
        });
        let Some(d) = found else {
            return Err(format!("sigmem: no domain {name:?}"));
        };
        let (id, dname) = (d.id, d.name.clone());
        let fresh = self.fresh_notifier();
        self.sigmem
            .register(&self.clients[i].stream, pid, signo, id, &fresh)?;
        // The loop logs it with the client's id.
        Ok(if signo == 0 {
            format!("sigmem {pid} off")
        } else {
            format!("sigmem {pid} {signo} {dname}")
        })
    }

    /// The events of the pressure socket's descriptors, in the order it added them.
    pub(super) fn serve_pressure(&mut self, revents: &[PollFlags]) {
        let machine = self.domains[0].id;
        let fresh = self.fresh_notifier();
        let Some(p) = &mut self.pressure else {
            return;
        };
        let domains = &self.domains;
        let log = p.handle(
            revents,
            machine,
            |name| domains.iter().find(|d| d.name == name).map(|d| d.id),
            &fresh,
        );
        for line in log {
            self.log(format_args!("{line}"));
        }
    }

    /// The notification state of a new subscriber, of any channel: the configured S_max and
    /// repeat.
    pub(super) fn fresh_notifier(&self) -> Notifier {
        Notifier::with_repeat(
            self.config.severity.s_max,
            self.config.repeat.as_nanos().min(u64::MAX as u128) as Nanos,
        )
    }

    /// SIGMEM and the pressure socket, after the subscribers' eventfds.
    pub(super) fn notify_other(&mut self, now: Nanos) {
        let domains = &self.domains;
        let severity_of = |id: u64| {
            domains
                .iter()
                .find(|d| d.id == id)
                .map(|d| d.current.severity_s)
        };
        let s_max = self.config.severity.s_max;
        if let Some(p) = &mut self.pressure {
            p.notify(now, s_max, severity_of);
        }
        let log = if self.sigmem.is_empty() {
            Vec::new()
        } else {
            let nices = &self.nices;
            self.sigmem
                .notify(now, severity_of, |who, group| nices.nice_of(who, group))
        };
        for line in log {
            self.log(format_args!("{line}"));
        }
    }
}
