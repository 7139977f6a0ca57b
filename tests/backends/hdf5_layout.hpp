#pragma once

// The tensors and pieces of the hdf5 tests: a tiny transformer-like checkpoint written by four
// processes. Rank 0 holds two TP slices of one tensor (two modeled ranks) and two ZeRO ranges of
// another; rank 3 holds nothing but names the shared file.
#include <vector>

#include "tests/backends/hdf5_test_support.hpp"

namespace ckpt::backends::hdf5_test {

inline const std::vector<Tensor>& tensors() {
  static const std::vector<Tensor> all = {
      {"weight/linear_qkv", "bf16", 2, {8, 6}},                 // 0: TP along dim 0
      {"weight/linear_proj", "bf16", 2, {6, 8}},                // 1: TP along dim 1
      {"optimizer/exp_avg/linear_qkv", "fp32", 4, {8, 6}},      // 2: ZeRO flat ranges, mid-row
      {"weight/norm", "fp32", 4, {10}},                         // 3: replicated, one writer
      {"optimizer/exp_avg_sq/linear_proj", "fp32", 4, {6, 8}},  // 4: TP dim 1 + ZeRO inside
      {"weight/experts", "bf16", 2, {2, 4, 6}},                 // 5: 3-D, slice of dim 1
      {"weight/scale", "fp8", 1, {16}},                         // 6: fp8 halves
      {"weight/half", "fp16", 2, {4, 4}},                       // 7: fp16, whole
      {"optimizer/step", "fp64", 8, {}},                        // 8: a scalar
  };
  return all;
}

// Every piece of the checkpoint, with its owner among four ranks, in each owner's memory order.
inline const std::vector<PieceSpec>& all_pieces() {
  static const std::vector<PieceSpec> all = {
      {0, 0, {2, 0}, {2, 6}, 0, 12},  // rank 0: TP slice 1 first ...
      {0, 0, {0, 0}, {2, 6}, 0, 12},  // ... then TP slice 0: two pieces of one dataset
      {0, 1, {4, 0}, {2, 6}, 0, 12},
      {0, 2, {6, 0}, {2, 6}, 0, 12},
      {1, 1, {0, 0}, {6, 4}, 0, 24},
      {1, 2, {0, 4}, {6, 4}, 0, 24},
      {2, 0, {0, 0}, {8, 6}, 0, 7},  // rows of 6: ranges start and end mid-row
      {2, 1, {0, 0}, {8, 6}, 7, 20},
      {2, 2, {0, 0}, {8, 6}, 20, 33},
      {2, 0, {0, 0}, {8, 6}, 33, 48},
      {3, 1, {0}, {10}, 0, 10},
      {4, 0, {0, 0}, {6, 4}, 0, 10},  // TP slice [0:6, 0:4] split by ZeRO mid-row
      {4, 1, {0, 0}, {6, 4}, 10, 24},
      {4, 2, {0, 4}, {6, 4}, 0, 24},
      {5, 2, {0, 0, 0}, {2, 2, 6}, 5, 24},
      {5, 1, {0, 2, 0}, {2, 2, 6}, 0, 24},
      {5, 2, {0, 0, 0}, {2, 2, 6}, 0, 5},
      {6, 0, {0}, {16}, 0, 8},
      {6, 2, {0}, {16}, 8, 16},
      {7, 1, {0, 0}, {4, 4}, 0, 16},
      {8, 0, {}, {}, 0, 1},
  };
  return all;
}

inline std::vector<PieceSpec> pieces_of_rank(int rank) {
  std::vector<PieceSpec> mine;
  for (const PieceSpec& piece : all_pieces()) {
    if (piece.owner == rank) mine.push_back(piece);
  }
  return mine;
}

// Whole tensors [first, last) as one piece each (a reader with another split).
inline std::vector<PieceSpec> whole_tensors(std::size_t first, std::size_t last) {
  std::vector<PieceSpec> pieces;
  for (std::size_t t = first; t < last; ++t) {
    const std::vector<std::uint64_t>& shape = tensors()[t].shape;
    pieces.push_back(
        {t, -1, std::vector<std::uint64_t>(shape.size(), 0), shape, 0, product(shape)});
  }
  return pieces;
}

inline const std::map<std::string, std::string>& checkpoint_attributes() {
  static const std::map<std::string, std::string> attributes = {
      {"model", "tiny-llama"}, {"tp", "2"},    {"dp", "2"},
      {"zero", "1"},           {"ranks", "4"}, {"state", "full"}};
  return attributes;
}

}  // namespace ckpt::backends::hdf5_test
