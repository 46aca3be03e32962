use antsched_disk::{DeviceModel, DiskRequest};
use std::path::Path;
fn main() {
    let dir = Path::new("/work/shared/data/disksim");
    let args: Vec<String> = std::env::args().skip(1).collect();
    for name in ["cheetah4LP", "atlas10k", "barracuda", "ibm18es"] {
        if !args.is_empty() && !args.iter().any(|a| a == name) {
            continue;
        }
        let r = antsched_disk::validate::validate(
            &dir.join(format!("{name}.parv")),
            &dir.join(format!("{name}.trace")),
        );
        match r {
            Ok(r) => {
                println!("{name}: demerit {:.3} (disksim {:?}) mean meas {:.3} model {:.3} | R {:.3}/{:.3} W {:.3}/{:.3}", r.demerit_ms, r.disksim_demerit_ms, r.mean_measured_ms, r.mean_model_ms, r.mean_measured_read_ms, r.mean_model_read_ms, r.mean_measured_write_ms, r.mean_model_write_ms);
                // breakdown replay
                let mut m = antsched_disk::load_disksim(dir.join(format!("{name}.parv"))).unwrap();
                let tr = antsched_disk::validate::read_trace(&dir.join(format!("{name}.trace")))
                    .unwrap();
                let mut t = 0u64;
                let mut f =
                    String::from("index,op,sector,sectors,measured_ms,model_ms,seek,rot,hit,cyl\n");
                for (i, q) in tr.iter().enumerate() {
                    let c = m.submit(
                        &DiskRequest {
                            op: q.op,
                            lbn: q.lbn,
                            sectors: q.sectors,
                        },
                        t,
                    );
                    let cyl = m.layout().lbn_to_pbn(q.lbn).cyl;
                    f += &format!(
                        "{},{:?},{},{},{:.4},{:.4},{:.4},{:.4},{},{}\n",
                        i,
                        q.op,
                        q.lbn,
                        q.sectors,
                        q.measured_us / 1000.0,
                        (c.finish - t) as f64 / 1e6,
                        c.service.seek as f64 / 1e6,
                        c.service.rotation as f64 / 1e6,
                        c.service.cache_hit as u8,
                        cyl
                    );
                    t = c.finish + (q.next_interarrival_us * 1000.0).round() as u64;
                }
                std::fs::write(format!("/tmp/ana/{name}.csv"), f).unwrap();
            }
            Err(e) => println!("{name}: error {e}"),
        }
    }
}
