// Llama (llama.cpp's "llama"): the decoder's keys and tensors (llama.cpp's names) with nothing
// optional in its attention. How r1pi splits them across ranks: attention by KV-head groups (rows
// of wq/wk/wv, columns of wo), the FFN by hidden units (rows of w1/w3, columns of w2), the output
// by vocabulary rows; the embedding and the norms are whole on every rank. RoPE rotates adjacent
// pairs (llama.cpp's converter permutes q and k for it).
#include "model/arch/architectures.h"

namespace r1pi {

const Architecture& llama_architecture() {
  static const Architecture arch{
      .name = "llama",
      .params = transformer_params(),
      .tensors = decoder_tensors({}),
      .rope = RopeLayout::AdjacentPairs,
  };
  return arch;
}

}  // namespace r1pi
