// The stagger: a one-thread kernel that holds its stream back, so that a launch that races ahead of another shows up
// as logits that differ from an unstaggered run.

// Spins for `ns` nanoseconds of the global timer.
__global__ void lk_stall(unsigned ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(256);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

// The stall before launch `launch` of form `form` under seed `seed`: 0 to 20 microseconds, a pure function of the three.
static unsigned lk_stall_ns(unsigned long long seed, int form, int launch) {
  unsigned long long h = seed * 0x9E3779B97F4A7C15ULL + (unsigned long long)form * 0xBF58476D1CE4E5B9ULL +
                         (unsigned long long)launch * 0x94D049BB133111EBULL;
  h ^= h >> 31; h *= 0xD6E8FEB86659FD93ULL; h ^= h >> 32;
  return (unsigned)(h % 20000ULL);
}
