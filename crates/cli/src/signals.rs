//! Termination signals (SIGINT, SIGTERM, SIGHUP) handled by one thread, so that a command can
//! end in an orderly way (unmount, report what finished) instead of dying mid-work.

/// Blocks the termination signals in this thread and in every thread started after it, and
/// returns the set for [`wait`]. Call it before starting threads.
pub fn block() -> libc::sigset_t {
    // SAFETY: sigset operations on a local set; pthread_sigmask on the calling thread.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGHUP);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

/// Waits for one of the signals of `set` (from [`block`]) and returns it.
pub fn wait(set: &libc::sigset_t) -> libc::c_int {
    loop {
        let mut sig: libc::c_int = 0;
        // SAFETY: `set` is a valid signal set and `sig` writable.
        if unsafe { libc::sigwait(set, &mut sig) } == 0 {
            return sig;
        }
    }
}
