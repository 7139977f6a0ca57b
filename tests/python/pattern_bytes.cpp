// Prints the bytes ckptbench wrote for one tensor of a checkpoint, for checks outside C++
// (safetensors_check.py):
//   ckpt_pattern_bytes MANIFEST INDEX COUNT   ->  two lines of hex: the tensor's first and last
//                                                COUNT bytes (fewer when it is smaller)
// MANIFEST is a checkpoint's ckptbench-manifest.json, INDEX a position in its `tensors`. The bytes
// come from the shard's pattern runs (a tensor's bytes are a function of its global byte index,
// global_runs), as fill and restore make them.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "harness/checkpoint/manifest.hpp"
#include "harness/memory/data_pattern.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/plan/shard_geometry.hpp"
#include "harness/spec/case.hpp"

namespace {

using namespace ckpt::harness;

void print_bytes(const std::vector<PatternRange>& ranges, DataPattern pattern, std::uint64_t first,
                 std::uint64_t count) {
  for (std::uint64_t b = first; b < first + count; ++b) {
    for (const PatternRange& r : ranges) {
      if (b >= r.offset && b < r.offset + r.bytes) {
        std::printf("%02x", expected_byte(pattern, r.key, r.global_offset + (b - r.offset)));
        break;
      }
    }
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: ckpt_pattern_bytes MANIFEST INDEX COUNT\n");
    return 2;
  }
  try {
    const std::filesystem::path path(argv[1]);
    if (path.filename() != kManifestName)
      throw std::runtime_error(std::string("not a ") + kManifestName);
    const Manifest manifest = read_manifest(path.parent_path());
    const ManifestTensor& t = manifest.tensors.at(std::strtoull(argv[2], nullptr, 10));
    RankPlan plan;
    PlacedShard& ps = plan.shards.emplace_back();
    ps.shard = t.shard;
    ps.geometry = shard_geometry(ps.shard, manifest.layout.scale);
    ps.bytes = t.bytes;
    ps.data_key = t.data_key;
    const std::vector<PatternRange> ranges = shard_pattern_ranges({plan}, {0});
    const std::uint64_t count =
        std::min<std::uint64_t>(std::strtoull(argv[3], nullptr, 10), ps.bytes);
    print_bytes(ranges, manifest.pattern, 0, count);
    print_bytes(ranges, manifest.pattern, ps.bytes - count, count);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ckpt_pattern_bytes: %s: %s\n", argv[1], e.what());
    return 2;
  }
  return 0;
}
