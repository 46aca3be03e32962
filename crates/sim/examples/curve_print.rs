fn main() {
    let m = antsched_disk::preset(&std::env::args().nth(1).unwrap()).unwrap();
    let c = antsched_sim::device::calibrate(&*m);
    for p in &c.points {
        println!(
            "{:>10} sectors ({:>8.1} MB)  {:>8.0} us",
            p.distance,
            p.distance as f64 * 512.0 / 1e6,
            p.time_us
        );
    }
}
