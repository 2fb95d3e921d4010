"""The zoo's LLM shapes as plain dicts of transformers.LlamaConfig arguments, with no imports,
so that scripts outside the main environment (bench/llm.py's llama.cpp venv, which has no
torch) can read them by path."""

# Llama-3-style, about 110M parameters (llama2.c's stories110M size: d 768, 12 layers, 12 heads)
# with Llama 3's GQA (4 KV heads), RoPE theta and tied embeddings over a 32k vocabulary.
LLAMA_110M = dict(vocab_size=32000, hidden_size=768, intermediate_size=2304, num_hidden_layers=12,
                  num_attention_heads=12, num_key_value_heads=4, max_position_embeddings=2048,
                  rope_theta=500000.0, rms_norm_eps=1e-5, tie_word_embeddings=True)

# meta-llama/Llama-3.2-1B's config.json (the architecture; weights are random here).
LLAMA_1B = dict(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                num_attention_heads=32, num_key_value_heads=8, head_dim=64, max_position_embeddings=131072,
                rope_theta=500000.0, rms_norm_eps=1e-5, tie_word_embeddings=True,
                rope_scaling={"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                              "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
                bos_token_id=128000, eos_token_id=128001)
