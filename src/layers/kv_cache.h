// Keys and values of every position seen so far, for this rank's KV heads only, in one slot per
// sequence, as F32 (the exact path, the default), F16 or Q8_0 (--kv-type: a half or 34/128 of the
// bytes that attention reads per position, rounded as ggml rounds them). The cache also knows
// which tokens each slot holds, so a prompt that begins with them need not be fed again.
//
// A sliding-window layer (gpt-oss's every other one) keeps only what its queries can still see: a
// ring of window + max_run - 1 positions, position p at p mod that, where max_run is the most
// tokens of one sequence a forward stores before it attends (ModelForward splits longer runs).
// Forgetting the last positions of a slot (truncate) then works only back to max_run positions
// from its end: resumable() says whether a slot can continue at a position.
//
// Each head's positions lie one after the other ([layer][slot][head][position][head_dim]):
// attention reads a head's keys (then values) for positions 0 .. pos as one sequential run, which
// the hardware prefetchers follow, instead of head_dim floats every kv_dim floats. The memory is a
// HugeBuffer (transparent huge pages asked for, as for the weights): attention streams the whole
// cache once per token, and with 4 KiB pages every 4 KiB of it costs a TLB miss.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/huge_buffer.h"
#include "ggml/ggml_type.h"
#include "ggml/quant_blocks.h"
#include "neon/kernels.h"

namespace r1pi {

class KvCache {
 public:
  // type: F32, F16 or Q8_0 (head_dim a multiple of 32); anything else is refused with Error.
  // n_seqs slots of n_ctx positions each; windows: each layer's sliding window (0 or none given:
  // every position), max_run as above (0: n_ctx, no layer a ring).
  KvCache(int n_layers, int n_ctx, int n_heads, int head_dim, GgmlType type = GgmlType::F32, int n_seqs = 1,
          const std::vector<int>& windows = {}, int max_run = 0);
  int n_ctx() const { return n_ctx_; }  // positions per slot
  int max_run() const { return max_run_; }  // n_ctx when no layer is a ring
  // Positions layer l holds per slot and head: n_ctx, or a window layer's ring.
  int positions(int layer) const { return positions_[size_t(layer)]; }
  // Whether slot seq can continue at position n (n <= what it holds): a ring still holds the
  // window before n.
  bool resumable(int seq, int n) const { return n == 0 || int(tokens_[size_t(seq)].size()) - n <= max_run_; }
  int n_seqs() const { return n_seqs_; }
  int head_dim() const { return head_dim_; }
  GgmlType type() const { return type_; }
  // Bytes of one position's key (or value) of one head; position pos + 1's follows it.
  size_t row_bytes() const { return row_bytes_; }
  // Slot seq's key (value) row of head `head` at position pos. Position pos + 1's follows it,
  // except at the end of a ring (pos + 1 a multiple of positions(layer)), whose next is its start.
  const uint8_t* key(int layer, int seq, int head, int pos) const { return keys_.data() + offset(layer, seq, head, pos); }
  const uint8_t* value(int layer, int seq, int head, int pos) const { return values_.data() + offset(layer, seq, head, pos); }
  // Stores one position's keys and values, n_heads * head_dim floats each, heads one after
  // another, converted to the cache's type (F16: round to nearest even; Q8_0: ggml's quantiser).
  void store(int layer, int seq, int pos, const float* keys, const float* values);

  // ---- what each slot holds: the tokens whose keys and values are at positions 0 .. n - 1 ----
  const std::vector<int32_t>& tokens(int seq) const { return tokens_[size_t(seq)]; }
  // Forgets positions n and later of slot seq (n = 0 frees the slot).
  void truncate(int seq, int n);
  // Records that position tokens(seq).size() now holds token.
  void append(int seq, int32_t token) { tokens_[size_t(seq)].push_back(token); }
  // Slot dst holds what slot src holds (its keys, values and tokens).
  void copy(int src, int dst);

  uint64_t bytes() const { return keys_.size() + values_.size(); }
  // The bytes of such a cache, without making one.
  static uint64_t bytes_for(int n_layers, int n_ctx, int n_heads, int head_dim, GgmlType type, int n_seqs = 1,
                            const std::vector<int>& windows = {}, int max_run = 0);

 private:
  size_t offset(int layer, int seq, int head, int pos) const {
    const size_t held = size_t(positions_[size_t(layer)]);
    return layer_start_[size_t(layer)] + ((size_t(seq) * n_heads_ + head) * held + size_t(pos) % held) * row_bytes_;
  }
  int n_layers_, n_ctx_, n_heads_, head_dim_, n_seqs_, max_run_;
  GgmlType type_;
  size_t row_bytes_;
  std::vector<int> positions_;        // per layer
  std::vector<size_t> layer_start_;  // per layer: the byte its rows begin at
  HugeBuffer keys_, values_;
  std::vector<std::vector<int32_t>> tokens_;
};

// The types a KV cache may hold, by --kv-type's names, with what attention reads them with: the
// values' kernel (the keys go through the type's matmul, on query rows of its activation type) and
// the narrowest slice of head_dim that kernel takes. A row's place is the number ranks compare
// (rank_agreement). A new cache type is one row here.
struct KvCacheType {
  const char* name;
  GgmlType type;
  void (*Kernels::*weighted_sum)(const WeightedSumArgs&);
  int min_slice;
};
inline constexpr KvCacheType kKvCacheTypes[] = {
    {"f32", GgmlType::F32, &Kernels::weighted_sum_f32, 16},
    {"f16", GgmlType::F16, &Kernels::weighted_sum_f16, 16},
    {"q8_0", GgmlType::Q8_0, &Kernels::weighted_sum_q8_0, QK8_0},
};
// The row of --kv-type's name (Error for another name) or of a type (Error for a type not in it).
const KvCacheType& kv_cache_type_named(const std::string& name);
const KvCacheType& kv_cache_type_row(GgmlType type);
GgmlType kv_cache_type(const std::string& name);
// The names, in the table's order: "f32", "f16", "q8_0".
std::vector<std::string> kv_cache_type_names();

}  // namespace r1pi
