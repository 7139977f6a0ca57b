// The size of DCP's .metadata against the files torch.distributed.checkpoint 2.15 wrote
// (tests/data/dcp/measure_metadata.py): a Llama-like state dict of 21 or 75 bf16 tensors, saved
// by one process, and by 2, 4 and 8 processes with every tensor sharded on dim 0 over all of
// them, as FSDP2 saves it.
#include "harness/checkpoint/dcp_metadata.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "harness/checkpoint/manifest.hpp"

namespace ckpt::harness {
namespace {

// The measured model's tensors: name and shape.
std::vector<std::pair<std::string, std::vector<std::int64_t>>> llama_like(int layers) {
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> t{
      {"model.embed_tokens.weight", {1000, 256}}};
  for (int i = 0; i < layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    t.insert(t.end(), {{p + "self_attn.q_proj.weight", {256, 256}},
                       {p + "self_attn.k_proj.weight", {128, 256}},
                       {p + "self_attn.v_proj.weight", {128, 256}},
                       {p + "self_attn.o_proj.weight", {256, 256}},
                       {p + "mlp.gate_proj.weight", {512, 256}},
                       {p + "mlp.up_proj.weight", {512, 256}},
                       {p + "mlp.down_proj.weight", {256, 512}},
                       {p + "input_layernorm.weight", {256}},
                       {p + "post_attention_layernorm.weight", {256}}});
  }
  t.insert(t.end(), {{"model.norm.weight", {256}}, {"lm_head.weight", {1000, 256}}});
  return t;
}

// Every tensor in one chunk per process, process p writing __p_0.distcp.
std::vector<ManifestTensor> items(int layers, int processes) {
  std::vector<ManifestTensor> out;
  for (const auto& [name, shape] : llama_like(layers)) {
    for (int p = 0; p < processes; ++p) {
      ManifestTensor& item = out.emplace_back();
      item.shard.name = name;
      item.shard.global_shape = shape;
      item.rank = p;
      item.file = "__" + std::to_string(p) + "_0.distcp";
    }
  }
  return out;
}

TEST(DcpMetadata, SizeIsWithinAFewBytesPerChunkOfWhatTorchWrote) {
  struct Measured {
    int layers;
    int processes;
    std::uint64_t bytes;
  };
  for (const Measured m : {Measured{2, 1, 5439}, Measured{2, 2, 10282}, Measured{2, 4, 16965},
                           Measured{2, 8, 30286}, Measured{8, 1, 18171}, Measured{8, 2, 35644}}) {
    const std::vector<ManifestTensor> chunks = items(m.layers, m.processes);
    // ckptbench names a tensor "weight/<name>" where torch has "<name>": 7 bytes each time the
    // name is written, once per chunk.
    const double ours = static_cast<double>(dcp_metadata_bytes(chunks) - 7 * chunks.size());
    EXPECT_NEAR(ours, static_cast<double>(m.bytes), 0.005 * static_cast<double>(m.bytes))
        << m.layers << " layers on " << m.processes << " processes";
  }
}

TEST(DcpMetadata, MegatronDistKeepsItsFieldEstimate) {
  // 400 + per tensor len(fqn) + 130 + 3·ndim + per chunk len(fqn) + len(file) + 150 + 6·ndim,
  // fqn "weight/model.norm.weight" (24 bytes), file "__0_0.distcp" (12), one dimension.
  const std::vector<ManifestTensor> one = {items(0, 1).at(1)};
  EXPECT_EQ(megatron_dist_metadata_bytes(one), 400u + (24 + 130 + 3) + (24 + 12 + 150 + 6));
}

}  // namespace
}  // namespace ckpt::harness
