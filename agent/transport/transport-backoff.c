/* Reconnect back-off with equal jitter, and the small generator that draws
 * the jitter. The reference waits 5 s, then 1.2 times longer after each
 * failure up to 60 s, without jitter (spec §2.5); we start at 1 s, double,
 * and stop at [agent] reconnect_max_delay (60 s by default), so that a
 * thousand agents do not come back at the same instant. While nothing
 * listens on the broker's port, though, an attempt costs the broker no
 * more than a refused TCP connect, and the first step's wait (at most 1 s)
 * holds whatever the outage's length: the agent consumes again within
 * about a second of the broker's return (docs/transport.md). */
#include <stdint.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "transport/transport-internal.h"

void transport_backoff_init(TransportBackoff *b, uint64_t initial_ms, uint64_t max_ms)
{
        if (initial_ms == 0)
                initial_ms = 1;
        if (max_ms < initial_ms)
                max_ms = initial_ms;
        *b = (TransportBackoff){.initial_ms = initial_ms, .max_ms = max_ms};
}

/* Uniform in [d/2, d]: d - half, not half, so that an odd d is reached. */
static uint64_t jitter(uint64_t d, uint32_t rnd)
{
        uint64_t half = d / 2;

        return half + (d - half) * (uint64_t)rnd / UINT32_MAX;
}

void transport_backoff_reset(TransportBackoff *b)
{
        b->failures = 0;
}

uint64_t transport_backoff_ceiling(const TransportBackoff *b)
{
        uint64_t d = b->initial_ms;

        for (unsigned i = 0; i < b->failures && d < b->max_ms; i++)
                d = d > UINT64_MAX / 2 ? UINT64_MAX : d * 2;
        return d < b->max_ms ? d : b->max_ms;
}

uint64_t transport_backoff_next(TransportBackoff *b, uint32_t rnd)
{
        uint64_t d = transport_backoff_ceiling(b);

        /* Stop counting once the cap is reached, so failures never wraps. */
        if (d < b->max_ms)
                b->failures++;
        return jitter(d, rnd);
}

uint64_t transport_backoff_probe(const TransportBackoff *b, uint32_t rnd)
{
        return jitter(b->initial_ms, rnd);
}

uint64_t transport_random_seed(void)
{
        uint64_t seed = 0;

        if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed)) {
                /* Early in boot the pool may not be ready; jitter needs no
                 * secrecy, only a difference between agents. */
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
        }
        return seed ? seed : 0x9e3779b97f4a7c15ULL;
}

uint32_t transport_random_next(uint64_t *state)
{
        uint64_t x = *state;

        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        *state = x;
        return (uint32_t)((x * 0x2545f4914f6cdd1dULL) >> 32);
}
