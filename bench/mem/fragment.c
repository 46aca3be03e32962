/* bench/mem/fragment.c: the allocator experiment's program (issue 15; the thesis's section 6.4).
 *
 * Allocates TOTAL_MB of heap in small blocks of mixed sizes (24 B to 3000 B, drawn from a
 * fixed pseudo-random sequence, every byte written so that it is resident), then frees most of
 * them: of each run of 10,000 consecutive allocations it keeps the first 1,000 and frees the
 * other 9,000, and it keeps the very last block. The kept blocks are spread over the whole heap
 * (a kept run every few MB, and the last block at its top), so free() cannot give the freed
 * memory back by shrinking the top of the heap: only an allocator that releases free pages
 * inside its heap (glibc's malloc_trim, which madvises them; jemalloc's purge; mimalloc's
 * collect) can. The kept runs are long enough (about 125 blocks of each size) that whole pages
 * of every size class are free in the slab allocators too (jemalloc's slabs, mimalloc's 64 KiB
 * pages), so that the three allocators are asked to return the same thing.
 *
 * Prints, one "key value" a line on stdout (the bench script parses them):
 *   allocated_bytes, allocated_blocks, freed_bytes, freed_blocks, kept_bytes,
 *   rss_after_alloc_kib, rss_after_free_kib, ready <CLOCK_MONOTONIC seconds>
 * then idles (no allocation, no free) until SIGTERM or SIGINT, or IDLE_S seconds.
 *
 * With FRAGMENT_OWN_RELEASE=1 it first asks the loaded allocator itself to give the free pages
 * back, from this thread (the one that allocated and freed them) and 200 ms after the frees
 * (past mimalloc's 25 ms decommit delay): mi_collect(true) where mimalloc's is loaded, jemalloc's
 * arena purge where its mallctl is, else glibc's malloc_trim(0). It prints
 *   own_release <call> <VmRSS before, KiB> <VmRSS after, KiB> <ms the call took>
 * This is what the allocator can do at best, with no other thread involved: the baseline for
 * what the preload library, which must call from its own thread, can get.
 *
 *   cc -O2 -o fragment fragment.c
 *   ./fragment [TOTAL_MB [IDLE_S]]      (defaults 200 and 600)
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>

static volatile sig_atomic_t stop;

static void on_stop(int sig) {
    (void)sig;
    stop = 1;
}

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
    fclose(f);
    return kib;
}

static double monotonic_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* xorshift64: the same sizes in every run and with every allocator. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* FRAGMENT_OWN_RELEASE: the allocator's own release, called from this thread. */
static void own_release(void) {
    void (*collect)(_Bool) = (void (*)(_Bool))dlsym(RTLD_DEFAULT, "mi_collect");
    int (*mallctl)(const char *, void *, size_t *, void *, size_t) =
        (int (*)(const char *, void *, size_t *, void *, size_t))dlsym(RTLD_DEFAULT, "mallctl");
    int (*trim)(size_t) = (int (*)(size_t))dlsym(RTLD_DEFAULT, "malloc_trim");
    struct timespec wait = {0, 200 * 1000 * 1000};
    nanosleep(&wait, NULL);
    long before = rss_kib();
    double t0 = monotonic_s();
    const char *call;
    if (collect) {
        collect(1);
        call = "mi_collect";
    } else if (mallctl) {
        mallctl("arena.4096.purge", NULL, NULL, NULL, 0);
        call = "jemalloc_purge";
    } else if (trim) {
        trim(0);
        call = "malloc_trim";
    } else {
        call = "none";
    }
    double ms = (monotonic_s() - t0) * 1e3;
    printf("own_release %s %ld %ld %.1f\n", call, before, rss_kib(), ms);
}

int main(int argc, char **argv) {
    static const size_t sizes[] = {24, 48, 96, 200, 512, 1000, 2000, 3000};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    long total_mb = argc > 1 ? atol(argv[1]) : 200;
    long idle_s = argc > 2 ? atol(argv[2]) : 600;
    if (total_mb <= 0 || idle_s < 0) {
        fprintf(stderr, "usage: fragment [TOTAL_MB [IDLE_S]]\n");
        return 2;
    }
    size_t total = (size_t)total_mb << 20;
    /* The block pointers: sized for the smallest mean block, allocated before anything is
     * timed, and mmapped by every allocator (so not part of the heap that is measured). */
    size_t cap = total / 24 + 1;
    char **blocks = malloc(cap * sizeof *blocks);
    size_t *len = malloc(cap * sizeof *len);
    if (!blocks || !len) {
        perror("malloc");
        return 1;
    }
    size_t n = 0, allocated = 0;
    while (allocated < total && n < cap) {
        size_t sz = sizes[next() % nsizes];
        char *p = malloc(sz);
        if (!p) {
            perror("malloc");
            return 1;
        }
        memset(p, (int)(n & 0xff) | 1, sz);
        blocks[n] = p;
        len[n] = sz;
        allocated += sz;
        n++;
    }
    long rss_alloc = rss_kib();

    size_t freed = 0, freed_blocks = 0;
    for (size_t i = 0; i + 1 < n; i++) { /* the last block stays: the heap's top is in use */
        if (i % 10000 < 1000) continue;
        free(blocks[i]);
        blocks[i] = NULL;
        freed += len[i];
        freed_blocks++;
    }
    long rss_free = rss_kib();
    const char *own = getenv("FRAGMENT_OWN_RELEASE");
    if (own && own[0] == '1') own_release();

    struct sigaction sa = {.sa_handler = on_stop};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    printf("allocated_bytes %zu\nallocated_blocks %zu\nfreed_bytes %zu\nfreed_blocks %zu\n"
           "kept_bytes %zu\nrss_after_alloc_kib %ld\nrss_after_free_kib %ld\nready %.6f\n",
           allocated, n, freed, freed_blocks, allocated - freed, rss_alloc, rss_free,
           monotonic_s());
    fflush(stdout);

    /* Idle: no allocator call from this thread from now on, so whatever the RSS does next is
     * the preload library's doing (or the allocator's own background thread, if it has one). */
    double until = monotonic_s() + idle_s;
    while (!stop && monotonic_s() < until) {
        struct timespec t = {0, 50 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
    /* The kept blocks are still referenced here, so nothing above was dead. */
    size_t check = 0;
    for (size_t i = 0; i < n; i++)
        if (blocks[i]) check += (unsigned char)blocks[i][0];
    printf("kept_checksum %zu\n", check);
    return 0;
}
