#include "harness/cli/layout_command.hpp"

#include <map>

#include "harness/cli/choice_validator.hpp"
#include "harness/cli/layout_files.hpp"
#include "harness/cli/layout_report.hpp"
#include "harness/common/config_error.hpp"
#include "harness/models/model_zoo.hpp"
#include "workloads/layout.hpp"
#include "workloads/layout_summary.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::harness {
namespace {

const std::map<std::string, std::string>& option_of_key() {
  static const std::map<std::string, std::string> kOptions{
      {"tp", "--tp"},
      {"pp", "--pp"},
      {"dp", "--dp"},
      {"ep", "--ep"},
      {"zero", "--zero"},
      {"zero_sharding", "--zero-sharding"},
      {"vocab_divisor", "--vocab-divisor"},
      {"pp_first_stage_layers", "--pp-first-stage-layers"},
      {"pp_last_stage_layers", "--pp-last-stage-layers"},
      {"rank", "--rank"},
      {"sizing", "--sizing"},
      {"weights", "--weights"}};
  return kOptions;
}

workloads::StateSpec state_spec(const LayoutOptions& o) {
  workloads::StateSpec s;
  s.scope = o.state == "weights" ? workloads::StateScope::weights : workloads::StateScope::full;
  s.weight_dtype = workloads::parse_dtype(o.weight_dtype);
  s.master_dtype = o.master_dtype == "none" ? std::nullopt
                                            : std::optional(workloads::parse_dtype(o.master_dtype));
  s.optimizer_dtype = workloads::parse_dtype(o.optimizer_dtype);
  if (!o.names.empty())
    s.naming = o.names == "hf" ? workloads::Naming::hf : workloads::Naming::megatron;
  s.sizing = o.sizing == "dlio" ? workloads::Sizing::dlio : workloads::Sizing::exact;
  for (const workloads::WeightFormat format : workloads::kWeightFormats) {
    if (workloads::weight_format_name(format) == o.weights) s.weights = format;
  }
  return s;
}

// Builds the layout, turning a SpecError into a ConfigError that names the command-line
// option to change (or the model, when the model itself is at fault).
workloads::Layout make_layout(const LayoutOptions& o) {
  const workloads::ModelSpec model = load_model_argument(o.model);
  workloads::ParallelSpec parallel = o.parallel;
  parallel.zero_sharding = o.zero_sharding == "per_tensor" ? workloads::ZeroSharding::per_tensor
                                                           : workloads::ZeroSharding::flat;
  try {
    return workloads::Layout(model, parallel, state_spec(o));
  } catch (const workloads::SpecError& e) {
    const auto it = option_of_key().find(e.key());
    if (it != option_of_key().end()) throw ConfigError("command line", 0, it->second, e.what());
    throw ConfigError(o.model, 0, e.key(), e.what());
  }
}

}  // namespace

CLI::App* add_layout_command(CLI::App& app, LayoutOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("layout", "Show which tensor shards every rank of a training job writes");
  const auto dtypes = one_of({"fp8", "bf16", "fp16", "fp32", "fp64"});
  cmd->add_option("--model", o.model,
                  "Zoo name (see `ckptbench models`), model .toml, or HF config.json / directory")
      ->required();
  cmd->add_option("--tp", o.parallel.tp, "Tensor-parallel size")->capture_default_str();
  cmd->add_option("--pp", o.parallel.pp, "Pipeline-parallel stages")->capture_default_str();
  cmd->add_option("--dp", o.parallel.dp, "Data-parallel size")->capture_default_str();
  cmd->add_option("--ep", o.parallel.ep, "Expert-parallel size (divides --dp)")
      ->capture_default_str();
  cmd->add_option("--zero", o.parallel.zero_stage,
                  "ZeRO stage 0-3 (Megatron distributed optimizer ~ 1)")
      ->capture_default_str();
  cmd->add_option("--zero-sharding", o.zero_sharding,
                  "How ZeRO-3 cuts the state over DP (parallel.zero_sharding): flat ranges of one "
                  "buffer, or per_tensor dim-0 chunks (FSDP2)")
      ->check(one_of({"flat", "per_tensor"}))
      ->capture_default_str();
  cmd->add_option("--state", o.state, "What a checkpoint holds")
      ->check(one_of({"weights", "full"}))
      ->capture_default_str();
  cmd->add_option("--names", o.names, "Tensor names (default: hf for weights, megatron for full)")
      ->check(one_of({"megatron", "hf"}));
  cmd->add_option("--weight-dtype", o.weight_dtype, "Weights dtype")
      ->check(dtypes)
      ->capture_default_str();
  cmd->add_option("--master-dtype", o.master_dtype, "Master weights dtype, or none")
      ->check(one_of({"fp8", "bf16", "fp16", "fp32", "fp64", "none"}))
      ->capture_default_str();
  cmd->add_option("--optimizer-dtype", o.optimizer_dtype, "Adam exp_avg / exp_avg_sq dtype")
      ->check(dtypes)
      ->capture_default_str();
  cmd->add_option(
         "--vocab-divisor", o.parallel.vocab_divisor,
         "Pad the vocabulary to a multiple of this × tp (Megatron's make-vocab-size-divisible-by)")
      ->capture_default_str();
  cmd->add_option("--pp-first-stage-layers", o.parallel.pp_first_stage_layers,
                  "Layers on the first pipeline stage (uneven split; 0 = even)");
  cmd->add_option("--pp-last-stage-layers", o.parallel.pp_last_stage_layers,
                  "Layers on the last pipeline stage (uneven split; 0 = even)");
  cmd->add_option("--sizing", o.sizing,
                  "Byte counts: exact (what the framework saves) or dlio (DLIO's / MLPerf "
                  "Storage's formula)")
      ->check(one_of({"exact", "dlio"}))
      ->capture_default_str();
  cmd->add_option("--weights", o.weights,
                  "Weight storage (model.weights): unquantized, fp8_block (linear weights in "
                  "FP8 with a float32 scale per 128x128 block), or mxfp4 (gpt-oss's experts in "
                  "FP4 blocks of 32 with an E8M0 scale each); needs --state weights")
      ->check(one_of({"unquantized", "fp8_block", "mxfp4"}))
      ->capture_default_str();
  cmd->add_option("--rank", o.rank, "Show only this rank, with its shards");
  cmd->add_flag("--json", o.json, "Print one JSON object");
  cmd->add_flag("--files", o.files,
                "List the files each rank writes for one checkpoint, with their sizes (no I/O)");
  cmd->add_option("--layout", o.directory_layout,
                  "With --files: the directory layout (strategy.layout)")
      ->check(one_of({"dcp", "megatron", "deepspeed", "megatron_dist"}))
      ->capture_default_str();
  cmd->add_option("--megatron-optimizer", o.megatron_optimizer,
                  "With --files --layout megatron: distributed-optimizer files "
                  "(strategy.megatron_optimizer)")
      ->check(one_of({"gathered", "per_dp"}))
      ->capture_default_str();
  cmd->add_option("--writer-threads", o.writer_threads,
                  "With --files --layout megatron_dist: files per rank (strategy.writer_threads)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--framing", o.framing,
                  "With --files: torch.save's framing in the files (strategy.framing; off: the "
                  "tensors' bytes alone)")
      ->check(one_of({"on", "off"}))
      ->capture_default_str();
  return cmd;
}

void run_layout(const LayoutOptions& o, std::ostream& out) {
  const workloads::Layout layout = make_layout(o);
  if (o.rank && (*o.rank < 0 || *o.rank >= layout.world_size())) {
    throw ConfigError("command line", 0, "--rank",
                      "rank " + std::to_string(*o.rank) + " is outside the world of " +
                          std::to_string(layout.world_size()) + " ranks (0.." +
                          std::to_string(layout.world_size() - 1) + ")");
  }
  if (o.files) {
    FilesRequest request;
    for (const DirectoryLayout d : {DirectoryLayout::dcp, DirectoryLayout::megatron,
                                    DirectoryLayout::deepspeed, DirectoryLayout::megatron_dist}) {
      if (directory_layout_name(d) == o.directory_layout) request.directory_layout = d;
    }
    request.megatron_optimizer =
        o.megatron_optimizer == "per_dp" ? MegatronOptimizer::per_dp : MegatronOptimizer::gathered;
    request.writer_threads = o.writer_threads;
    request.framing = o.framing == framing_name(true);
    request.rank = o.rank;
    const DirectoryLayout directory = request.directory_layout;
    const std::vector<ListedFile> files = list_checkpoint_files(layout, request);
    if (o.json) {
      out << files_json(directory, files).dump() << '\n';
    } else {
      print_files_text(out, directory, files);
    }
    return;
  }
  const workloads::WorldSummary summary = workloads::summarize(layout);
  if (o.json) {
    out << layout_json(layout, summary, o.rank).dump() << '\n';
  } else {
    print_layout_text(out, layout, summary, o.rank);
  }
}

}  // namespace ckpt::harness
