/* bench/mem/hog.c: the memory hog of the JVM experiment (the thesis's section 6.3.4: 90 MB).
 * Allocates MB megabytes and writes one byte of every page of it again every 100 ms, so that
 * all of it stays in use (a hog whose pages are never old), until SIGTERM or SIGINT.
 *
 *   cc -O2 -o hog hog.c && ./hog 90
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile sig_atomic_t stop;
static void on_stop(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv) {
    long mb = argc > 1 ? atol(argv[1]) : 90;
    if (mb <= 0) { fprintf(stderr, "usage: hog MB\n"); return 2; }
    size_t n = (size_t)mb << 20;
    volatile char *p = malloc(n);
    if (!p) { perror("malloc"); return 1; }
    struct sigaction sa = {.sa_handler = on_stop};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    unsigned char round = 0;
    while (!stop) {
        for (size_t i = 0; i < n; i += 4096) p[i] = (char)(round + i);
        if (round++ == 0) { printf("hog %ld MB touched\n", mb); fflush(stdout); }
        struct timespec t = {0, 100 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
    return 0;
}
