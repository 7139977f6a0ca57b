#include "harness/campaign/campaign_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>

#include "harness/campaign/campaign_reduce.hpp"
#include "harness/common/config_error.hpp"
#include "harness/models/model_zoo.hpp"
#include "workloads/layout.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::harness::schema {
namespace {

using backends::SyncPolicy;
using workloads::Naming;
using workloads::StateScope;

std::string_view sync_name(SyncPolicy policy) {
  switch (policy) {
    case SyncPolicy::none:
      return "none";
    case SyncPolicy::fsync:
      return "fsync";
    case SyncPolicy::fdatasync:
      return "fdatasync";
  }
  return "none";
}

// The enum value whose name is `name`. The schema's choices are these names, so a miss is a
// bug, not a user error.
template <typename Enum, std::size_t N>
Enum enum_named(const std::string& name, const std::array<Enum, N>& all,
                std::string_view (*name_of)(Enum)) {
  for (const Enum value : all) {
    if (name_of(value) == name) return value;
  }
  throw std::logic_error("campaign schema: no enum value named " + name);
}

constexpr std::array kMappings{Mapping::file_per_tensor, Mapping::file_per_rank,
                               Mapping::file_per_node, Mapping::shared_file};
constexpr std::array kFormats{CheckpointFormat::raw, CheckpointFormat::safetensors};
constexpr std::array kLayouts{DirectoryLayout::dcp, DirectoryLayout::megatron,
                              DirectoryLayout::deepspeed, DirectoryLayout::megatron_dist};
constexpr std::array kMegatronOptimizers{MegatronOptimizer::gathered, MegatronOptimizer::per_dp};
constexpr std::array kPatterns{DataPattern::random, DataPattern::zeros, DataPattern::bf16,
                               DataPattern::trained};
constexpr std::array kPolicies{CachePolicy::none, CachePolicy::drop, CachePolicy::fadvise,
                               CachePolicy::read_shift};
constexpr std::array kPhases{PhaseSelection::checkpoint, PhaseSelection::restore,
                             PhaseSelection::both, PhaseSelection::load};
constexpr std::array kLoadMethods{LoadMethod::pipelined, LoadMethod::mmap, LoadMethod::read};
constexpr std::array kMpiIoChoices{MpiIoChoice::library_default, MpiIoChoice::romio,
                                   MpiIoChoice::ompio};
constexpr std::array kSelects{RankSelect::all, RankSelect::list, RankSelect::node};
constexpr std::array kSyncs{SyncPolicy::none, SyncPolicy::fsync, SyncPolicy::fdatasync};
constexpr std::array kScopes{StateScope::weights, StateScope::full};
constexpr std::array kZeroShardings{workloads::ZeroSharding::flat,
                                    workloads::ZeroSharding::per_tensor};
constexpr std::array kReplicaReads{ReplicaRead::written, ReplicaRead::read,
                                   ReplicaRead::cooperative};
constexpr std::array kNamings{Naming::megatron, Naming::hf};
constexpr std::array kSizings{workloads::Sizing::exact, workloads::Sizing::dlio};

// The campaign key to blame for a SpecError: the parallel option it names, else the model.
std::string campaign_key_of(const std::string& spec_key) {
  constexpr std::array<std::string_view, 9> kParallel{"tp",
                                                      "pp",
                                                      "dp",
                                                      "ep",
                                                      "zero",
                                                      "zero_sharding",
                                                      "vocab_divisor",
                                                      "pp_first_stage_layers",
                                                      "pp_last_stage_layers"};
  if (std::find(kParallel.begin(), kParallel.end(), spec_key) != kParallel.end())
    return "parallel." + spec_key;
  if (spec_key == "sizing") return "model.sizing";
  if (spec_key == "weights") return "model.weights";
  return "model.name";
}

// A model error without the "--model: " the zoo lookup puts in front for the command line.
std::string model_problem(const ConfigError& e) {
  std::string message = e.what();
  const std::string prefix = e.source() + ": ";
  if (e.source() == "--model" && message.starts_with(prefix)) message.erase(0, prefix.size());
  return message;
}

std::string world_of(const workloads::ParallelSpec& p) {
  return "the world of " + std::to_string(p.world_size()) + " ranks (TP " + std::to_string(p.tp) +
         " × PP " + std::to_string(p.pp) + " × DP " + std::to_string(p.dp) + ")";
}

void check_rank_list(const std::vector<std::int64_t>& list, const workloads::ParallelSpec& p,
                     const CaseValues& v, const std::string& table = "ranks") {
  const std::string key = table + ".list";
  if (list.empty()) v.fail(key, "select = \"list\" needs at least one rank, e.g. list = [0]");
  std::set<std::int64_t> seen;
  for (const std::int64_t rank : list) {
    if (rank < 0 || rank >= p.world_size()) {
      v.fail(key, "rank " + std::to_string(rank) + " is outside " + world_of(p) +
                      ": ranks are 0.." + std::to_string(p.world_size() - 1));
    }
    if (!seen.insert(rank).second) v.fail(key, "rank " + std::to_string(rank) + " is listed twice");
  }
}

// A world that gpus_per_node does not divide ends in a partial node; that is fine.
void check_node(const RankSelection& r, const workloads::ParallelSpec& p, const CaseValues& v,
                const std::string& table = "ranks") {
  const std::int64_t nodes = (p.world_size() + r.gpus_per_node - 1) / r.gpus_per_node;
  if (r.node < nodes) return;
  v.fail(table + ".node", "node " + std::to_string(r.node) + " lies outside " + world_of(p) +
                              ": with gpus_per_node = " + std::to_string(r.gpus_per_node) +
                              " the nodes are 0.." + std::to_string(nodes - 1));
}

RankSelection ranks_of(const CaseValues& v, const workloads::ParallelSpec& p) {
  RankSelection r;
  r.select = enum_named(v.text("ranks.select"), kSelects, rank_select_name);
  r.list = std::get<std::vector<std::int64_t>>(v.value("ranks.list"));
  r.node = v.integer("ranks.node");
  r.gpus_per_node = v.integer("ranks.gpus_per_node");
  if (r.select == RankSelect::list) check_rank_list(r.list, p, v);
  if (r.select == RankSelect::node) check_node(r, p, v);
  return r;
}

// [restore]: each key left at its "keep" value takes the writer's. The restore layout must be
// valid for the model (SpecError names the restore key), and cannot ask for state the writer's
// state.scope never wrote.
RestoreSpec restore_of(const CaseValues& v, const Case& c) {
  RestoreSpec r;
  r.parallel = c.parallel;
  const auto take = [&v](const char* key, std::int64_t& into) {
    if (const std::int64_t value = v.integer(key); value > 0) into = value;
  };
  take("restore.tp", r.parallel.tp);
  take("restore.pp", r.parallel.pp);
  take("restore.dp", r.parallel.dp);
  take("restore.ep", r.parallel.ep);
  if (const std::int64_t zero = v.integer("restore.zero"); zero >= 0)
    r.parallel.zero_stage = static_cast<int>(zero);
  // A reader below ZeRO-3 holds whole tensors or flat optimizer ranges, never FSDP2's chunks.
  if (r.parallel.zero_stage != 3) r.parallel.zero_sharding = workloads::ZeroSharding::flat;
  r.parallel.pp_first_stage_layers =
      r.parallel.pp == c.parallel.pp ? c.parallel.pp_first_stage_layers : 0;
  r.parallel.pp_last_stage_layers =
      r.parallel.pp == c.parallel.pp ? c.parallel.pp_last_stage_layers : 0;
  r.state = c.state;
  r.state.naming = c.state.effective_naming();  // the checkpoint's tensor names
  if (const auto* scope = std::get_if<std::string>(&v.value("restore.state"))) {
    r.state.scope = enum_named(*scope, kScopes, workloads::state_scope_name);
    if (r.state.scope == workloads::StateScope::full &&
        c.state.scope == workloads::StateScope::weights) {
      v.fail("restore.state",
             "restore.state = \"full\" asks for optimizer state (master, exp_avg, exp_avg_sq) that "
             "a checkpoint of state.scope = \"weights\" never holds; restore its weights "
             "(restore.state = \"weights\") or write it with state.scope = \"full\"");
    }
  }
  r.ranks = c.ranks;
  const auto* select = std::get_if<std::string>(&v.value("restore.select"));
  if (select != nullptr) {
    r.ranks.select = enum_named(*select, kSelects, rank_select_name);
    r.ranks.list = std::get<std::vector<std::int64_t>>(v.value("restore.list"));
    r.ranks.node = v.integer("restore.node");
  }
  r.read = v.text("restore.read") == "whole_items" ? ReshardRead::whole_items : ReshardRead::exact;
  r.gap_bytes = static_cast<std::uint64_t>(v.integer("restore.gap_bytes"));
  r.replicas = enum_named(v.text("restore.replicas"), kReplicaReads, replica_read_name);
  const workloads::ParallelSpec& p = c.parallel;
  const workloads::ParallelSpec& q = r.parallel;
  r.reshard = q.tp != p.tp || q.pp != p.pp || q.dp != p.dp || q.ep != p.ep ||
              q.zero_stage != p.zero_stage || q.zero_sharding != p.zero_sharding ||
              r.state.scope != c.state.scope || select != nullptr ||
              r.read == ReshardRead::whole_items;
  if (!r.reshard) return r;
  try {
    const workloads::Layout layout(c.model, r.parallel, r.state);
  } catch (const workloads::SpecError& e) {
    const std::string key = campaign_key_of(e.key());
    v.fail(key.starts_with("parallel.") ? "restore." + key.substr(9) : "restore.tp", e.what());
  }
  const std::string table = select != nullptr ? "restore" : "ranks";
  if (r.ranks.select == RankSelect::list) check_rank_list(r.ranks.list, q, v, table);
  if (r.ranks.select == RankSelect::node) check_node(r.ranks, q, v, table);
  return r;
}

// restore.replicas gives the DP replicas of the writer's layout their copies of the replicated
// state: what it cannot plan.
void check_replicas(const Case& c, const CaseValues& v) {
  if (c.restore.replicas == ReplicaRead::written) return;
  const std::string is =
      "restore.replicas = \"" + std::string(replica_read_name(c.restore.replicas)) + "\" ";
  const auto refuse = [&](std::string_view key, const std::string& why) {
    v.fail(key, is + why + ", or set restore.replicas = \"written\"");
  };
  if (c.restore.reshard && c.restore.replicas == ReplicaRead::read)
    refuse("restore.tp",
           "restores the writer's own layout: leave the restore.* layout keys unset, or use "
           "\"cooperative\" for a resharded restore");
  if (c.parallel.ep > 1 && !c.restore.reshard)
    refuse("parallel.ep",
           "plans replicas across all of DP, and expert tensors are replicated within an expert "
           "group only: use parallel.ep = 1");
  if (c.directory_layout == DirectoryLayout::megatron_dist && c.parallel.dp > 1 &&
      !c.restore.reshard)
    refuse("strategy.layout",
           "gives each replica its DP rank 0's pieces, and strategy.layout = \"megatron_dist\" "
           "spreads the DP-replicated pieces over the DP ranks: use another strategy.layout");
  if (c.restore.parallel.ep > 1 && c.restore.reshard)
    refuse("restore.ep",
           "gives the new layout's DP replicas their copies across all of DP, and expert tensors "
           "are replicated within an expert group only: use restore.ep = 1");
  if (c.state.sizing == workloads::Sizing::dlio)
    refuse("model.sizing", "shares tensors, which DLIO's sizing has none of: use \"exact\"");
  if (c.compression.enabled())
    refuse("strategy.compression", "reads raw pieces: set strategy.compression = \"none\"");
  if (c.reuse_bytes > 0)
    refuse("memory.reuse_bytes", "gives every replica its own copy: set memory.reuse_bytes = 0");
  if (c.cache == CachePolicy::read_shift)
    refuse("cache.policy", "reads each rank's own copies: use another cache.policy");
  const bool host =
      c.memory_space == MemorySpaceKind::host || c.memory_space == MemorySpaceKind::pinned;
  if (c.restore.replicas == ReplicaRead::cooperative && !host)
    refuse("memory.space", "sends pieces between host buffers: use \"host\" or \"pinned\"");
}

// load.cooperative sends host buffers' bytes between processes, read through the backend.
void check_cooperative_load(const Case& c, const CaseValues& v) {
  if (!c.load.cooperative) return;
  const auto refuse = [&](std::string_view key, const std::string& why) {
    v.fail(key, "load.cooperative = true " + why + ", or set load.cooperative = false");
  };
  if (c.load.settings.direct)
    refuse("load.direct",
           "reads the pieces with backend.name's own settings: set load.direct = false");
  if (c.compression.enabled())
    refuse("strategy.compression", "reads raw ranges: set strategy.compression = \"none\"");
  if (c.io.direct)
    refuse("backend.direct",
           "reads the ranges the loader plans, not whole blocks: set "
           "backend.direct = false");
  if (c.memory_space != MemorySpaceKind::host && c.memory_space != MemorySpaceKind::pinned)
    refuse("memory.space", "sends pieces between host buffers: use \"host\" or \"pinned\"");
}

// [load]: the loader's settings and the inference layout (TP load.tp, or the checkpoint's; PP 1,
// DP 1, weights only, every rank), which must suit the model (SpecError names load.tp).
LoadSpec load_of(const CaseValues& v, const Case& c) {
  LoadSpec l;
  l.settings.method = enum_named(v.text("load.method"), kLoadMethods, load_method_name);
  l.settings.threads = static_cast<int>(v.integer("load.threads"));
  l.settings.direct = v.boolean("load.direct");
  l.settings.chunk_bytes = static_cast<std::uint64_t>(v.integer("load.chunk_bytes"));
  l.settings.pool_bytes = static_cast<std::uint64_t>(v.integer("load.pool_bytes"));
  l.cooperative = v.boolean("load.cooperative");
  if (l.settings.chunk_bytes % 4096 != 0) {
    v.fail("load.chunk_bytes",
           fmt::format("load.chunk_bytes = {} must be a multiple of 4096 (O_DIRECT reads whole "
                       "blocks); round it, e.g. to {}",
                       l.settings.chunk_bytes, (l.settings.chunk_bytes / 4096 + 1) * 4096));
  }
  if (l.settings.pool_bytes < l.settings.chunk_bytes) {
    v.fail("load.pool_bytes",
           fmt::format("load.pool_bytes = {} must hold at least one chunk (load.chunk_bytes = {}); "
                       "raise load.pool_bytes or lower load.chunk_bytes",
                       l.settings.pool_bytes, l.settings.chunk_bytes));
  }
  const std::int64_t tp = v.integer("load.tp") > 0 ? v.integer("load.tp") : c.parallel.tp;
  try {
    l.inference = inference_layout(c.model, c.parallel, c.state, tp,
                                   static_cast<std::uint64_t>(v.integer("load.gap_bytes")));
  } catch (const workloads::SpecError& e) {
    v.fail("load.tp", fmt::format("load.tp = {}: {}", tp, e.what()));
  }
  return l;
}

workloads::ParallelSpec parallel_of(const CaseValues& v) {
  workloads::ParallelSpec p;
  p.tp = v.integer("parallel.tp");
  p.pp = v.integer("parallel.pp");
  p.dp = v.integer("parallel.dp");
  p.ep = v.integer("parallel.ep");
  p.zero_stage = static_cast<int>(v.integer("parallel.zero"));  // the schema caps it at INT_MAX
  p.zero_sharding =
      enum_named(v.text("parallel.zero_sharding"), kZeroShardings, workloads::zero_sharding_name);
  p.vocab_divisor = v.integer("parallel.vocab_divisor");
  p.pp_first_stage_layers = v.integer("parallel.pp_first_stage_layers");
  p.pp_last_stage_layers = v.integer("parallel.pp_last_stage_layers");
  return p;
}

workloads::StateSpec state_of(const CaseValues& v) {
  workloads::StateSpec s;
  s.scope = enum_named(v.text("state.scope"), kScopes, workloads::state_scope_name);
  if (const auto* naming = std::get_if<std::string>(&v.value("state.naming"))) {
    s.naming = enum_named(*naming, kNamings, workloads::naming_name);
  }
  s.weight_dtype = workloads::parse_dtype(v.text("state.weight_dtype"));
  const std::string& master = v.text("state.master_dtype");
  s.master_dtype = master == "none" ? std::nullopt : std::optional(workloads::parse_dtype(master));
  s.optimizer_dtype = workloads::parse_dtype(v.text("state.optimizer_dtype"));
  s.sizing = enum_named(v.text("model.sizing"), kSizings, workloads::sizing_name);
  s.weights =
      enum_named(v.text("model.weights"), workloads::kWeightFormats, workloads::weight_format_name);
  return s;
}

// `text` with control bytes as \xNN, shortened past 60 bytes, for messages.
std::string printable(const std::string& text) {
  std::string out;
  for (const char ch : text.substr(0, 60)) {
    const auto byte = static_cast<unsigned char>(ch);
    out += byte < 0x20 || byte == 0x7f ? fmt::format("\\x{:02x}", byte) : std::string(1, ch);
  }
  return text.size() > 60 ? out + "…" : out;
}

// campaign.name names a directory under campaign.target and under --output: one path component.
constexpr std::size_t kMaxCampaignNameBytes = 200;

void check_campaign_name(const std::string& name, const CaseValues& v) {
  const char* why = nullptr;
  if (name.empty()) {
    why = "is empty";
  } else if (name.find('\0') != std::string::npos) {
    why = "contains a NUL byte";
  } else if (name.find('/') != std::string::npos) {
    why = "contains '/'";
  } else if (name == "." || name == "..") {
    why = "is \".\" or \"..\"";
  } else if (name.size() > kMaxCampaignNameBytes) {
    v.fail("campaign.name",
           fmt::format("is {} bytes long; at most {} bytes are allowed (it names a directory "
                       "under campaign.target and --output)",
                       name.size(), kMaxCampaignNameBytes));
  }
  if (why != nullptr) {
    v.fail("campaign.name",
           fmt::format("\"{}\" {}: it must be one path component (no '/', not \".\" or \"..\", no "
                       "NUL, not empty, at most {} bytes) because it names a directory under "
                       "campaign.target and --output",
                       printable(name), why, kMaxCampaignNameBytes));
  }
}

void fill_campaign(Case& c, const CaseValues& v) {
  c.campaign = v.text("campaign.name");
  check_campaign_name(c.campaign, v);
  // Relative targets resolve against the working directory once, here, so that every later
  // stage (and every result record) sees the same absolute path.
  c.target = std::filesystem::absolute(v.text("campaign.target")).lexically_normal();
  c.create_target = v.boolean("campaign.create_target");
  c.overwrite = v.boolean("campaign.overwrite");
  c.keep = v.boolean("campaign.keep");
  c.iterations = static_cast<int>(v.integer("campaign.iterations"));  // capped at INT_MAX
  c.warmup = static_cast<int>(v.integer("campaign.warmup"));
  c.phase = enum_named(v.text("campaign.phase"), kPhases, phase_name);
  c.memory_budget = static_cast<std::uint64_t>(v.integer("campaign.memory_budget"));
  c.mpi_io = enum_named(v.text("campaign.mpi_io"), kMpiIoChoices, mpi_io_choice_name);
}

// O_DIRECT needs file offsets aligned to direct_alignment. A strategy alignment of 0 ("none")
// therefore becomes direct_alignment under direct I/O; any other must be a multiple of it.
void settle_alignment(Case& c, const CaseValues& v) {
  if (!c.io.direct) return;
  const std::uint64_t required = c.io.direct_alignment;
  if ((required & (required - 1)) != 0) {
    v.fail("backend.direct_alignment", "must be a power of two for backend.direct = true (got " +
                                           std::to_string(required) + ")");
  }
  if (c.alignment == 0) {
    c.alignment = required;
  } else if (c.alignment % required != 0) {
    const std::string r = std::to_string(required);
    v.fail("strategy.alignment", std::to_string(c.alignment) +
                                     " is not a multiple of backend.direct_alignment (" + r +
                                     "), which backend.direct = true needs: use 0 (aligns to " + r +
                                     ") or a multiple of " + r);
  }
}

// The chosen backend's own table, flattened to text: {"collective": "true", "hints.cb_nodes": "4"}.
backends::BackendOptions backend_options_of(const std::string& backend, const CaseValues& v) {
  backends::BackendOptions options;
  const std::string table = "backend." + backend;
  for (const KeySpec& spec : keys()) {
    if (spec.table != table) continue;
    const nlohmann::json value = to_json(v.value(spec.dotted()));
    if (spec.kind == Kind::string_map) {
      for (const auto& [key, text] : value.items())
        options[std::string(spec.key) + "." + key] = text.get<std::string>();
    } else if (value.is_string()) {
      options[std::string(spec.key)] = value.get<std::string>();
    } else if (!value.is_null()) {
      options[std::string(spec.key)] = value.dump();
    }
  }
  return options;
}

// safetensors files hold one writer's tensors back to back after the header (readers refuse
// gaps), so nothing may pad them or share the file.
void check_format(const Case& c, const CaseValues& v) {
  if (c.format != CheckpointFormat::safetensors) return;
  const std::string why = " with strategy.format = \"safetensors\"";
  if (c.mapping != Mapping::file_per_rank) {
    v.fail("strategy.mapping", "\"" + std::string(mapping_name(c.mapping)) + "\" cannot be used" +
                                   why + ", which names its own files: remove strategy.mapping");
  }
  if (c.io.direct)
    v.fail("backend.direct",
           "true cannot be used" + why + " (its tensors are not aligned): set it to false");
  if (c.alignment != 0) {
    v.fail("strategy.alignment", std::to_string(c.alignment) + " cannot be used" + why +
                                     " (tensors are back to back): remove it");
  }
}

void fill_io(Case& c, const CaseValues& v) {
  c.mapping = enum_named(v.text("strategy.mapping"), kMappings, mapping_name);
  c.directory_layout = enum_named(v.text("strategy.layout"), kLayouts, directory_layout_name);
  c.megatron_optimizer = enum_named(v.text("strategy.megatron_optimizer"), kMegatronOptimizers,
                                    megatron_optimizer_name);
  c.writer_threads = static_cast<int>(v.integer("strategy.writer_threads"));
  if (c.directory_layout == DirectoryLayout::deepspeed && c.parallel.pp > 1 &&
      c.parallel.zero_stage >= 2) {
    v.fail("strategy.layout", deepspeed_pipeline_refusal(c.parallel.zero_stage));
  }
  if (const std::string why = per_tensor_sharding_refusal(c); !why.empty())
    v.fail("parallel.zero_sharding", why);
  c.alignment = static_cast<std::uint64_t>(v.integer("strategy.alignment"));
  c.chunk_bytes = static_cast<std::uint64_t>(v.integer("strategy.chunk_bytes"));
  c.coalesce_bytes = static_cast<std::uint64_t>(v.integer("strategy.coalesce_bytes"));
  c.format = enum_named(v.text("strategy.format"), kFormats, checkpoint_format_name);
  c.max_shard_bytes = static_cast<std::uint64_t>(v.integer("strategy.max_shard_bytes"));
  c.backend = v.text("backend.name");
  c.io.direct = v.boolean("backend.direct");
  c.io.request_latency = v.boolean("measure.latency");
  c.io.direct_alignment = static_cast<std::uint64_t>(v.integer("backend.direct_alignment"));
  c.io.sync = enum_named(v.text("backend.sync"), kSyncs, sync_name);
  c.io.fallocate = v.boolean("backend.fallocate");
  c.io.threads = static_cast<int>(v.integer("backend.threads"));  // capped at INT_MAX
  c.io.queue_depth = static_cast<int>(v.integer("backend.queue_depth"));
  c.io.sqpoll = v.boolean("backend.sqpoll");
  c.backend_options = backend_options_of(c.backend, v);
  settle_alignment(c, v);
  check_format(c, v);
  c.data = enum_named(v.text("data.pattern"), kPatterns, data_pattern_name);
  c.seed = static_cast<std::uint64_t>(v.integer("data.seed"));
  c.verify = v.boolean("data.verify");
  c.cache = enum_named(v.text("cache.policy"), kPolicies, cache_policy_name);
}

// Staging chunks start on page boundaries (and on direct_alignment ones under O_DIRECT), so
// that every chunk a backend writes from keeps the plan's alignment.
void fill_memory(Case& c, const CaseValues& v) {
  c.memory_space = parse_memory_space(v.text("memory.space")).value_or(MemorySpaceKind::host);
  c.staging.chunk_bytes = static_cast<std::uint64_t>(v.integer("memory.staging_bytes"));
  c.staging.buffers = static_cast<int>(v.integer("memory.staging_buffers"));  // capped at 64
  c.reuse_bytes = static_cast<std::uint64_t>(v.integer("memory.reuse_bytes"));
  const std::uint64_t unit =
      c.io.direct ? std::max<std::uint64_t>(4096, c.io.direct_alignment) : 4096;
  if (c.staging.chunk_bytes % unit != 0) {
    v.fail("memory.staging_bytes",
           std::to_string(c.staging.chunk_bytes) + " is not a multiple of " + std::to_string(unit) +
               (c.io.direct ? " (4096 and backend.direct_alignment)" : " (a page)"));
  }
}

// memory.reuse_bytes: every request moves through one small host buffer, as fio's and IOR's do,
// so the files do not hold the checkpoint's data and a read leaves only the last request in
// memory. What needs the whole share in memory (verification, headers, reshard copies, the
// training loop, the loader) is refused rather than quietly measured differently.
void check_reuse(const Case& c, const CaseValues& v) {
  if (c.reuse_bytes == 0) return;
  const std::string is = "memory.reuse_bytes = " + std::to_string(c.reuse_bytes);
  const std::uint64_t unit =
      c.io.direct ? std::max<std::uint64_t>(4096, c.io.direct_alignment) : 4096;
  if (c.reuse_bytes % unit != 0) {
    v.fail("memory.reuse_bytes",
           is + " is not a multiple of " + std::to_string(unit) +
               (c.io.direct ? " (4096 and backend.direct_alignment)" : " (a page)"));
  }
  const auto refuse = [&](const std::string& why, const std::string& fix) {
    v.fail("memory.reuse_bytes", is + " " + why + ": " + fix + ", or set memory.reuse_bytes = 0");
  };
  if (c.verify)
    refuse("leaves no checkpoint data to verify (one buffer serves every request)",
           "set data.verify = false");
  if (c.memory_space != MemorySpaceKind::host)
    refuse("needs memory.space = \"host\"", "set memory.space = \"host\"");
  if (c.format != CheckpointFormat::raw)
    refuse("cannot hold the files' headers", "set strategy.format = \"raw\"");
  if (c.backend == "hdf5")
    refuse("cannot serve the hdf5 backend's datasets", "use posix, uring or mpiio");
  if (c.phase == PhaseSelection::load)
    refuse("applies to the checkpoint and restore phases", "set campaign.phase");
  if (c.restore.reshard) refuse("cannot apply a reshard's copies", "restore the writer's layout");
  if (c.training.enabled())
    refuse("cannot hold the training loop's state", "set training.iterations = 0");
}

double number(const CaseValues& v, std::string_view dotted) {
  return std::get<double>(v.value(dotted));
}

std::optional<MlperfSpec> mlperf_of(const CaseValues& v) {
  const auto* model = std::get_if<std::string>(&v.value("mlperf.model"));
  if (model == nullptr) return std::nullopt;
  return MlperfSpec{.model = *model,
                    .accelerator_type = v.text("mlperf.accelerator_type"),
                    .subset = v.boolean("mlperf.subset"),
                    .division = v.text("mlperf.division")};
}

void fill_tiers(Case& c, const CaseValues& v) {
  TierSpec& t = c.engine.tiers;
  t.processes_per_node = static_cast<int>(v.integer("tiers.processes_per_node"));
  t.local_dir = v.text("tiers.local_dir");
  t.local_bytes = static_cast<std::uint64_t>(v.integer("tiers.local_bytes"));
  t.replicas = static_cast<int>(v.integer("tiers.replicas"));
  t.clique_stride = static_cast<int>(v.integer("tiers.clique_stride"));
  t.drain_every = static_cast<int>(v.integer("tiers.drain_every"));
  t.chunk_bytes = static_cast<std::uint64_t>(v.integer("tiers.chunk_bytes"));
  t.lost_nodes = std::get<std::vector<std::int64_t>>(v.value("tiers.lost_nodes"));
  t.memory = v.boolean("tiers.memory");
  t.local_backend = v.text("tiers.local_backend");
  if (c.engine.kind != EngineKind::tiered && t.local_backend != kDefaultLocalTierBackend) {
    v.fail("tiers.local_backend",
           "chooses the backend of the tiered engine's node-local tier: set engine.name = "
           "\"tiered\" or leave tiers.local_backend out");
  }
  if (c.engine.kind != EngineKind::tiered && t.memory) {
    v.fail("tiers.memory",
           "keeps the tiered engine's checkpoints in host memory: set engine.name = \"tiered\" "
           "or tiers.memory = false");
  }
  if (c.engine.kind != EngineKind::tiered && !t.lost_nodes.empty()) {
    v.fail("tiers.lost_nodes",
           "recovers from the tiers of engine.name = \"tiered\": set engine.name = \"tiered\" "
           "or leave tiers.lost_nodes empty");
  }
  if (c.engine.kind == EngineKind::tiered && t.local_dir.empty()) {
    v.fail("tiers.local_dir",
           "engine.name = \"tiered\" keeps each checkpoint in a node-local tier first: set "
           "tiers.local_dir to its directory, e.g. \"/dev/shm/ckpt/node{node}\"");
  }
}

void fill_training(Case& c, const CaseValues& v) {
  c.training.iterations = static_cast<int>(v.integer("training.iterations"));
  c.training.iteration_seconds = number(v, "training.iteration_seconds");
  c.training.update_fraction = number(v, "training.update_fraction");
  c.training.checkpoint_every = static_cast<int>(v.integer("training.checkpoint_every"));
  c.training.compute = parse_compute(v.text("training.compute")).value_or(ComputeKind::sleep);
  c.engine.kind = parse_engine(v.text("engine.name")).value_or(EngineKind::sync);
  c.engine.host_pool_bytes = static_cast<std::uint64_t>(v.integer("engine.host_pool_bytes"));
  fill_tiers(c, v);
  if (c.training.enabled() && c.training.checkpoint_every > c.training.iterations) {
    v.fail("training.checkpoint_every",
           std::to_string(c.training.checkpoint_every) + " is more than training.iterations = " +
               std::to_string(c.training.iterations) + ": no checkpoint would be taken");
  }
  c.calibrate = v.boolean("measure.calibration");
  if (c.training.enabled() && c.calibrate) {
    v.fail("measure.calibration",
           "calibrates the plain checkpoint iterations, not a [training] loop: set it to false "
           "or training.iterations = 0");
  }
  // Where the gather happens (gathers_distributed_optimizer, with the gathered optimizer): the sync
  // loop gathers before each write; Megatron has no background save of this format.
  const bool gathered = c.directory_layout == DirectoryLayout::megatron &&
                        c.megatron_optimizer == MegatronOptimizer::gathered &&
                        c.parallel.zero_stage >= 1 && c.parallel.dp > 1;
  if (c.training.enabled() && c.engine.kind != EngineKind::sync && gathered) {
    v.fail(
        "engine.name",
        "\"" + std::string(engine_name(c.engine.kind)) +
            "\" with strategy.layout = \"megatron\" and strategy.megatron_optimizer = "
            "\"gathered\": "
            "Megatron-LM's asynchronous save (--async-save) works only with the torch_dist "
            "checkpoint "
            "format, not with the gathered distrib_optim.pt; use strategy.layout = "
            "\"megatron_dist\" "
            "(torch_dist), strategy.megatron_optimizer = \"per_dp\" (no gather) or engine.name = "
            "\"sync\"");
  }
  if (!c.training.enabled() && c.engine.kind != EngineKind::sync) {
    v.fail("engine.name", "\"" + std::string(engine_name(c.engine.kind)) +
                              "\" runs inside the training loop: set training.iterations (> 0)");
  }
}

}  // namespace

CaseValues::CaseValues(const Settings& settings, const std::vector<std::size_t>& choice,
                       const std::string& source, std::int64_t index, std::int64_t cases) {
  const std::span<const KeySpec> all = keys();
  for (const KeySpec& spec : all) {
    const auto table = settings.table_lines.find(std::string(spec.table));
    values_.push_back(&spec.fallback);
    origins_.push_back(Origin{&source, table == settings.table_lines.end() ? 0 : table->second});
  }
  std::string swept_text;
  for (std::size_t g = 0; g < settings.given.size(); ++g) {
    const Setting& s = settings.given[g];
    const std::size_t i = index_of(*s.spec);
    values_[i] = &s.values[choice[g]];
    origins_[i] = Origin{&s.source, s.lines[choice[g]]};
    if (!s.swept) continue;
    swept_[s.spec->dotted()] = to_json(*values_[i]);
    swept_text +=
        (swept_text.empty() ? "" : ", ") + s.spec->dotted() + " = " + to_json(*values_[i]).dump();
  }
  if (!swept_text.empty()) {
    context_ = " (case " + std::to_string(index) + " (" + std::to_string(index + 1) + " of " +
               std::to_string(cases) + "): " + swept_text + ")";
  }
}

const Value& CaseValues::value(std::string_view dotted) const {
  return *values_[index_of(dotted)];
}

void CaseValues::fail(std::string_view dotted, const std::string& problem) const {
  const Origin& origin = origins_[index_of(dotted)];
  throw ConfigError(*origin.source, origin.line, std::string(dotted), problem + context_);
}

nlohmann::json CaseValues::config() const {
  nlohmann::json config = nlohmann::json::object();
  const std::span<const KeySpec> all = keys();
  for (std::size_t i = 0; i < all.size(); ++i) {
    // "backend.mpiio" nests as config["backend"]["mpiio"].
    std::string pointer = "/" + std::string(all[i].table) + "/" + std::string(all[i].key);
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    nlohmann::json value = to_json(*values_[i]);
    if (!all[i].recorded_at_default && value == to_json(all[i].fallback)) continue;
    config[nlohmann::json::json_pointer(pointer)] = std::move(value);
  }
  // A case that declares no MLPerf workload keeps the config (and config_hash) it had before
  // [mlperf] existed, so that gate baselines of such cases still match.
  if (config["mlperf"]["model"].is_null()) config.erase("mlperf");
  // Likewise [tiers], which only the tiered engine reads.
  if (config["engine"]["name"] != "tiered") config.erase("tiers");
  drop_unused_reduce_keys(config);
  // strategy.max_shard_bytes sizes only safetensors files; a raw case records the default it had
  // before transformers 5's, so that its config_hash and gate baselines still match.
  if (config["strategy"]["format"] != "safetensors" &&
      config["strategy"]["max_shard_bytes"] == kMaxShardBytesDefault)
    config["strategy"]["max_shard_bytes"] = kMaxShardBytesBefore;
  return config;
}

Case CaseBuilder::build(const CaseValues& values, std::int64_t index, const std::string& source) {
  Case c;
  c.source = source;
  c.index = index;
  c.swept = values.swept();
  fill_campaign(c, values);
  c.model_argument = values.text("model.name");
  c.model = model(values);
  c.scale = values.integer("model.scale");
  c.parallel = parallel_of(values);
  c.state = state_of(values);
  validated_world_size(c, values);
  c.ranks = ranks_of(values, c.parallel);
  c.restore = restore_of(values, c);
  c.load = load_of(values, c);
  fill_io(c, values);
  fill_memory(c, values);
  fill_training(c, values);
  check_reuse(c, values);
  fill_reduce(c, values);
  check_replicas(c, values);
  check_cooperative_load(c, values);
  c.mlperf = mlperf_of(values);
  c.config = values.config();
  c.config["strategy"]["alignment"] = c.alignment;  // the alignment in effect (settle_alignment)
  c.config["strategy"]["framing"] = framing_name(c.framing);  // in effect (settle_framing)
  return c;
}

const workloads::ModelSpec& CaseBuilder::model(const CaseValues& values) {
  const std::string& argument = values.text("model.name");
  if (const auto it = models_.find(argument); it != models_.end()) return it->second;
  try {
    return models_.emplace(argument, load_model_argument(argument)).first->second;
  } catch (const ConfigError& e) {
    values.fail("model.name", model_problem(e));
  } catch (const workloads::SpecError& e) {
    values.fail("model.name", e.what());
  }
}

std::int64_t CaseBuilder::validated_world_size(const Case& c, const CaseValues& values) {
  const nlohmann::json config = values.config();
  const std::string key = nlohmann::json::array({c.model_argument, config["model"],
                                                 config["parallel"], config["state"]})
                              .dump();
  if (const auto it = world_sizes_.find(key); it != world_sizes_.end()) return it->second;
  try {
    const workloads::Layout layout(c.model, c.parallel, c.state);
    return world_sizes_.emplace(key, layout.world_size()).first->second;
  } catch (const workloads::SpecError& e) {
    values.fail(campaign_key_of(e.key()), e.what());
  }
}

}  // namespace ckpt::harness::schema
