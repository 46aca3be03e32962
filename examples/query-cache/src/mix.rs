//! The query mix: 43 SELECT types over the ATIS-like schema (the thesis's ATIS workload had
//! 43), a thousand versions of each (the parameters), and a Zipf popularity over the
//! (type, version) pairs. Everything is a function of the seed: the same seed gives the same
//! sequence of queries with the same parameters.
//!
//! The types are templates with a width (a departure window, a price band, a LIMIT): the
//! wider, the more rows a query reads and returns, which spreads the evaluation costs over
//! more than an order of magnitude (from a primary-key lookup to a self-join over a day of
//! departures), as the ATIS queries' costs were (the thesis's Fig. 6.2).

use antsched_mem::sim::Zipf;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rusqlite::types::Value;

use crate::schema::{AIRLINES, AIRPORTS, CLASSES, MEALS, PRICE_MAX, PRICE_MIN, STATES};

/// Versions (parameter sets) of each type.
pub const VERSIONS: u32 = 1000;

/// What a parameter is drawn as.
#[derive(Clone, Copy, Debug)]
enum P {
    Airport,
    Airline,
    /// A minute of the day.
    Time,
    /// The type's width.
    Width,
    Class,
    Price,
    State,
    Meal,
    /// A flight number's start.
    Number,
    /// A flight id (the database has at least this many flights).
    Flight,
}

struct Template {
    name: &'static str,
    sql: &'static str,
    params: &'static [P],
    widths: &'static [i64],
}

const TEMPLATES: &[Template] = &[
    Template {
        name: "flight_by_number",
        sql: "SELECT f.id, f.number, f.origin, f.dest, f.dep_min, f.arr_min, a.name, c.model
              FROM flights f JOIN airlines a ON a.id = f.airline JOIN aircraft c ON c.id = f.aircraft
              WHERE f.airline = ?1 AND f.number BETWEEN ?2 AND ?2 + ?3",
        params: &[P::Airline, P::Number, P::Width],
        widths: &[0, 10, 60],
    },
    Template {
        name: "departures",
        sql: "SELECT f.id, f.number, f.dep_min, f.arr_min, f.dest, p.name, p.city, f.meal, f.remarks
              FROM flights f JOIN airports p ON p.code = f.dest
              WHERE f.origin = ?1 AND f.dep_min BETWEEN ?2 AND ?2 + ?3 ORDER BY f.dep_min",
        params: &[P::Airport, P::Time, P::Width],
        widths: &[30, 90, 240, 720],
    },
    Template {
        name: "arrivals",
        sql: "SELECT f.id, f.number, f.dep_min, f.arr_min, f.origin, p.name, p.city, f.meal, f.remarks
              FROM flights f JOIN airports p ON p.code = f.origin
              WHERE f.dest = ?1 AND f.arr_min BETWEEN ?2 AND ?2 + ?3 ORDER BY f.arr_min",
        params: &[P::Airport, P::Time, P::Width],
        widths: &[30, 90, 240, 720],
    },
    Template {
        name: "fares_by_class",
        sql: "SELECT f.id, fa.class, MIN(fa.one_way), MIN(fa.round_trip), COUNT(*)
              FROM flights f JOIN fares fa ON fa.flight = f.id
              WHERE f.origin = ?1 AND f.dep_min BETWEEN ?2 AND ?2 + ?3
              GROUP BY f.id, fa.class",
        params: &[P::Airport, P::Time, P::Width],
        widths: &[60, 240, 720, 1440],
    },
    Template {
        name: "cheapest_from",
        sql: "SELECT f.id, f.dest, f.dep_min, fa.one_way, fa.round_trip, fa.basis, f.remarks
              FROM flights f JOIN fares fa ON fa.flight = f.id
              WHERE f.origin = ?1 AND fa.class = ?2 AND f.dep_min BETWEEN ?3 AND ?3 + ?4
              ORDER BY fa.one_way LIMIT 60",
        params: &[P::Airport, P::Class, P::Time, P::Width],
        widths: &[120, 480, 1440],
    },
    Template {
        name: "fares_in_band",
        sql: "SELECT fa.flight, fa.one_way, fa.round_trip, f.origin, f.dest, f.dep_min, f.remarks
              FROM fares fa JOIN flights f ON f.id = fa.flight
              WHERE fa.class = ?1 AND fa.one_way BETWEEN ?2 AND ?2 + ?3
              ORDER BY f.dep_min LIMIT 150",
        params: &[P::Class, P::Price, P::Width],
        widths: &[0, 2, 8],
    },
    Template {
        name: "airline_summary",
        sql: "SELECT a.name, COUNT(*), MIN(f.dep_min), AVG(f.arr_min - f.dep_min), SUM(f.stops)
              FROM flights f JOIN airlines a ON a.id = f.airline
              WHERE f.origin = ?1 AND f.dep_min BETWEEN ?2 AND ?2 + ?3 GROUP BY f.airline",
        params: &[P::Airport, P::Time, P::Width],
        widths: &[240, 720, 1440],
    },
    Template {
        name: "ground_in_state",
        sql: "SELECT g.kind, g.company, g.price, p.city, p.name
              FROM ground_service g JOIN airports p ON p.code = g.airport
              WHERE p.state = (SELECT state FROM airports WHERE code = ?1)
              ORDER BY g.price LIMIT ?2",
        params: &[P::Airport, P::Width],
        widths: &[10, 60],
    },
    Template {
        name: "stops_at",
        sql: "SELECT s.flight, s.seq, s.arr_min, s.dep_min, f.origin, f.dest, f.airline, f.remarks
              FROM stops s JOIN flights f ON f.id = s.flight
              WHERE s.airport = ?1 AND s.arr_min BETWEEN ?2 AND ?2 + ?3",
        params: &[P::Airport, P::Time, P::Width],
        widths: &[60, 240, 1440],
    },
    Template {
        name: "state_to_state",
        sql: "SELECT f.id, f.dep_min, f.arr_min, o.city, d.city, o.name, d.name, f.remarks
              FROM airports o JOIN flights f ON f.origin = o.code JOIN airports d ON d.code = f.dest
              WHERE o.state = ?1 AND d.state = ?2 AND f.dep_min BETWEEN ?3 AND ?3 + ?4 LIMIT 200",
        params: &[P::State, P::State, P::Time, P::Width],
        widths: &[60, 240, 1440],
    },
    Template {
        name: "aircraft_from",
        sql: "SELECT c.model, c.seats, COUNT(*), AVG(f.stops)
              FROM flights f JOIN aircraft c ON c.id = f.aircraft
              WHERE f.origin = ?1 AND f.dep_min BETWEEN ?2 AND ?2 + ?3 GROUP BY c.id",
        params: &[P::Airport, P::Time, P::Width],
        widths: &[360, 1440],
    },
    Template {
        name: "airline_window",
        sql: "SELECT f.number, f.origin, f.dest, f.dep_min, f.arr_min, f.meal, f.remarks
              FROM flights f WHERE f.airline = ?1 AND f.dep_min BETWEEN ?2 AND ?2 + ?3 LIMIT 200",
        params: &[P::Airline, P::Time, P::Width],
        widths: &[5, 30],
    },
    Template {
        name: "restrictions_of",
        sql: "SELECT fa.flight, fa.class, fa.one_way, r.advance_days, r.min_stay, r.max_stay, r.text
              FROM fares fa JOIN restrictions r ON r.id = fa.restriction
              WHERE fa.flight BETWEEN ?1 AND ?1 + ?2",
        params: &[P::Flight, P::Width],
        widths: &[5, 25, 100],
    },
    Template {
        name: "round_trip",
        sql: "SELECT a.id, b.id, a.dep_min, b.dep_min, a.remarks, b.remarks
              FROM flights a JOIN flights b
                ON b.origin = a.dest AND b.dest = a.origin AND b.dep_min > a.arr_min
              WHERE a.origin = ?1 AND a.dep_min BETWEEN ?2 AND ?2 + ?3 LIMIT 100",
        params: &[P::Airport, P::Time, P::Width],
        widths: &[60, 240, 720],
    },
    Template {
        name: "meal_flights",
        sql: "SELECT f.id, f.number, f.dep_min, f.dest, f.remarks
              FROM flights f WHERE f.origin = ?1 AND f.meal = ?2 AND f.dep_min >= ?3 LIMIT ?4",
        params: &[P::Airport, P::Meal, P::Time, P::Width],
        widths: &[100],
    },
];

/// One query type: a template at one width.
#[derive(Clone, Copy, Debug)]
pub struct QueryType {
    template: usize,
    width: i64,
}

impl QueryType {
    pub fn name(&self) -> String {
        format!("{}/{}", TEMPLATES[self.template].name, self.width)
    }

    pub fn sql(&self) -> &'static str {
        TEMPLATES[self.template].sql
    }

    /// The parameters of version `version`: a property of the query, the same in every run.
    pub fn params(&self, version: u32) -> Vec<Value> {
        let t = &TEMPLATES[self.template];
        t.params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let h = splitmix(
                    (self.template as u64) << 40 ^ (version as u64) << 8 ^ i as u64 ^ 0x5EED,
                );
                let pick = |n: i64| (h % n as u64) as i64;
                // Hubs: an airport's code drawn as AIRPORTS * u^3 (u uniform), so that half
                // the airport parameters fall among the first eighth of the codes. Flights
                // are stored in origin order, so the database has a hot part, as the
                // thesis's did (the simulator's data file reads with a skew, too).
                let hub = |n: i64| {
                    let u = (h >> 11) as f64 / (1u64 << 53) as f64;
                    ((n as f64 * u.powi(3)) as i64).min(n - 1)
                };
                Value::Integer(match p {
                    P::Airport => 1 + hub(AIRPORTS),
                    P::Airline => 1 + pick(AIRLINES),
                    P::Time => pick(1440),
                    P::Width => self.width,
                    P::Price => PRICE_MIN + pick(PRICE_MAX - PRICE_MIN),
                    P::State => 1 + pick(STATES),
                    P::Number => 1 + pick(9900),
                    P::Flight => 1 + pick(FLIGHT_IDS),
                    P::Class => return Value::Text(CLASSES[pick(3) as usize].to_string()),
                    P::Meal => return Value::Text(MEALS[pick(MEALS.len() as i64) as usize].into()),
                })
            })
            .collect()
    }
}

/// Flight ids restriction lookups are drawn from: every database of 2 MiB or more has them.
const FLIGHT_IDS: i64 = 3000;

/// Every query type, in a fixed order (the type's number is its index).
pub fn types() -> Vec<QueryType> {
    TEMPLATES
        .iter()
        .enumerate()
        .flat_map(|(template, t)| {
            t.widths
                .iter()
                .map(move |&width| QueryType { template, width })
        })
        .collect()
}

/// A query: its type and version. Its cache key is `ty * VERSIONS + version`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Query {
    pub ty: u32,
    pub version: u32,
}

impl Query {
    pub fn key(&self) -> u32 {
        self.ty * VERSIONS + self.version
    }
}

/// The sequence of queries of a run: Zipf popularity with exponent `alpha` over every
/// (type, version), the ranks given to the pairs by a shuffle from the seed (so that the
/// popular queries are of every type, not all of the first).
pub struct Mix {
    zipf: Zipf,
    by_rank: Vec<u32>,
    rng: ChaCha8Rng,
}

impl Mix {
    pub fn new(types: usize, alpha: f64, seed: u64) -> Self {
        let n = types as u32 * VERSIONS;
        let mut by_rank: Vec<u32> = (0..n).collect();
        let mut shuffle = ChaCha8Rng::seed_from_u64(seed ^ 0x51A7_0F0F);
        // Fisher-Yates, by hand so that the order is the same with every rand version.
        for i in (1..by_rank.len()).rev() {
            let j = (rand::RngExt::random::<u64>(&mut shuffle) % (i as u64 + 1)) as usize;
            by_rank.swap(i, j);
        }
        Self {
            zipf: Zipf::new(n as u64, alpha),
            by_rank,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    pub fn next_query(&mut self) -> Query {
        let rank = self.zipf.sample(&mut self.rng) as usize;
        let key = self.by_rank[rank.min(self.by_rank.len() - 1)];
        Query {
            ty: key / VERSIONS,
            version: key % VERSIONS,
        }
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_at_least_forty_types_with_distinct_names() {
        let t = types();
        assert!(t.len() >= 40, "{} types", t.len());
        let names: std::collections::HashSet<String> = t.iter().map(|q| q.name()).collect();
        assert_eq!(names.len(), t.len());
    }

    #[test]
    fn the_mix_is_a_function_of_the_seed() {
        let n = types().len();
        let a: Vec<Query> = {
            let mut m = Mix::new(n, 0.8, 7);
            (0..5000).map(|_| m.next_query()).collect()
        };
        let b: Vec<Query> = {
            let mut m = Mix::new(n, 0.8, 7);
            (0..5000).map(|_| m.next_query()).collect()
        };
        let c: Vec<Query> = {
            let mut m = Mix::new(n, 0.8, 8);
            (0..5000).map(|_| m.next_query()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a
            .iter()
            .all(|q| (q.ty as usize) < n && q.version < VERSIONS));
        // Parameters are a property of the query.
        let t = types();
        assert_eq!(t[3].params(17), t[3].params(17));
        assert_ne!(t[3].params(17), t[3].params(18));
    }

    #[test]
    fn popularity_is_skewed_and_covers_many_types() {
        let n = types().len();
        let mut m = Mix::new(n, 0.8, 1);
        let mut counts = rustc_hash::FxHashMap::default();
        let mut per_type = vec![0u32; n];
        for _ in 0..20_000 {
            let q = m.next_query();
            *counts.entry(q.key()).or_insert(0u32) += 1;
            per_type[q.ty as usize] += 1;
        }
        let max = *counts.values().max().unwrap();
        assert!(max > 20, "the most popular query came up {max} times");
        assert!(per_type.iter().all(|&c| c > 0), "every type is asked for");
    }
}
