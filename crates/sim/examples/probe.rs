use antsched_disk::{DeviceModel, DiskRequest};
fn main() {
    let mut m = antsched_disk::preset("deskstar-34gxp").unwrap();
    let far = 2_097_152u64;
    println!("between seq: {}", m.positioning_between(128, &DiskRequest::read(128, 128)));
    println!("between far: {}", m.positioning_between(128, &DiskRequest::read(far, 128)));
    let mut t = 0;
    for k in 0..4u64 {
        for base in [0, far] {
            let r = DiskRequest::read(base + k * 128, 128);
            let nxt = DiskRequest::read(base + (k + 1) * 128, 128);
            let other = DiskRequest::read((far - base) + (k + 1) * 128, 128);
            let c = m.submit(&r, t);
            println!("k{k} base{base}: {:?}", c.service);
            t = c.finish;
            println!("   after: pos(own next)={} pos(other next)={}", m.positioning_time(&nxt, t), m.positioning_time(&other, t));
        }
    }
}
