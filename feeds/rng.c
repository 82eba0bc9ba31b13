/* The simulator's randomness: splitmix64, seeded by --seed, saved with the world. */
#include "feeds/sim.h"
#include "util/banned.h"

uint64_t sim_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int sim_rng_below(uint64_t *state, int n)
{
	if (n <= 1)
		return 0;
	return (int)(sim_rng_next(state) % (uint64_t)n);
}

int sim_rng_chance(uint64_t *state, int percent)
{
	return sim_rng_below(state, 100) < percent;
}
