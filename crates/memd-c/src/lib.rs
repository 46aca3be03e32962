//! # antsched-memd-c
//!
//! The C ABI of the `antsched memd` client, declared in `include/antsched_mem.h` (checked in,
//! written by hand: each call is documented there, for the C reader). Build with
//! `cargo build --release -p antsched-memd-c`; it makes `libantsched_mem_c.so` and
//! `libantsched_mem_c.a` in `target/release`.
//!
//! Every call returns its failure as C does: NULL or -1 with `errno` set, and the reason in
//! words from [`antsched_mem_last_error`] (per thread). No call unwinds into C: each body runs
//! under `catch_unwind`, and a panic (a bug) is reported as `EIO` with its message.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use antsched_mem::record::{Estimator, SeverityRecord};
use antsched_mem::Tier;
use antsched_memd::{Client, ClientError};

/// The record, as C sees it (`struct antsched_mem_record` in the header; keep them equal).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AntschedMemRecord {
    pub version: u32,
    /// 0 plenty, 1 ramp, 2 paging, 3 thrashing.
    pub tier: u32,
    /// 0 exact, 1 turnover, 2 mglru, 3 damon.
    pub estimator: u32,
    pub reserved: u32,
    pub severity_s: f64,
    pub candidate_age_s: f64,
    pub free_bytes: u64,
    pub tau_bytes: u64,
    pub paging_cost: f64,
    pub disk_service_ms: f64,
    pub disk_queue: f64,
    /// ns of CLOCK_MONOTONIC.
    pub time_ns: u64,
}

impl From<SeverityRecord> for AntschedMemRecord {
    fn from(r: SeverityRecord) -> Self {
        Self {
            version: r.version,
            tier: match r.tier {
                Tier::Plenty => 0,
                Tier::Ramp => 1,
                Tier::Paging => 2,
                Tier::Thrashing => 3,
            },
            estimator: match r.estimator {
                Estimator::Exact => 0,
                Estimator::Turnover => 1,
                Estimator::Mglru => 2,
                Estimator::Damon => 3,
            },
            reserved: 0,
            severity_s: r.severity_s,
            candidate_age_s: r.candidate_age_s,
            free_bytes: r.free_bytes,
            tau_bytes: r.tau_bytes,
            paging_cost: r.paging_cost,
            disk_service_ms: r.disk_service_ms,
            disk_queue: r.disk_queue,
            time_ns: r.time,
        }
    }
}

/// The handle C holds: `antsched_mem *`.
pub struct AntschedMem {
    client: Client,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records a failure for this thread: `errno` and the message.
fn fail(errno: c_int, why: String) {
    let text = CString::new(why.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
    // SAFETY: __errno_location returns this thread's errno, valid for the thread's life.
    unsafe { *libc::__errno_location() = errno };
}

/// The errno that best says why a client call failed.
fn errno_of(e: &ClientError) -> c_int {
    match e {
        ClientError::Connect { source, .. } | ClientError::Io { source, .. } => {
            source.raw_os_error().unwrap_or(libc::EIO)
        }
        ClientError::Refused { .. } => libc::EPERM,
        ClientError::Protocol { .. } | ClientError::Page { .. } => libc::EPROTO,
        ClientError::NoRecord { .. } => libc::EAGAIN,
    }
}

/// Runs `f`, turning a panic into `fallback` with `EIO`.
fn guard<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            fail(libc::EIO, format!("antsched_mem: internal error: {msg}"));
            fallback
        }
    }
}

/// A C string argument, or the default when NULL.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string.
unsafe fn text(s: *const c_char, default: &str) -> Result<String, ()> {
    if s.is_null() {
        return Ok(default.to_string());
    }
    // SAFETY: the caller passes a NUL-terminated string (the header's contract).
    match unsafe { CStr::from_ptr(s) }.to_str() {
        Ok(t) => Ok(t.to_string()),
        Err(_) => {
            fail(libc::EINVAL, "antsched_mem: a string is not UTF-8".into());
            Err(())
        }
    }
}

fn connected(r: Result<Client, ClientError>) -> *mut AntschedMem {
    match r {
        Ok(client) => Box::into_raw(Box::new(AntschedMem { client })),
        Err(e) => {
            fail(errno_of(&e), e.to_string());
            std::ptr::null_mut()
        }
    }
}

/// See the header.
///
/// # Safety
/// `socket_path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn antsched_mem_connect(socket_path: *const c_char) -> *mut AntschedMem {
    guard(std::ptr::null_mut(), || {
        // SAFETY: the caller's contract.
        let Ok(path) = (unsafe { text(socket_path, antsched_memd::DEFAULT_SOCKET) }) else {
            return std::ptr::null_mut();
        };
        connected(antsched_memd::connect(path))
    })
}

/// See the header.
///
/// # Safety
/// Both are NULL or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn antsched_mem_connect_domain(
    socket_path: *const c_char,
    domain: *const c_char,
) -> *mut AntschedMem {
    guard(std::ptr::null_mut(), || {
        // SAFETY: the caller's contract.
        let (Ok(path), Ok(domain)) = (
            unsafe { text(socket_path, antsched_memd::DEFAULT_SOCKET) },
            unsafe { text(domain, antsched_memd::MACHINE) },
        ) else {
            return std::ptr::null_mut();
        };
        connected(antsched_memd::connect_domain(path, &domain))
    })
}

/// The handle behind `h`, or EINVAL.
///
/// # Safety
/// `h` is NULL or a live handle from `antsched_mem_connect*`.
unsafe fn handle<'a>(h: *const AntschedMem) -> Option<&'a AntschedMem> {
    if h.is_null() {
        fail(libc::EINVAL, "antsched_mem: a NULL handle".into());
        return None;
    }
    // SAFETY: the caller's contract: a live handle, not closed.
    Some(unsafe { &*h })
}

/// See the header.
///
/// # Safety
/// `h` is a live handle; `out` points to writable space for one record.
#[no_mangle]
pub unsafe extern "C" fn antsched_mem_current(
    h: *const AntschedMem,
    out: *mut AntschedMemRecord,
) -> c_int {
    guard(-1, || {
        // SAFETY: the caller's contract.
        let Some(h) = (unsafe { handle(h) }) else {
            return -1;
        };
        if out.is_null() {
            fail(libc::EINVAL, "antsched_mem_current: a NULL record".into());
            return -1;
        }
        let r = AntschedMemRecord::from(h.client.current());
        // SAFETY: `out` is non-NULL and, by the caller's contract, writable for one record.
        unsafe { out.write(r) };
        0
    })
}

/// See the header.
///
/// # Safety
/// `h` is a live handle.
#[no_mangle]
pub unsafe extern "C" fn antsched_mem_wait(h: *const AntschedMem, timeout_ms: c_int) -> i64 {
    guard(-1, || {
        // SAFETY: the caller's contract.
        let Some(h) = (unsafe { handle(h) }) else {
            return -1;
        };
        let timeout = u64::try_from(timeout_ms).ok().map(Duration::from_millis);
        match h.client.wait(timeout) {
            Ok(n) => i64::try_from(n).unwrap_or(i64::MAX),
            Err(e) => {
                fail(errno_of(&e), e.to_string());
                -1
            }
        }
    })
}

/// See the header.
///
/// # Safety
/// `h` is a live handle.
#[no_mangle]
pub unsafe extern "C" fn antsched_mem_fd(h: *const AntschedMem) -> c_int {
    use std::os::fd::AsRawFd;
    guard(-1, || {
        // SAFETY: the caller's contract.
        let Some(h) = (unsafe { handle(h) }) else {
            return -1;
        };
        h.client.eventfd().as_raw_fd()
    })
}

/// See the header.
///
/// # Safety
/// `h` is NULL or a live handle, not used again after.
#[no_mangle]
pub unsafe extern "C" fn antsched_mem_close(h: *mut AntschedMem) {
    guard((), || {
        if !h.is_null() {
            // SAFETY: the caller's contract: it came from Box::into_raw in connect and is
            // closed once.
            drop(unsafe { Box::from_raw(h) });
        }
    })
}

/// See the header.
///
/// # Safety
/// `socket_path` and `domain` are NULL or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn antsched_mem_sigmem(
    socket_path: *const c_char,
    pid: c_int,
    signo: c_int,
    domain: *const c_char,
) -> c_int {
    guard(-1, || {
        // SAFETY: the caller's contract.
        let Ok(path) = (unsafe { text(socket_path, antsched_memd::DEFAULT_SOCKET) }) else {
            return -1;
        };
        let domain = if domain.is_null() {
            None
        } else {
            // SAFETY: the caller's contract.
            match unsafe { text(domain, "") } {
                Ok(d) => Some(d),
                Err(()) => return -1,
            }
        };
        match antsched_memd::register_sigmem(path, pid, signo, domain.as_deref()) {
            Ok(()) => 0,
            Err(e) => {
                fail(errno_of(&e), e.to_string());
                -1
            }
        }
    })
}

/// See the header.
#[no_mangle]
pub extern "C" fn antsched_mem_sigmem_default() -> c_int {
    antsched_memd::sigmem::default_signal()
}

/// See the header.
#[no_mangle]
pub extern "C" fn antsched_mem_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header's struct has the same size (the C test asserts 80 on its side).
    #[test]
    fn the_record_is_80_bytes() {
        assert_eq!(std::mem::size_of::<AntschedMemRecord>(), 80);
        assert_eq!(std::mem::align_of::<AntschedMemRecord>(), 8);
    }
}
