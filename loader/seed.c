#include "seed.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "../parser/hash.h"

/* STGUARD_HASH_SEED=<nonzero integer, C syntax>: that seed for every scan, for tests and
 * benches that build keys colliding under a known seed; anything else: none. Whoever sets a
 * process's environment already decides what it runs, so this gives a file no say. */
static uint64_t seed_from_env(void)
{
    const char *v = getenv("STGUARD_HASH_SEED");
    if (v == NULL || *v == '\0') {
        return 0;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 0);
    return errno == 0 && end != NULL && *end == '\0' ? (uint64_t)x : 0;
}

uint64_t stg_scan_seed(void)
{
    uint64_t seed = seed_from_env();
    if (seed != 0) {
        return seed;
    }
    ssize_t got;
    do {
        got = getrandom(&seed, sizeof seed, GRND_NONBLOCK);
    } while (got < 0 && errno == EINTR);
    if (got != (ssize_t)sizeof seed) {
        struct timespec ts = {0, 0};
        (void)clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t mix[2] = {(uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30),
                           (uint64_t)(uintptr_t)&seed ^ (uint64_t)getpid()};
        seed = stg_hash_bytes(STG_HASH_SEED_DEFAULT, (const uint8_t *)mix, sizeof mix, NULL, 0);
    }
    return seed != 0 ? seed : STG_HASH_SEED_DEFAULT;
}
