//! `antsched schedulers`: every scheduler, its tunables and their defaults.

use std::io::Write;

use antsched_core::registry::describe_default;

pub fn run(out: &mut dyn Write) -> anyhow::Result<()> {
    let cat = antsched_core::catalog();
    let width = cat.iter().map(|s| s.name.len()).max().unwrap_or(0);
    writeln!(
        out,
        "Schedulers (SPEC: NAME[:key=value,...]; durations take ns, us, ms or s, up to 3600s):"
    )?;
    for s in &cat {
        writeln!(out)?;
        writeln!(out, "{:width$}  {}", s.name, s.summary)?;
        let tw = s
            .tunables
            .iter()
            .map(|t| t.name.len() + describe_default(t).len() + 1)
            .max()
            .unwrap_or(0);
        for t in &s.tunables {
            let kv = format!("{}={}", t.name, describe_default(t));
            writeln!(out, "{:width$}    {kv:tw$}  {}", "", t.help)?;
        }
    }
    Ok(())
}
