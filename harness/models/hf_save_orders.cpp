#include "harness/models/hf_save_orders.hpp"

#include <algorithm>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ckpt::harness::hf {
namespace {

using workloads::HfSaveOrder;
using Rename = std::pair<std::string_view, std::string_view>;

// Child names in the order transformers' classes register them: one list for the families saved
// in module order whose orders agree (Llama's and most others'), and a list of its own for each
// model_type whose order disagrees with it (BERT's attention output dense before its LayerNorm,
// RoBERTa's after). Derived from the order save_pretrained met every fixture's tensors in
// (tests/data/hf/make_fixtures.py modules prints them); HfSaveSplit checks them.
constexpr std::string_view kModules =
    "model embed_tokens weight gate_proj up_proj alpha_p alpha_n beta eps bias bert "
    "word_embeddings attention query key value predictions transform transformer wte ln_1 fc_in "
    "fc_out w multi_head_attention Wq Wk Wv blocks norm_attn_norm ffn layernorm1 layernorm2 "
    "norm_1 attn Wqkv norm_2 w1 v1 w2 lambda_q1 lambda_k1 lambda_q2 lambda_k2 ernie "
    "feed_forward mamba self_attn dt_bias A_log D conv1d in_proj backbone lm_head x_proj "
    "dt_proj gate_up_proj wpe h ln_f layernorm c_attn ln_2 c_fc c_proj sinks q_proj k_proj "
    "v_proj gate_up_proj_bias down_proj act_fn ffn_sub_norm down_proj_bias input_linear "
    "output_linear router experts kv_proj q_a_proj q_a_layernorm q_b_proj kv_a_proj_with_mqa "
    "kv_a_layernorm kv_b_proj o_proj q_norm k_norm attn_sub_norm query_layernorm key_layernorm "
    "fc1 fc2 query_key_value dense q_layernorm k_layernorm dense_h_to_4h dense_4h_to_h "
    "linear_attn mlp input_layernorm post_attention_layernorm attention_layernorm "
    "feedforward_layernorm pre_ff_layernorm pre_feedforward_layernorm "
    "post_feedforward_layernorm post_self_attn_layernorm post_mlp_layernorm block_sparse_moe "
    "shared_mlp post_norm1 post_norm2 self_attention roc_bert pronunciation_embed shape_embed "
    "position_embeddings token_type_embeddings map_inputs_layer LayerNorm decoder roformer cls "
    "embed_positions layer ln self intermediate output lang_embeddings embeddings layers norm "
    "encoder pooler out_proj qkv_proj norm_f final_layernorm mixer in_proj_qkv in_proj_z "
    "in_proj_b in_proj_a layer_norm_emb attentions q_lin k_lin v_lin out_lin layer_norm1 ffns "
    "lin1 lin2 layer_norm2 pred_layer proj";
struct ModulesRow {
  std::string_view model_type;
  std::string_view modules;
};
constexpr ModulesRow kOwnModules[] = {
    {"bamba",
     "model embed_tokens weight layers feed_forward gate_proj up_proj down_proj input_layernorm "
     "pre_ff_layernorm mamba dt_bias A_log D conv1d bias in_proj norm out_proj self_attn q_proj "
     "k_proj v_proj o_proj final_layernorm lm_head"},
    {"biogpt",
     "biogpt embed_tokens weight embed_positions layers self_attn k_proj bias v_proj q_proj "
     "out_proj self_attn_layer_norm fc1 fc2 final_layer_norm layer_norm"},
    {"bloom",
     "transformer word_embeddings weight word_embeddings_layernorm bias h input_layernorm "
     "self_attention query_key_value dense post_attention_layernorm mlp dense_h_to_4h "
     "dense_4h_to_h ln_f"},
    {"camembert",
     "lm_head weight bias dense layer_norm decoder roberta embeddings word_embeddings "
     "token_type_embeddings LayerNorm position_embeddings encoder layer attention self query key "
     "value intermediate output"},
    {"data2vec-text",
     "data2vec_text embeddings word_embeddings weight token_type_embeddings bias encoder layer "
     "attention self query key value dense LayerNorm position_embeddings intermediate output "
     "lm_head layer_norm"},
    {"doge",
     "model embed_tokens weight layers input_residual post_attention_residual input_layernorm "
     "self_attn A q_proj bias k_proj v_proj dt_proj o_proj q_norm k_norm post_attention_layernorm "
     "mlp gate_proj up_proj down_proj norm lm_head router_gate down_embed up_embed"},
    {"gemma3n_text",
     "model embed_tokens weight layers self_attn q_proj q_norm k_proj v_proj k_norm o_proj mlp "
     "gate_proj up_proj down_proj input_layernorm post_attention_layernorm "
     "pre_feedforward_layernorm post_feedforward_layernorm altup correct_output_scale "
     "correction_coefs prediction_coefs modality_router router_norm laurel linear_left "
     "linear_right post_laurel_norm per_layer_input_gate per_layer_projection "
     "post_per_layer_input_norm norm embed_tokens_per_layer per_layer_model_projection "
     "per_layer_projection_norm altup_projections altup_unembed_projections bias lm_head"},
    {"gpt_neo",
     "transformer wte weight wpe h ln_1 bias attn attention k_proj v_proj q_proj out_proj ln_2 mlp "
     "c_fc c_proj ln_f"},
    {"gptj",
     "transformer wte weight h ln_1 bias attn k_proj v_proj q_proj out_proj mlp fc_in fc_out ln_f "
     "lm_head"},
    {"lfm2",
     "model embed_tokens weight layers conv bias in_proj w1 w3 w2 self_attn feed_forward "
     "operator_norm ffn_norm q_proj k_proj v_proj out_proj q_layernorm k_layernorm embedding_norm "
     "lm_head"},
    {"llama4_text",
     "model embed_tokens weight layers self_attn q_proj k_proj v_proj o_proj feed_forward "
     "gate_proj up_proj input_layernorm post_attention_layernorm experts gate_up_proj down_proj "
     "router shared_expert norm lm_head"},
    {"openai-gpt",
     "transformer tokens_embed weight positions_embed h attn c_attn bias ln_1 mlp c_fc c_proj "
     "ln_2"},
    {"opt",
     "model decoder embed_tokens weight embed_positions bias self_attn k_proj v_proj q_proj "
     "out_proj self_attn_layer_norm fc1 fc2 final_layer_norm layers"},
    {"roberta",
     "roberta embeddings word_embeddings weight token_type_embeddings bias encoder layer attention "
     "self query key value dense LayerNorm position_embeddings intermediate output lm_head "
     "layer_norm decoder"},
    {"roberta-prelayernorm",
     "roberta_prelayernorm embeddings word_embeddings weight token_type_embeddings bias encoder "
     "layer attention self query key value intermediate output LayerNorm position_embeddings dense "
     "lm_head layer_norm"},
    {"trocr",
     "model decoder embed_tokens weight embed_positions layernorm_embedding bias layers self_attn "
     "k_proj v_proj q_proj out_proj self_attn_layer_norm encoder_attn encoder_attn_layer_norm fc1 "
     "fc2 final_layer_norm"},
    {"xglm",
     "model embed_tokens weight layers self_attn k_proj bias v_proj q_proj out_proj "
     "self_attn_layer_norm fc1 fc2 final_layer_norm layer_norm"},
    {"xlm-roberta",
     "lm_head weight bias dense layer_norm roberta embeddings word_embeddings "
     "token_type_embeddings LayerNorm position_embeddings encoder layer attention self query key "
     "value intermediate output"},
    {"xlm-roberta-xl",
     "roberta embeddings word_embeddings weight token_type_embeddings position_embeddings encoder "
     "layer attention self query bias key value dense intermediate output self_attn_layer_norm "
     "LayerNorm lm_head layer_norm"},
    {"xmod",
     "roberta embeddings word_embeddings weight token_type_embeddings bias encoder layer attention "
     "self query key value dense LayerNorm position_embeddings intermediate output en_XX dense1 "
     "dense2 de_DE fi_FI lm_head layer_norm adapter_layer_norm adapter_modules decoder"},
    {"zamba",
     "model embed_tokens weight layers mamba x_proj_weight dt_proj_weight dt_proj_bias A_log D "
     "conv1d bias in_proj out_proj shared_transf self_attn q_proj k_proj v_proj o_proj "
     "feed_forward input_layernorm gate_proj up_proj down_proj pre_ff_layernorm linear "
     "mamba_decoder final_layernorm lm_head"},
    {"zamba2",
     "model embed_tokens weight layers mamba dt_bias A_log D conv1d bias in_proj norm out_proj "
     "linear mamba_decoder shared_transformer self_attn q_proj k_proj v_proj o_proj "
     "linear_q_adapter_list linear_k_adapter_list linear_v_adapter_list feed_forward "
     "input_layernorm gate_up_proj down_proj gate_up_proj_adapter_list pre_ff_layernorm "
     "final_layernorm lm_head"},
};

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = std::min(text.find(' ', begin), text.size());
    if (end > begin) out.emplace_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

struct PartRow {
  std::string_view saved, fused;
  int part;
};
// How each family's checkpoint cuts a layer's fused experts (Qwen2-MoE's names, Mixtral's).
constexpr PartRow kGateUpDown[] = {{"gate_proj", "gate_up_proj", 0},
                                   {"up_proj", "gate_up_proj", 1},
                                   {"down_proj", "down_proj", 0}};
constexpr PartRow kW1W3W2[] = {
    {"w1", "gate_up_proj", 0}, {"w3", "gate_up_proj", 1}, {"w2", "down_proj", 0}};

constexpr PartRow kUpDown[] = {{"up_proj", "up_proj", 0}, {"down_proj", "down_proj", 0}};

// Each a saved name's run of parts and the one the model holds in memory, as the family's
// conversions rename them when loading (transformers' conversion_mapping).
constexpr Rename kMixtral[] = {{"block_sparse_moe", "mlp"}};
constexpr Rename kPhimoe[] = {{"block_sparse_moe", "mlp"}, {"gate.weight", "router.weight"}};
constexpr Rename kAria[] = {{"mlp.experts.fc1.weight", "mlp.experts.gate_up_proj"},
                            {"mlp.experts.fc2.weight", "mlp.experts.down_proj"}};
constexpr Rename kGptNeox[] = {{"embed_out", "lm_head"}};
constexpr Rename kGraniteMoe[] = {
    {"block_sparse_moe.input_linear.weight", "block_sparse_moe.experts.gate_up_proj"},
    {"block_sparse_moe.output_linear.weight", "block_sparse_moe.experts.down_proj"},
    {"block_sparse_moe.router.layer.weight", "block_sparse_moe.router.weight"}};
constexpr Rename kExaone[] = {{"transformer.wte", "model.embed_tokens"},
                              {"transformer.h", "model.layers"},
                              {"transformer.ln_f", "model.norm"},
                              {"attn.attention", "self_attn"},
                              {"self_attn.out_proj", "self_attn.o_proj"},
                              {"ln_1", "input_layernorm"},
                              {"ln_2", "post_attention_layernorm"},
                              {"mlp.c_fc_0", "mlp.gate_proj"},
                              {"mlp.c_fc_1", "mlp.up_proj"},
                              {"mlp.c_proj", "mlp.down_proj"}};
constexpr Rename kExaoneMoe[] = {
    {"mlp.e_score_correction_bias", "mlp.gate.e_score_correction_bias"}};
constexpr Rename kErnieMoe[] = {
    {"mlp.moe_statics.e_score_correction_bias", "mlp.gate.moe_statics.e_score_correction_bias"}};
constexpr Rename kFlint[] = {{"self_attn.softmax_offset", "self_attn.sinks"}};
constexpr Rename kAxk1[] = {{"post_mlp_layernorm", "mlp.post_mlp_layernorm"}};
constexpr Rename kHyV3[] = {{"mlp.router.gate.weight", "mlp.gate.weight"},
                            {"mlp.expert_bias", "mlp.e_score_correction_bias"},
                            {"mlp.shared_mlp", "mlp.shared_experts"}};
constexpr Rename kKolibri[] = {{"moe.router.expert_bias", "mlp.gate.e_score_correction_bias"},
                               {"post_attn_norm", "post_self_attn_layernorm"},
                               {"post_ffn_norm", "post_mlp_layernorm"}};
constexpr Rename kNemotronH[] = {{"backbone", "model"}};
// The fused query_key_value is saved where the first of q/k/v_proj sorts (k_proj).
constexpr Rename kSarvamMoe[] = {{"word_embeddings", "embed_tokens"},
                                 {"attention.query_key_value", "self_attn.k_proj"},
                                 {"attention", "self_attn"},
                                 {"self_attn.dense", "self_attn.o_proj"},
                                 {"self_attn.query_layernorm", "self_attn.q_norm"},
                                 {"self_attn.key_layernorm", "self_attn.k_norm"},
                                 {"mlp.gate.expert_bias", "mlp.gate.e_score_correction_bias"}};

// The families whose weight conversions re-sort the state dict on save (every one ckptbench
// lays out), with the in-memory names their saved names come from.
struct ResortedRow {
  std::string_view model_type;
  std::span<const Rename> renames;
  std::span<const PartRow> parts;
};
constexpr ResortedRow kResorted[] = {
    {"afmoe", {}, kGateUpDown},
    {"aria_text", kAria, {}},
    {"axk1", kAxk1, kGateUpDown},
    {"cohere2_moe", {}, kGateUpDown},
    {"deepseek_v2", {}, kGateUpDown},
    {"deepseek_v3", {}, kGateUpDown},
    {"deepseek_v32", {}, kGateUpDown},
    {"dots1", {}, kGateUpDown},
    {"ernie4_5_moe", kErnieMoe, kGateUpDown},
    {"exaone", kExaone, {}},
    {"exaone_moe", kExaoneMoe, kGateUpDown},
    {"flex_olmo", {}, kGateUpDown},
    {"flint", kFlint, kGateUpDown},
    {"glm4_moe", {}, kGateUpDown},
    {"glm4_moe_lite", {}, kGateUpDown},
    {"glm_moe_dsa", {}, kGateUpDown},
    {"gpt_neox", kGptNeox, {}},
    {"granitemoe", kGraniteMoe, {}},
    {"granitemoehybrid", kGraniteMoe, {}},
    {"granitemoeshared", kGraniteMoe, {}},
    {"hunyuan_v1_moe", {}, kGateUpDown},
    {"hy_v3", kHyV3, kGateUpDown},
    {"jamba", {}, kGateUpDown},
    {"kolibri1", kKolibri, kGateUpDown},
    {"lfm2_moe", {}, kW1W3W2},
    {"mellum", {}, kGateUpDown},
    {"minimax", kMixtral, kW1W3W2},
    {"minimax_m2", kMixtral, kW1W3W2},
    {"mixtral", kMixtral, kW1W3W2},
    {"nemotron_h", kNemotronH, kUpDown},
    {"olmoe", {}, kGateUpDown},
    {"phimoe", kPhimoe, kW1W3W2},
    {"qwen2_moe", {}, kGateUpDown},
    {"qwen3_5_moe_text", {}, kGateUpDown},
    {"qwen3_moe", {}, kGateUpDown},
    {"qwen3_next", {}, kGateUpDown},
    {"sarvam_mla", {}, kGateUpDown},
    {"sarvam_moe", kSarvamMoe, kGateUpDown},
    {"solar_open", {}, kGateUpDown},
};

}  // namespace

workloads::HfSaveOrder save_order(std::string_view model_type) {
  HfSaveOrder order;
  const auto row = std::find_if(std::begin(kResorted), std::end(kResorted),
                                [&](const ResortedRow& r) { return r.model_type == model_type; });
  if (row == std::end(kResorted)) {
    // A family's own list first; the common list ranks the names it does not have.
    const auto own = std::find_if(std::begin(kOwnModules), std::end(kOwnModules),
                                  [&](const ModulesRow& r) { return r.model_type == model_type; });
    if (own != std::end(kOwnModules)) order.modules = words(own->modules);
    for (std::string& name : words(kModules)) {
      if (std::find(order.modules.begin(), order.modules.end(), name) == order.modules.end())
        order.modules.push_back(std::move(name));
    }
    return order;
  }
  order.resorted = true;
  for (const auto& [saved, memory] : row->renames) order.renames.emplace_back(saved, memory);
  for (const PartRow& p : row->parts)
    order.expert_parts.push_back({std::string(p.saved), std::string(p.fused), p.part});
  return order;
}

workloads::HfSaveOrder save_order_of_names(const workloads::ModelSpec& spec) {
  using workloads::HfNames;
  switch (spec.hf_names) {
    case HfNames::llama:
      return save_order(spec.is_moe() ? "mixtral" : "llama");
    case HfNames::deepseek:
      return save_order("deepseek_v3");
    case HfNames::hunyuan_moe:
      return save_order("hunyuan_v1_moe");
    default:
      break;
  }
  return save_order(workloads::hf_names_name(spec.hf_names));
}

}  // namespace ckpt::harness::hf
