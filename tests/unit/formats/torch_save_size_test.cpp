// The size of torch.save's archive of one tensor against real files of torch 2.15: sizes
// torch.save wrote (tests/data/dcp/torch_save_sizes.jsonl, measure_torch_save.py), and every
// item of the .distcp files torch.distributed.checkpoint wrote (metadata_sizes.jsonl, fsdp2/).
#include "harness/formats/torch_save_size.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/json_lines.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;
using workloads::Dtype;

const fs::path kDcpData = fs::path(CKPT_SOURCE_DIR) / "tests/data/dcp";

using test_support::json_lines;

TEST(TorchSaveSize, OneTensorIsTheSizeTorchSaveWrote) {
  struct Saved {
    std::vector<std::int64_t> shape;
    Dtype dtype;
    std::uint64_t bytes;
  };
  for (const Saved& s :
       {Saved{{19, 12}, Dtype::bf16, 2025}, Saved{{0, 12}, Dtype::bf16, 1513},
        Saved{{500, 256}, Dtype::bf16, 257577}, Saved{{70000, 2}, Dtype::fp32, 561577},
        Saved{{70000, 2}, Dtype::fp8, 141609}, Saved{{5, 5, 5, 5}, Dtype::fp64, 6569},
        Saved{{}, Dtype::fp16, 1577}, Saved{{0}, Dtype::fp8, 1513}}) {
    EXPECT_EQ(torch_save_tensor_bytes(s.shape, s.dtype), s.bytes)
        << workloads::dtype_name(s.dtype) << " of " << s.shape.size() << " dimensions";
  }
  // Saved to a file, the archive takes the file's name: torch.save(x, "model_optim.pt").
  EXPECT_EQ(torch_save_tensor_bytes({3, 5}, Dtype::fp32, "model_optim"), 1669u);
}

// measure_torch_save.py: 40 seeded shapes of 0 to 5 dimensions per dtype, empty ones included.
TEST(TorchSaveSize, SeededShapesOfEveryDtypeAreTheSizeTorchSaveWrote) {
  const std::vector<nlohmann::json> saved = json_lines(kDcpData / "torch_save_sizes.jsonl");
  ASSERT_EQ(saved.size(), 200u);
  for (const nlohmann::json& s : saved) {
    EXPECT_EQ(torch_save_tensor_bytes(s["shape"].get<std::vector<std::int64_t>>(),
                                      workloads::parse_dtype(s["dtype"].get<std::string>())),
              s["bytes"].get<std::uint64_t>())
        << s.dump();
  }
}

TEST(TorchSaveSize, EveryItemOfFsdp2sDistcpFilesIsATorchSaveArchive) {
  for (const nlohmann::json& save : json_lines(kDcpData / "fsdp2" / "dcp_fsdp2.jsonl")) {
    std::map<std::string, std::uint64_t> files;
    for (const nlohmann::json& chunk : save["chunks"]) {
      const std::uint64_t bytes =
          torch_save_tensor_bytes(chunk["sizes"].get<std::vector<std::int64_t>>(), Dtype::bf16);
      EXPECT_EQ(bytes, chunk["item_bytes"].get<std::uint64_t>()) << chunk.dump();
      files[chunk["file"].get<std::string>()] += bytes;
    }
    for (const auto& [file, bytes] : files)
      EXPECT_EQ(bytes, save["files"][file].get<std::uint64_t>()) << file;
  }
}

// measure_metadata.py's Llama-like model, every tensor cut on dim 0 over the processes.
TEST(TorchSaveSize, DistcpFilesOfOneToEightProcessesAreTheirItemsArchives) {
  for (const nlohmann::json& save : json_lines(kDcpData / "metadata_sizes.jsonl")) {
    const auto n = save["processes"].get<std::int64_t>();
    std::vector<std::vector<std::int64_t>> shapes{{1000, 256}, {256}, {1000, 256}};
    for (int layer = 0; layer < save["layers"].get<int>(); ++layer) {
      shapes.insert(shapes.end(), {{256, 256},
                                   {128, 256},
                                   {128, 256},
                                   {256, 256},
                                   {512, 256},
                                   {512, 256},
                                   {256, 512},
                                   {256},
                                   {256}});
    }
    std::uint64_t file = 0;
    for (std::vector<std::int64_t> shape : shapes) {
      shape[0] /= n;  // every size divides
      file += torch_save_tensor_bytes(shape, Dtype::bf16);
    }
    for (const auto& [name, bytes] : save["distcp"].items())
      EXPECT_EQ(file, bytes.get<std::uint64_t>()) << name << " of " << save.dump();
  }
}

}  // namespace
}  // namespace ckpt::harness
