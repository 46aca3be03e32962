//! The database: an ATIS-like airline schema (airports, airlines, aircraft, flights, fares,
//! stops, fare restrictions, ground services), filled deterministically from a seed.
//!
//! Flights are inserted ordered by (origin, departure), and each flight's fares right after
//! it, so that the rows one departure-window query reads lie on a few neighbouring pages of
//! each table, as a clustered index would keep them: a query that misses the result cache
//! reads a handful of database pages, not hundreds (the simulated database of
//! `antsched_mem::paper::scenarios` reads two). Queries by destination, by airline or by
//! price cut across that order and read more pages: part of the spread of costs.

use std::path::Path;

use anyhow::{bail, Context};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::{params, Connection};

pub const AIRPORTS: i64 = 1000;
pub const AIRLINES: i64 = 60;
pub const AIRCRAFT: i64 = 120;
pub const RESTRICTIONS: i64 = 500;
pub const STATES: i64 = 50;
pub const CLASSES: [&str; 5] = ["F", "C", "Y", "B", "M"];
pub const MEALS: [&str; 5] = ["none", "snack", "breakfast", "lunch", "dinner"];
/// Fares run from 50 to 2,000 (dollars).
pub const PRICE_MIN: i64 = 50;
pub const PRICE_MAX: i64 = 2000;

/// Flights per MiB of database, measured (with this value `--size-mb 200` gives 201 MiB and
/// `--size-mb 20` 20.1 MiB); the file's real size is printed.
const FLIGHTS_PER_MB: f64 = 3500.0;

const WORDS: [&str; 16] = [
    "nonstop",
    "connection",
    "via",
    "hub",
    "seasonal",
    "weekday",
    "codeshare",
    "jet",
    "turboprop",
    "upgrade",
    "lounge",
    "delayed",
    "ontime",
    "overnight",
    "redeye",
    "shuttle",
];

const SCHEMA: &str = "
PRAGMA page_size = 4096;
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
CREATE TABLE airports (code INTEGER PRIMARY KEY, name TEXT, city TEXT, state INTEGER,
    elevation INTEGER, timezone INTEGER);
CREATE TABLE airlines (id INTEGER PRIMARY KEY, name TEXT, code TEXT, country TEXT);
CREATE TABLE aircraft (id INTEGER PRIMARY KEY, model TEXT, seats INTEGER, range_km INTEGER);
CREATE TABLE restrictions (id INTEGER PRIMARY KEY, advance_days INTEGER, min_stay INTEGER,
    max_stay INTEGER, text TEXT);
CREATE TABLE flights (id INTEGER PRIMARY KEY, airline INTEGER, number INTEGER,
    origin INTEGER, dest INTEGER, dep_min INTEGER, arr_min INTEGER, aircraft INTEGER,
    stops INTEGER, days INTEGER, meal TEXT, remarks TEXT);
CREATE TABLE fares (id INTEGER PRIMARY KEY, flight INTEGER, class TEXT, one_way INTEGER,
    round_trip INTEGER, restriction INTEGER, basis TEXT);
CREATE TABLE stops (flight INTEGER, seq INTEGER, airport INTEGER, arr_min INTEGER,
    dep_min INTEGER);
CREATE TABLE ground_service (id INTEGER PRIMARY KEY, airport INTEGER, kind TEXT,
    company TEXT, price INTEGER);
";

const INDEXES: &str = "
CREATE INDEX flights_origin ON flights (origin, dep_min);
CREATE INDEX flights_dest ON flights (dest, arr_min);
CREATE INDEX flights_airline ON flights (airline, number);
CREATE INDEX fares_flight ON fares (flight);
CREATE INDEX fares_price ON fares (class, one_way);
CREATE INDEX stops_airport ON stops (airport, arr_min);
CREATE INDEX airports_state ON airports (state);
CREATE INDEX ground_airport ON ground_service (airport);
";

fn words(rng: &mut ChaCha8Rng, n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(WORDS[rng.random_range(0..WORDS.len())]);
    }
    s
}

/// Writes a new database of about `size_mb` MiB at `path` (which must not exist), all of it
/// from `seed`. Returns the file's size in bytes.
pub fn populate(path: &Path, size_mb: f64, seed: u64) -> anyhow::Result<u64> {
    if !(size_mb.is_finite() && size_mb > 0.0 && size_mb <= 100_000.0) {
        bail!("--size-mb {size_mb}: must be a number of MiB between 0 and 100000");
    }
    if path.exists() {
        bail!(
            "{} already exists: populate makes a new database (remove it first)",
            path.display()
        );
    }
    let mut db =
        Connection::open(path).with_context(|| format!("cannot create {}", path.display()))?;
    db.execute_batch(SCHEMA)
        .with_context(|| format!("{}: creating the schema", path.display()))?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let flights = (size_mb * FLIGHTS_PER_MB).round().max(1.0) as i64;
    let tx = db.transaction()?;
    {
        let mut ins = tx.prepare("INSERT INTO airports VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
        for code in 1..=AIRPORTS {
            ins.execute(params![
                code,
                format!("{} airport {code}", words(&mut rng, 2)),
                format!("city {}", code / 3),
                1 + (code - 1) % STATES,
                rng.random_range(0..3000i64),
                rng.random_range(-10..=-4i64),
            ])?;
        }
        let mut ins = tx.prepare("INSERT INTO airlines VALUES (?1, ?2, ?3, ?4)")?;
        for id in 1..=AIRLINES {
            ins.execute(params![
                id,
                format!("{} airways {id}", words(&mut rng, 1)),
                format!("A{id:02}"),
                format!("country {}", id % 7),
            ])?;
        }
        let mut ins = tx.prepare("INSERT INTO aircraft VALUES (?1, ?2, ?3, ?4)")?;
        for id in 1..=AIRCRAFT {
            ins.execute(params![
                id,
                format!("model {id}"),
                rng.random_range(30..400i64),
                rng.random_range(1000..14000i64),
            ])?;
        }
        let mut ins = tx.prepare("INSERT INTO restrictions VALUES (?1, ?2, ?3, ?4, ?5)")?;
        for id in 1..=RESTRICTIONS {
            ins.execute(params![
                id,
                rng.random_range(0..30i64),
                rng.random_range(0..7i64),
                rng.random_range(7..60i64),
                words(&mut rng, 8),
            ])?;
        }
        let mut ins = tx.prepare("INSERT INTO ground_service VALUES (NULL, ?1, ?2, ?3, ?4)")?;
        for airport in 1..=AIRPORTS {
            for kind in ["taxi", "limousine", "rental car", "bus", "rail"] {
                ins.execute(params![
                    airport,
                    kind,
                    format!("{} {kind} co", words(&mut rng, 1)),
                    rng.random_range(5..200i64),
                ])?;
            }
        }
        let mut flight = tx.prepare(
            "INSERT INTO flights VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )?;
        let mut fare = tx.prepare("INSERT INTO fares VALUES (NULL, ?1, ?2, ?3, ?4, ?5, ?6)")?;
        let mut stop = tx.prepare("INSERT INTO stops VALUES (?1, ?2, ?3, ?4, ?5)")?;
        let mut id = 0i64;
        for origin in 1..=AIRPORTS {
            // Spread the flights evenly over the origins, in departure order within each.
            let n = flights * origin / AIRPORTS - flights * (origin - 1) / AIRPORTS;
            let mut deps: Vec<i64> = (0..n).map(|_| rng.random_range(0..1440i64)).collect();
            deps.sort_unstable();
            for dep in deps {
                id += 1;
                let mut dest = rng.random_range(1..=AIRPORTS);
                if dest == origin {
                    dest = dest % AIRPORTS + 1;
                }
                let duration = rng.random_range(40..600i64);
                let stops = [0, 0, 0, 1, 2][rng.random_range(0..5usize)];
                flight.execute(params![
                    id,
                    rng.random_range(1..=AIRLINES),
                    rng.random_range(1..10000i64),
                    origin,
                    dest,
                    dep,
                    (dep + duration) % 1440,
                    rng.random_range(1..=AIRCRAFT),
                    stops,
                    rng.random_range(1..128i64),
                    MEALS[rng.random_range(0..MEALS.len())],
                    words(&mut rng, 6),
                ])?;
                for class in &CLASSES[..3] {
                    let one_way = rng.random_range(PRICE_MIN..=PRICE_MAX);
                    fare.execute(params![
                        id,
                        class,
                        one_way,
                        one_way * 2 - rng.random_range(0..one_way),
                        rng.random_range(1..=RESTRICTIONS),
                        format!("{class}{}", rng.random_range(0..100i64)),
                    ])?;
                }
                for seq in 1..=stops {
                    let at = (dep + duration * seq / (stops + 1)) % 1440;
                    stop.execute(params![
                        id,
                        seq,
                        rng.random_range(1..=AIRPORTS),
                        at,
                        (at + 30) % 1440
                    ])?;
                }
            }
        }
    }
    tx.commit()
        .with_context(|| format!("{}: writing the rows", path.display()))?;
    db.execute_batch(INDEXES)
        .with_context(|| format!("{}: creating the indexes", path.display()))?;
    db.execute_batch("ANALYZE;")
        .with_context(|| format!("{}: ANALYZE", path.display()))?;
    drop(db);
    Ok(std::fs::metadata(path)
        .with_context(|| format!("cannot stat {}", path.display()))?
        .len())
}
