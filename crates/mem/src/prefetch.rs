//! A hint to the processor that an element of a slice will be read soon.
//!
//! The simulator's large tables (a record per distinct query, a slot per resident page) are
//! read at indices a random draw or a linked list gives, so most reads of them miss the
//! processor's caches and wait on memory. Where the next index is known one step ahead (the
//! next query is drawn before it is asked; a scan knows the next page of its list), asking for
//! the line then lets that wait overlap the work in between. It changes no result: only when
//! the read happens.
//!
//! This is the crate's one `unsafe` block. A prefetch is not a memory access in the language's
//! sense: it cannot fault and reads nothing into the program, so an index out of bounds would
//! be harmless; it is checked anyway, and such a hint is dropped.

/// Asks for the cache line holding `slice[i]`; does nothing if `i` is out of bounds or on a
/// processor without the instruction.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], i: usize) {
    let Some(x) = slice.get(i) else {
        return;
    };
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 processor has, and reads nothing;
    // the pointer comes from a reference, so it is valid besides.
    #[allow(unsafe_code)]
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
