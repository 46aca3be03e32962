use antsched_disk::{DeviceModel, DiskRequest};
fn main() {
    let parv = std::env::args().nth(1).unwrap();
    let mut m = antsched_disk::load_disksim(std::path::Path::new(&parv)).unwrap();
    let far = 1_048_576u64;
    println!("between seq: {}", m.positioning_between(128, &DiskRequest::read(128, 128)));
    println!("between far: {}", m.positioning_between(128, &DiskRequest::read(far, 128)));
    let c = m.submit(&DiskRequest::read(0, 128), 0);
    println!("first: {:?}", c);
    let t = c.finish;
    println!("pos seq at finish: {}  far: {}", m.positioning_time(&DiskRequest::read(128, 128), t), m.positioning_time(&DiskRequest::read(far, 128), t));
    let c2 = m.submit(&DiskRequest::read(128, 128), t + 100_000);
    println!("second (after 100us): {:?}", c2);
}
