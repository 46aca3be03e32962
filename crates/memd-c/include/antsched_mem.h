/*
 * antsched_mem.h: the C client of antsched memd, the severity service.
 *
 * The daemon publishes how expensive memory is right now: the severity S in seconds (smaller
 * is more pressure; S_max, 3600 s, means none), with the numbers it is made of. A program
 * connects once, reads the latest record whenever it likes (no system call: a shared page),
 * and waits on, or polls, a descriptor the daemon signals when S has halved or doubled since
 * the program was last told, and every second while S < S_max.
 *
 * Link with -lantsched_mem_c (libantsched_mem_c.so or libantsched_mem_c.a from
 * `cargo build --release -p antsched-memd-c`; the static library also needs
 * -lpthread -ldl -lm). The protocol and the record: docs/memd.md.
 *
 * Errors: a call that fails returns NULL or -1 and sets errno; antsched_mem_last_error()
 * says why in words. A handle may be used from several threads at once, except that
 * antsched_mem_close() must be the last call on it.
 */
#ifndef ANTSCHED_MEM_H
#define ANTSCHED_MEM_H

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where the daemon listens unless told otherwise (a NULL socket_path means this). */
#define ANTSCHED_MEM_DEFAULT_SOCKET "/run/antsched/memd.sock"

/* struct antsched_mem_record.tier */
#define ANTSCHED_MEM_TIER_PLENTY 0    /* free >= tau: S = S_max */
#define ANTSCHED_MEM_TIER_RAMP 1      /* 0 < free < tau: S falls toward the candidate age */
#define ANTSCHED_MEM_TIER_PAGING 2    /* free exhausted: S is the candidate age */
#define ANTSCHED_MEM_TIER_THRASHING 3 /* S of a few seconds, or PSI full >= 10%: drastic */

/* struct antsched_mem_record.estimator: how the candidate age was obtained. */
#define ANTSCHED_MEM_ESTIMATOR_EXACT 0
#define ANTSCHED_MEM_ESTIMATOR_TURNOVER 1
#define ANTSCHED_MEM_ESTIMATOR_MGLRU 2
#define ANTSCHED_MEM_ESTIMATOR_DAMON 3

/*
 * The severity record: the record's keys (docs/memd.md), the integers first so that the
 * struct has no padding (80 bytes); `time` is time_ns.
 */
struct antsched_mem_record {
    uint32_t version;         /* the record's layout version (1) */
    uint32_t tier;            /* ANTSCHED_MEM_TIER_* */
    uint32_t estimator;       /* ANTSCHED_MEM_ESTIMATOR_* */
    uint32_t reserved;        /* 0 */
    double severity_s;        /* S, seconds */
    double candidate_age_s;   /* S_paging: the age of the page the kernel evicts next, s */
    uint64_t free_bytes;      /* the domain's free memory */
    uint64_t tau_bytes;       /* the ramp's threshold */
    double paging_cost;       /* Eq. 4.2 at S */
    double disk_service_ms;   /* C_disk */
    double disk_queue;        /* the disk's queue length */
    uint64_t time_ns;         /* when, in ns of CLOCK_MONOTONIC */
};

/* A connection to the daemon (opaque). */
typedef struct AntschedMem antsched_mem;

/*
 * Connects to the daemon at socket_path (NULL: ANTSCHED_MEM_DEFAULT_SOCKET) and subscribes to
 * the machine's record. Blocks until the daemon answers (at most 10 s). Returns NULL with
 * errno set on failure: ENOENT or ECONNREFUSED when no daemon listens there, EPERM when it
 * refused (too many clients), EPROTO when what answered is not antsched memd.
 */
antsched_mem *antsched_mem_connect(const char *socket_path);

/*
 * Like antsched_mem_connect, for one domain: "machine", or the path of a memory cgroup the
 * daemon governs (e.g. "/sys/fs/cgroup/memory/antsched/run-42"). EPERM names an unknown one.
 */
antsched_mem *antsched_mem_connect_domain(const char *socket_path, const char *domain);

/*
 * Copies the latest record into *out: a few loads from the shared page, no system call, never
 * a torn record. Returns 0, or -1 with errno EINVAL for a NULL argument.
 */
int antsched_mem_current(const antsched_mem *h, struct antsched_mem_record *out);

/*
 * Blocks until the daemon signals this connection (S halved or doubled since it was last
 * told, or a second passed while S < S_max) or timeout_ms passes (negative: no timeout).
 * Returns how many signals were pending (they are cleared), 0 on timeout, or -1 with errno.
 * Call antsched_mem_current() afterwards for the record that caused it.
 */
int64_t antsched_mem_wait(const antsched_mem *h, int timeout_ms);

/*
 * The connection's eventfd, for the program's own poll/epoll loop: readable (POLLIN) when the
 * daemon signalled. Then read 8 bytes from it (or call antsched_mem_wait(h, 0)) to clear it.
 * The descriptor belongs to the handle: do not close it. Returns -1 (EINVAL) for NULL.
 */
int antsched_mem_fd(const antsched_mem *h);

/* Closes the connection and frees the handle. NULL is ignored. */
void antsched_mem_close(antsched_mem *h);

/*
 * SIGMEM: asks the daemon to queue the real-time signal signo to process pid (the caller's
 * own, or one it owns; root may name any) on the same rule as the wake-up, until the process
 * exits, with si_code SI_QUEUE and si_value.sival_int = S in milliseconds (capped at
 * INT32_MAX). domain: NULL for the machine, or a governed group's path. signo 0 unregisters.
 * The process must have a handler for the signal (SA_SIGINFO; a program that reads it with
 * signalfd or sigwaitinfo installs one too): the daemon skips a process without one, since a
 * real-time signal's default action is to terminate. Returns 0, or -1 with errno (EPERM: refused, with the reason in
 * antsched_mem_last_error()).
 */
int antsched_mem_sigmem(const char *socket_path, pid_t pid, int signo, const char *domain);

/* The default SIGMEM: SIGRTMIN + 8 of this process's libc (42 with glibc). */
int antsched_mem_sigmem_default(void);

/*
 * Why the last failing call of this thread failed, in words ("" if none failed). Valid until
 * this thread's next failing call.
 */
const char *antsched_mem_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* ANTSCHED_MEM_H */
