"""The configs of tests/data/hf/fixtures: name -> (model_type, keys over transformers' defaults).

Small ones (2-3 layers, a vocabulary that is no multiple of 128) keep every tensor in the
fixture; the published ones (values of their config.json) keep the count and a digest.
"""

SMALL = dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, vocab_size=1000, max_position_embeddings=2048)
SMALL_MOE = dict(SMALL, num_hidden_layers=3)


def small(**keys):
    return dict(SMALL, **keys)


FIXTURES = {
    "small-llama": ("llama", small()),
    "small-llama-attention-bias": ("llama", small(attention_bias=True)),
    "small-llama-mlp-bias": ("llama", small(attention_bias=True, mlp_bias=True)),
    "small-mistral": ("mistral", small(head_dim=96)),
    "small-qwen2": ("qwen2", small(tie_word_embeddings=True)),
    "small-qwen3": ("qwen3", small(head_dim=64)),
    "small-qwen3-attention-bias": ("qwen3", small(head_dim=64, attention_bias=True)),
    "small-gemma-attention-bias": ("gemma", small(attention_bias=True, mlp_bias=True)),
    "small-gemma2": ("gemma2", small(head_dim=64)),
    "small-gemma3-text": ("gemma3_text", small(head_dim=64)),
    "small-granite": ("granite", small(mlp_bias=True)),
    "small-olmo2": ("olmo2", small()),
    "small-olmo3": ("olmo3", small(attention_bias=True)),
    "small-cohere": ("cohere", small(use_qk_norm=True)),
    "small-cohere2": ("cohere2", small()),
    "small-glm4": ("glm4", small(attention_bias=True, pad_token_id=0)),
    "small-phi3": ("phi3", small(pad_token_id=0)),
    "small-mixtral": ("mixtral", small(num_local_experts=4)),
    "small-phimoe": ("phimoe", small(num_local_experts=4, lm_head_bias=True)),
    "small-qwen2-moe": ("qwen2_moe", dict(SMALL_MOE, num_experts=4, moe_intermediate_size=128,
                                          shared_expert_intermediate_size=384, mlp_only_layers=[0])),
    "small-qwen2-moe-no-qkv-bias": ("qwen2_moe", dict(SMALL_MOE, num_experts=4, moe_intermediate_size=128,
                                                      shared_expert_intermediate_size=384, qkv_bias=False)),
    "small-qwen3-moe": ("qwen3_moe", dict(SMALL_MOE, num_experts=4, num_experts_per_tok=2,
                                          moe_intermediate_size=128, head_dim=64)),
    "small-olmoe": ("olmoe", dict(SMALL_MOE, num_experts=4, num_experts_per_tok=2)),
    "small-deepseek-v3": ("deepseek_v3", dict(SMALL_MOE, n_routed_experts=4, num_experts_per_tok=2,
                                              moe_intermediate_size=128, first_k_dense_replace=1,
                                              q_lora_rank=96, kv_lora_rank=64, qk_nope_head_dim=32,
                                              qk_rope_head_dim=16, v_head_dim=32, n_group=2, topk_group=1)),
    "small-deepseek-v3-biases": ("deepseek_v3", dict(SMALL_MOE, n_routed_experts=4, num_experts_per_tok=2,
                                                     moe_intermediate_size=128, first_k_dense_replace=1,
                                                     q_lora_rank=None, kv_lora_rank=64, qk_nope_head_dim=32,
                                                     qk_rope_head_dim=16, v_head_dim=32, n_group=2, topk_group=1,
                                                     attention_bias=True, topk_method="greedy")),
    "small-deepseek-v2": ("deepseek_v2", dict(SMALL_MOE, n_routed_experts=4, num_experts_per_tok=2,
                                              n_shared_experts=1, moe_intermediate_size=128,
                                              first_k_dense_replace=1, q_lora_rank=96, kv_lora_rank=64,
                                              qk_nope_head_dim=32, qk_rope_head_dim=16, v_head_dim=32,
                                              attention_bias=True, mlp_bias=True, topk_method="noaux_tc")),
    "small-glm4-moe": ("glm4_moe", dict(SMALL_MOE, n_routed_experts=4, num_experts_per_tok=2,
                                        moe_intermediate_size=128, head_dim=64, use_qk_norm=True,
                                        attention_bias=True, n_group=1, topk_group=1)),
    "small-glm": ("glm", small(pad_token_id=0)),
    "small-seed-oss": ("seed_oss", small(attention_out_bias=True, pad_token_id=0)),
    "small-jais2": ("jais2", small(mlp_bias=False, pad_token_id=0)),
    "small-mellum": ("mellum", dict(SMALL_MOE, num_local_experts=4, num_experts_per_tok=2, moe_intermediate_size=128,
                                    head_dim=64)),
    "small-vaultgemma": ("vaultgemma", small(head_dim=64, attention_bias=True)),
    "small-nemotron": ("nemotron", small(head_dim=64, partial_rotary_factor=0.5)),
    "small-ministral": ("ministral", small(head_dim=64, rope_parameters={"rope_type": "default", "rope_theta": 1e6})),
    "small-gpt-neox-no-attention-bias": ("gpt_neox", small(num_key_value_heads=None, attention_bias=False)),
    # Published configs.
    "qwen3-8b": ("qwen3", dict(hidden_size=4096, intermediate_size=12288, num_hidden_layers=36,
                               num_attention_heads=32, num_key_value_heads=8, head_dim=128, vocab_size=151936,
                               max_position_embeddings=40960, tie_word_embeddings=False)),
    "qwen3-30b-a3b": ("qwen3_moe", dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=48,
                                        num_attention_heads=32, num_key_value_heads=4, head_dim=128,
                                        vocab_size=151936, num_experts=128, num_experts_per_tok=8,
                                        moe_intermediate_size=768, max_position_embeddings=40960)),
    "gemma-3-1b": ("gemma3_text", dict(hidden_size=1152, intermediate_size=6912, num_hidden_layers=26,
                                       num_attention_heads=4, num_key_value_heads=1, head_dim=256,
                                       vocab_size=262144, max_position_embeddings=32768)),
    "deepseek-v3": ("deepseek_v3", dict(hidden_size=7168, intermediate_size=18432, moe_intermediate_size=2048,
                                        num_hidden_layers=61, num_attention_heads=128, num_key_value_heads=128,
                                        n_routed_experts=256, n_shared_experts=1, first_k_dense_replace=3,
                                        q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                                        qk_rope_head_dim=64, v_head_dim=128, vocab_size=129280)),
    "olmoe-1b-7b": ("olmoe", dict(hidden_size=2048, intermediate_size=1024, num_hidden_layers=16,
                                  num_attention_heads=16, num_key_value_heads=16, num_experts=64,
                                  num_experts_per_tok=8, vocab_size=50304, max_position_embeddings=4096)),
    "glm-4.5-air": ("glm4_moe", dict(hidden_size=4096, intermediate_size=10944, moe_intermediate_size=1408,
                                     num_hidden_layers=46, num_attention_heads=96, num_key_value_heads=8,
                                     head_dim=128, n_routed_experts=128, n_shared_experts=1,
                                     first_k_dense_replace=1, vocab_size=151552, attention_bias=True,
                                     use_qk_norm=False, partial_rotary_factor=0.5)),
    "phi-3-mini-4k": ("phi3", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=32,
                                   num_attention_heads=32, num_key_value_heads=32, vocab_size=32064,
                                   max_position_embeddings=4096, pad_token_id=32000)),
    "granite-3.0-8b": ("granite", dict(hidden_size=4096, intermediate_size=12800, num_hidden_layers=40,
                                       num_attention_heads=32, num_key_value_heads=8, vocab_size=49155,
                                       tie_word_embeddings=True, max_position_embeddings=4096)),
}

# Fixtures that keep every tensor; the others keep the count and digest only.
FULL_LIST = {name for name in FIXTURES if name.startswith("small-")}
