//! Scheduler SPECs: parse, build the scheduler on a disk model, then drive it through a few
//! hundred requests from three contexts (enough for every tunable to reach the statistics, the
//! service trees and the timers), on virtual time.
#![no_main]

use antsched_core::{ClassId, ContextId, Nanos, Op, Request, RequestId, Scheduler};
use antsched_sim::SharedDevice;
use libfuzzer_sys::fuzz_target;

fn drive(sched: &mut dyn Scheduler, device: &SharedDevice) {
    let cap = device.capacity_sectors();
    let mut now: Nanos = 0;
    let mut in_flight: Option<(Request, Nanos)> = None;
    let mut issued = [0u32; 3];
    let enqueue = |sched: &mut dyn Scheduler, issued: &mut [u32; 3], ctx: usize, now: Nanos| {
        let sector = (ctx as u64 * cap / 3 + issued[ctx] as u64 * 128) % (cap - 128);
        let id = issued.iter().map(|&n| u64::from(n)).sum();
        let req = Request {
            id: RequestId(id),
            context: ContextId(ctx as u32),
            class: ClassId(ctx as u32 % 2),
            op: if ctx == 2 { Op::Write } else { Op::Read },
            sector,
            sectors: 128,
            sync: ctx != 2,
            issued: now,
            continuation: false,
        };
        issued[ctx] += 1;
        sched.enqueue(req, now);
    };
    for ctx in 0..3 {
        enqueue(sched, &mut issued, ctx, now);
    }
    for _ in 0..600 {
        if in_flight.is_none() {
            if let Some(r) = sched.poll_dispatch(now) {
                let done = device.submit(&r, now).finish;
                in_flight = Some((r, done));
                continue;
            }
        }
        // Advance to the next completion or timer, whichever is first.
        let timer = sched.poll_timeout();
        match (in_flight, timer) {
            (Some((r, done)), t) if t.is_none_or(|t| done <= t) => {
                now = now.max(done);
                in_flight = None;
                sched.complete(r.id, now);
                let ctx = r.context.0 as usize;
                if issued[ctx] < 64 {
                    // A short think time, then the next request of the same context.
                    now = now.saturating_add(20_000);
                    enqueue(sched, &mut issued, ctx, now);
                } else {
                    sched.context_exited(r.context, now);
                }
            }
            (_, Some(t)) => now = now.max(t),
            (None, None) => break,
            (Some(_), None) => unreachable!(),
        }
    }
    let _ = (sched.pending(), sched.in_flight(), sched.anticipation());
}

fuzz_target!(|data: &[u8]| {
    let Ok(spec) = std::str::from_utf8(data) else {
        return;
    };
    let disk = antsched_disk::preset("deskstar-34gxp").expect("built-in disk");
    let device = SharedDevice::new(disk);
    let Ok(mut sched) = antsched_core::build(spec, &device.build_env(7)) else {
        return;
    };
    sched.set_class_weight(ClassId(1), 300);
    drive(&mut *sched, &device);
});
