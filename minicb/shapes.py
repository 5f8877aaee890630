"""The model shapes minicb writes as checkpoints (make_tiny_checkpoint) and
the cost model predicts for: plain numbers, read without loading torch."""

# Real model shapes; with random weights they measure speed, not quality.
SHAPES = {
    "llama-3.2-1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                         num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                         vocab_size=128256, rope_theta=500000.0, tie_word_embeddings=True,
                         max_position_embeddings=131072,
                         rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0,
                                           high_freq_factor=4.0, original_max_position_embeddings=8192)),
    "llama-3.1-8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                         num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                         vocab_size=128256, rope_theta=500000.0, tie_word_embeddings=False,
                         max_position_embeddings=131072,
                         rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                           high_freq_factor=4.0, original_max_position_embeddings=8192)),
}

# Tiny shapes, one per architecture, each exercising that architecture's quirks
# (Llama 3 rope scaling, Mistral with 4 query heads per KV head, Qwen2 q/k/v
# bias and tied embeddings, Qwen3 q/k norm with head_dim * heads != hidden_size).
# GQA everywhere.
TINY = {
    "llama": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=16, rope_theta=10000.0, tie_word_embeddings=False,
                  rope_scaling=dict(rope_type="llama3", factor=4.0, low_freq_factor=1.0,
                                    high_freq_factor=4.0, original_max_position_embeddings=64)),
    "mistral": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                    num_key_value_heads=1, head_dim=16, rope_theta=1000000.0, tie_word_embeddings=False,
                    sliding_window=None),
    "qwen2": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=1, head_dim=16, rope_theta=1000000.0, tie_word_embeddings=True),
    "qwen3": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=32, rope_theta=1000000.0, tie_word_embeddings=True),
}
