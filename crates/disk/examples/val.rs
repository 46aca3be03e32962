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
                let mut f = String::from("index,op,sector,sectors,measured_ms,model_ms\n");
                for q in &r.per_request {
                    f += &format!(
                        "{},{:?},{},{},{:.4},{:.4}\n",
                        q.index, q.op, q.sector, q.sectors, q.measured_ms, q.model_ms
                    );
                }
                std::fs::write(format!("/tmp/ana/{name}.csv"), f).unwrap();
            }
            Err(e) => println!("{name}: error {e}"),
        }
    }
}
