// Llama (llama.cpp's "llama"): its keys, its tensors (llama.cpp's names) and how r1pi splits them
// across ranks: attention by KV-head groups (rows of wq/wk/wv, columns of wo), the FFN by hidden
// units (rows of w1/w3, columns of w2), the output by vocabulary rows; the embedding and the norms
// are whole on every rank. RoPE rotates adjacent pairs.
#include "model/arch/architectures.h"

#include "model/model_config.h"

namespace r1pi {

const Architecture& llama_architecture() {
  using D = Dim;
  using U = Unit;
  using LW = ModelWeights;
  using L = LayerWeights;
  static const Architecture arch{
      .name = "llama",
      .params = transformer_params(),
      .tensors = {
          // name                ne0          ne1         split                 fills
          {"rope_freqs.weight",  D::RopePairs, D::One,    kReplicated,          std::monostate{},
           Presence::Optional},
          {"token_embd.weight",  D::Embd,     D::Vocab,    kReplicated,          &LW::token_embd},
          {"attn_norm.weight",   D::Embd,     D::One,      kReplicated,          &L::attn_norm},
          {"attn_q.weight",      D::Embd,     D::QueryDim, rows_by(U::QueryHeads), &L::wq},
          {"attn_k.weight",      D::Embd,     D::KvDim,    rows_by(U::KvHeads),  &L::wk},
          {"attn_v.weight",      D::Embd,     D::KvDim,    rows_by(U::KvHeads),  &L::wv},
          {"attn_output.weight", D::QueryDim, D::Embd,     cols_by(U::QueryHeads), &L::wo},
          {"ffn_norm.weight",    D::Embd,     D::One,      kReplicated,          &L::ffn_norm},
          {"ffn_gate.weight",    D::Embd,     D::Ffn,      rows_by(U::FfnUnits), &L::w1},
          {"ffn_up.weight",      D::Embd,     D::Ffn,      rows_by(U::FfnUnits), &L::w3},
          {"ffn_down.weight",    D::Ffn,      D::Embd,     cols_by(U::FfnUnits), &L::w2},
          {"output_norm.weight", D::Embd,     D::One,      kReplicated,          &LW::output_norm},
          {"output.weight",      D::Embd,     D::Vocab,    rows_by(U::VocabRows), &LW::output,
           Presence::ElseTokenEmbd},
      },
      .rope = RopeLayout::AdjacentPairs,
  };
  return arch;
}

}  // namespace r1pi
