// The size of DCP's .metadata against the files torch.distributed.checkpoint 2.15 wrote
// (tests/data/dcp/measure_metadata.py): a Llama-like state dict of 21 or 75 bf16 tensors, saved
// by one process, and by 2, 4 and 8 processes with every tensor sharded on dim 0 over all of
// them, as FSDP2 saves it; and the .metadata of Megatron-core 0.16's torch_dist saves
// (tests/data/dcp/measure_megatron_metadata.py).
#include "harness/checkpoint/dcp_metadata.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
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

// The GPT of tests/data/dcp/measure_megatron_metadata.py in ckptbench's Megatron names: name,
// shape and the dim TP splits (-1: none), per layer and then the others.
struct MegatronTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  int split;
};

std::vector<MegatronTensor> megatron_gpt(int layers) {
  std::vector<MegatronTensor> t;
  for (int i = 0; i < layers; ++i) {
    const std::string p = "decoder.layers." + std::to_string(i) + ".";
    t.insert(t.end(), {{p + "self_attention.linear_qkv.layer_norm_weight", {256}, -1},
                       {p + "self_attention.linear_qkv.weight", {512, 256}, 0},
                       {p + "self_attention.linear_proj.weight", {256, 256}, 1},
                       {p + "mlp.linear_fc1.layer_norm_weight", {256}, -1},
                       {p + "mlp.linear_fc1.weight", {1024, 256}, 0},
                       {p + "mlp.linear_fc2.weight", {256, 512}, 1}});
  }
  t.insert(t.end(), {{"embedding.word_embeddings.weight", {1024, 256}, 0},
                     {"decoder.final_layernorm.weight", {256}, -1},
                     {"output_layer.weight", {1024, 256}, 0}});
  return t;
}

// Every chunk of the save on tp × dp processes (process p at TP rank p % tp): a TP-split
// tensor's slice is held by the processes of its TP rank, an unsplit tensor by all of them,
// and the fully parallel save gives each chunk to the holder with the fewest bytes so far,
// the least-held and largest chunks first (exchange_utils.py: distribute_shards_to_ranks).
std::vector<ManifestTensor> megatron_items(int layers, int tp, int dp) {
  struct Chunk {
    ManifestTensor item;
    std::int64_t bytes;
    std::vector<std::int64_t> holders;
    std::string key;                    // Megatron's: the name without its layer
    std::vector<std::int64_t> offsets;  // in Megatron's tensor: the layer, then the TP slice's
  };
  std::vector<Chunk> chunks;
  for (const MegatronTensor& t : megatron_gpt(layers)) {
    std::int64_t bytes = 2;
    for (const std::int64_t n : t.shape) bytes *= n;
    const std::string layers_prefix = "decoder.layers.";
    const bool layer = t.name.starts_with(layers_prefix);
    const std::size_t number_end = t.name.find('.', layers_prefix.size());
    for (int slice = 0; slice < (t.split < 0 ? 1 : tp); ++slice) {
      Chunk& c = chunks.emplace_back();
      c.item.shard.name = t.name;
      c.item.shard.global_shape = t.shape;
      c.bytes = t.split < 0 ? bytes : bytes / tp;
      for (int p = 0; p < tp * dp; ++p)
        if (t.split < 0 || p % tp == slice) c.holders.push_back(p);
      c.key = layer ? "decoder.layers" + t.name.substr(number_end) : t.name;
      if (layer) {
        c.offsets.push_back(
            std::stoll(t.name.substr(layers_prefix.size(), number_end - layers_prefix.size())));
      }
      for (std::size_t d = 0; d < t.shape.size(); ++d)
        c.offsets.push_back(static_cast<int>(d) == t.split ? slice * t.shape[d] / tp : 0);
    }
  }
  std::ranges::sort(chunks, [](const Chunk& a, const Chunk& b) {
    return std::tuple(a.holders.size(), -a.bytes, a.key, a.offsets) <
           std::tuple(b.holders.size(), -b.bytes, b.key, b.offsets);
  });
  std::vector<std::int64_t> load(static_cast<std::size_t>(tp * dp), 0);
  std::vector<ManifestTensor> out;
  for (Chunk& c : chunks) {
    const std::int64_t rank = *std::ranges::min_element(c.holders, {}, [&](std::int64_t p) {
      return std::pair(load[static_cast<std::size_t>(p)], p);
    });
    load[static_cast<std::size_t>(rank)] += c.bytes;
    c.item.rank = rank;
    c.item.file = "__" + std::to_string(rank) + "_0.distcp";
    out.push_back(std::move(c.item));
  }
  return out;
}

TEST(DcpMetadata, MegatronDistSizeIsWithinFivePercentOfWhatMegatronCoreWrote) {
  // tests/data/dcp/megatron_metadata_sizes.jsonl
  struct Measured {
    int layers;
    int tp;
    int dp;
    std::uint64_t bytes;
  };
  for (const Measured m :
       {Measured{2, 1, 1, 5529}, Measured{2, 1, 2, 5935}, Measured{2, 1, 4, 6033},
        Measured{2, 1, 8, 6191}, Measured{8, 1, 1, 15594}, Measured{8, 1, 2, 16568},
        Measured{2, 2, 1, 9574}, Measured{2, 2, 2, 10114}, Measured{32, 1, 1, 54186},
        Measured{32, 1, 4, 57019}}) {
    const auto ours =
        static_cast<double>(megatron_dist_metadata_bytes(megatron_items(m.layers, m.tp, m.dp)));
    EXPECT_NEAR(ours, static_cast<double>(m.bytes), 0.05 * static_cast<double>(m.bytes))
        << m.layers << " layers at TP " << m.tp << ", DP " << m.dp;
  }
}

TEST(DcpMetadata, MegatronDistCountsLayersAsChunksOfOneTensor) {
  // Megatron's key drops the layer number: both layers' chunks belong to
  // "decoder.layers.mlp.linear_fc2.weight" (36 bytes), written by one process.
  std::vector<ManifestTensor> two = megatron_items(2, 1, 1);
  std::erase_if(two, [](const ManifestTensor& item) {
    return !item.shard.name.ends_with("mlp.linear_fc2.weight");
  });
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(megatron_dist_metadata_bytes(two), 490u + (36 + 56) + 2 * (36 + 233));
  // A second writer of the tensor adds its plan's objects.
  two[1].rank = 1;
  EXPECT_EQ(megatron_dist_metadata_bytes(two), 490u + (36 + 56) + 2 * (36 + 233) + 116);
  // The optimizer's states are tensors of their own, under Megatron's keys.
  two[1].shard.state = workloads::StateKind::exp_avg;
  EXPECT_EQ(megatron_dist_metadata_bytes(two),
            490u + 2 * (36 + 56) + 2 * (36 + 233) + (sizeof("optimizer.state.exp_avg.") - 1) * 2);
}

}  // namespace
}  // namespace ckpt::harness
