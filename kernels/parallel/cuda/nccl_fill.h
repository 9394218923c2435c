// Device fills of the collective input pattern (float32 and bfloat16), for the NCCL records.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace gtb::parallel::nccl {

// x[i] = pattern_value(seed, rank, first + i), as float32 or as bfloat16 bits (exact: multiples of 1/64).
void fill_pattern_f32(float* x, std::size_t n, std::uint64_t seed, int rank, std::size_t first, cudaStream_t s);
void fill_pattern_bf16(std::uint16_t* x, std::size_t n, std::uint64_t seed, int rank, std::size_t first,
                       cudaStream_t s);

}  // namespace gtb::parallel::nccl
