// What a model asks of a board that holds all of it: the bytes it keeps, the bytes one decode
// forward reads (which, over the board's read rate, bound its tokens per second) and its KV cache.
#pragma once
#include <cstdint>
#include <string>

namespace r1pi {

struct ModelNeeds {
  std::string summary;          // "llama, 4 layers, dim 256, Q4_0, 1.2 MB"
  uint64_t weight_bytes = 0;    // every tensor: what a rank of one holds
  uint64_t read_per_token = 0;  // every tensor once; token_embd one row (unless it is the output);
                                // of the experts the share a token uses
  uint64_t kv_bytes = 0;        // the f32 KV cache (--kv-type's default) at n_ctx positions
  int n_ctx = 0;                // -c, or r1pi's default for the model
  std::string fingerprint;      // model_fingerprint (sampled), hex: the same file on every board?
};

// ctx_size: -c (0: r1pi's default). Throws r1pi::Error naming the file and the problem.
ModelNeeds model_needs(const std::string& path, int ctx_size);

}  // namespace r1pi
