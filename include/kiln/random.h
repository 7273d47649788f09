// Kiln — counter-based random numbers: Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC 2011). The stream is a pure function of (seed, counter), so a program that sets a seed gets the
// same numbers on every run, whatever the thread count.
#pragma once
#include <array>
#include <cstdint>

namespace kiln::random {

// Ten rounds of Philox4x32 on counter `ctr` with key `key`: four independent 32-bit uniform words.
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key);
// Uniform float in [0, 1) from 24 random bits; double in [0, 1) from 53 bits (two words).
inline float u01f(uint32_t x) { return float(x >> 8) * (1.0f / 16777216.0f); }
inline double u01d(uint32_t hi, uint32_t lo) { return double((uint64_t(hi) << 21) ^ (lo >> 11)) * (1.0 / 9007199254740992.0); }

// Random streams: a random op given a stream id (>= 0) takes its counter offset from that stream when its kernel
// runs — eagerly or inside a compiled graph alike — so a program draws the same sequence in both modes.
// Returns the stream's next offset (0, 1, 2, ...).
uint64_t next_offset(int64_t stream);
// Restarts every stream at 0 (set_seed).
void reset_streams();

}  // namespace kiln::random
