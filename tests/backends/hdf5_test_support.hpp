#pragma once

// Helpers for the hdf5 backend's tests under mpirun: a directory every rank shares, a small
// transformer-like set of tensors split into pieces the way TP, ZeRO and modeled ranks split
// them, plans and memory images built from those pieces, and tools run through popen.
#include <gtest/gtest.h>
#include <mpi.h>
#include <stdlib.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "backends/backend.hpp"
#include "backends/registry.hpp"

namespace ckpt::backends::hdf5_test {

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Whether this build has the hdf5 backend and can run it.
inline bool hdf5_available() {
  for (const BackendInfo& info : list_backends()) {
    if (info.name == "hdf5") return info.available;
  }
  return false;
}

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

inline ProcessGroup group_of(MPI_Comm comm) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  return ProcessGroup{rank, size, MPI_Comm_c2f(comm)};
}

// Whether `value` holds on every rank of the world (so that all ranks take the same branch).
inline bool everywhere(bool value) {
  int local = value ? 1 : 0;
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return global != 0;
}

// A directory under /tmp made by rank 0 and known to every rank; rank 0 removes it after all
// ranks are done with it.
class SharedDir {
 public:
  SharedDir() {
    std::array<char, 256> name{};
    if (world_rank() == 0) {
      std::string pattern = "/tmp/ckpt-hdf5-test-XXXXXX";
      if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
      std::strncpy(name.data(), pattern.c_str(), name.size() - 1);
    }
    MPI_Bcast(name.data(), static_cast<int>(name.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = name.data();
  }
  ~SharedDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) {
      std::error_code ignored;
      std::filesystem::remove_all(path_, ignored);
    }
  }
  SharedDir(const SharedDir&) = delete;
  SharedDir& operator=(const SharedDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct Tensor {
  std::string name;
  std::string dtype;
  std::uint32_t element_bytes;
  std::vector<std::uint64_t> shape;
};

// A piece of tensor `tensor` held by world rank `owner`.
struct PieceSpec {
  std::size_t tensor;
  int owner;
  std::vector<std::uint64_t> offset;
  std::vector<std::uint64_t> extent;
  std::uint64_t flat_begin;
  std::uint64_t flat_end;
};

inline std::uint64_t product(const std::vector<std::uint64_t>& values) {
  return std::accumulate(values.begin(), values.end(), std::uint64_t{1}, std::multiplies<>());
}

// The byte `b` of element `element` (global row-major index) of tensor `tensor`.
inline std::byte tensor_byte(std::size_t tensor, std::uint64_t element, std::uint32_t b) {
  std::uint64_t z = (tensor + 1) * 0x9e3779b97f4a7c15ULL + element * 0xbf58476d1ce4e5b9ULL +
                    b * 0x94d049bb133111ebULL;
  z = (z ^ (z >> 31)) * 0xd6e8feb86659fd39ULL;
  return static_cast<std::byte>(z ^ (z >> 29));
}

// The global row-major index of element k (row-major inside the slice) of a slice.
inline std::uint64_t global_index(const std::vector<std::uint64_t>& shape,
                                  const std::vector<std::uint64_t>& offset,
                                  const std::vector<std::uint64_t>& extent, std::uint64_t k) {
  std::uint64_t index = 0;
  std::uint64_t stride = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    index += (offset[d] + k % extent[d]) * stride;
    k /= extent[d];
    stride *= shape[d];
  }
  return index;
}

// One process's plan over the pieces it owns (or is given), and the memory image it writes
// from or must read back: pieces laid out in the given order, 3 bytes apart so that element
// boundaries fall at odd memory offsets.
struct ProcessPlan {
  IoPlan plan;
  std::vector<std::byte> memory;
};

inline ProcessPlan plan_of(const std::vector<Tensor>& tensors, const std::vector<PieceSpec>& pieces,
                           const std::string& path, bool shared,
                           const std::map<std::string, std::string>& attributes) {
  ProcessPlan result;
  FilePlan file{path, {}, 0, 0, shared, {}};
  std::uint64_t memory = 1;
  for (const PieceSpec& p : pieces) {
    const Tensor& t = tensors[p.tensor];
    DatasetPiece piece{t.name,   t.dtype,      t.element_bytes, t.shape, p.offset,
                       p.extent, p.flat_begin, p.flat_end,      memory};
    file.extents.push_back(Extent{
        file.extents.empty() ? 0 : file.extents.back().file_offset + file.extents.back().length,
        memory, piece.bytes()});
    result.memory.resize(memory + piece.bytes() + 3);
    for (std::uint64_t k = p.flat_begin; k < p.flat_end; ++k) {
      const std::uint64_t element = global_index(t.shape, p.offset, p.extent, k);
      for (std::uint32_t b = 0; b < t.element_bytes; ++b) {
        result.memory[memory + (k - p.flat_begin) * t.element_bytes + b] =
            tensor_byte(p.tensor, element, b);
      }
    }
    file.datasets.push_back(std::move(piece));
    memory += file.datasets.back().bytes() + 3;
  }
  result.plan.files.push_back(std::move(file));
  result.plan.attributes = attributes;
  return result;
}

inline MemoryView view_of(std::vector<std::byte>& memory) {
  return MemoryView{memory.data(), memory.size()};
}

// The command's standard output (and error), or a line saying why it could not run.
inline std::string run_command(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen((command + " 2>&1").c_str(), "r"), &::pclose);
  if (!pipe) return "popen failed: " + command;
  std::string output;
  std::array<char, 4096> chunk{};
  while (const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe.get()))
    output.append(chunk.data(), n);
  return output;
}

inline bool have_tool(const std::string& tool) {
  return run_command("command -v " + tool) != "";
}

}  // namespace ckpt::backends::hdf5_test
