#include "seed.h"

#include <errno.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "../parser/hash.h"

uint64_t stg_scan_seed(void)
{
    uint64_t seed = 0;
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
