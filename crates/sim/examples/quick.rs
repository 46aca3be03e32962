use antsched_sim::{fio, simulate};
fn main() {
    let parv = std::env::args().nth(1).unwrap();
    let job = std::env::args().nth(2).unwrap();
    let jobs = fio::JobFile::load(&job).unwrap();
    let model = antsched_disk::preset(&parv).unwrap();
    for spec in std::env::args().skip(3) {
        let r = simulate(&jobs, model.clone_box(), &spec, 1).unwrap();
        println!("{spec:20} {:7.2} MB/s util {:.3} waits {} hits {} to {} | {:?} | {:.0} req/s",
            r.throughput_mb_s, r.utilization, r.anticipation.waits, r.anticipation.hits, r.anticipation.timeouts,
            r.contexts.iter().map(|c| (c.bytes/1_000_000, (c.share*100.0).round())).collect::<Vec<_>>(),
            r.sim.unwrap().requests_per_s);
    }
}
