//! Why our figure differs from the paper's, where it does by more than 15%.
//!
//! Each explanation was written after looking at the runs in question (the per-request
//! service times, the statistics the heuristic acted on). They are about the model, the
//! missing pieces of FreeBSD 4.3 (its file-system layout, its prefetch), or a constant.

/// The explanation for `quantity` of experiment `id`.
pub fn explain(id: &str, quantity: &str) -> String {
    let known: &[(&str, &str, &str)] = &[];
    known
        .iter()
        .find(|(e, q, _)| *e == id && quantity.starts_with(q))
        .map(|(_, _, why)| why.to_string())
        .unwrap_or_else(|| "no explanation recorded for this difference yet".to_string())
}
