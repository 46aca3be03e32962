//! Runs `STEPS` steps of the dispatch-decision bench's pool (`benches/common/pool.rs`) under
//! one scheduler, for counting instructions, which a shared or virtual machine does not move
//! as it moves times:
//!
//! ```text
//! cargo build --release -p antsched-core --example dispatch_steps
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/dispatch_steps sptf 4096 0
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/dispatch_steps sptf 4096 20000
//! ```
//!
//! The difference of the two `I refs` over 20,000 is one step's instructions: one decision,
//! the chosen request's completion and its context's next request.

#[path = "../benches/common/pool.rs"]
mod pool;

use pool::Pool;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: dispatch_steps SPEC CONTEXTS STEPS";
    let [_, spec, n, steps] = &args[..] else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let (Ok(n), Ok(steps)) = (n.parse::<u32>(), steps.parse::<u64>()) else {
        eprintln!("{usage} (CONTEXTS and STEPS are counts)");
        std::process::exit(2);
    };
    let mut p = match Pool::new(spec, n) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("dispatch_steps: scheduler {spec:?}: {e}");
            std::process::exit(2);
        }
    };
    for _ in 0..steps {
        p.step();
    }
    println!("{spec}: {steps} steps with {n} contexts");
}
