// Combines the ranks' partial sums of the residual update (after wo and after w2) through Q8_0 blocks,
// so that every rank ends with the same bits whatever algorithm Open MPI picks.
//
// Each rank quantises its partial rows to Q8_0 (34-byte blocks, an MPI datatype). The combination
// is then pure data movement plus one fixed-order sum:
//   allreduce: MPI_Allreduce over a buffer of one Q8_0 slot per rank, with a user-defined MPI_Op
//              that merges slots bytewise (OR). Each slot is non-zero in at most one operand, so the
//              op is exactly associative and commutative: any reduction tree (recursive doubling,
//              ring, Rabenseifner, ...) yields the same bytes, namely every rank's blocks.
//   allgather: MPI_Allgather of the Q8_0 rows (distributed-llama's formulation).
//   direct:    every rank sends its rows to every other rank at once and receives theirs, one round
//              of point-to-point messages (no collective algorithm's rounds: on a switch each board's
//              n-1 messages share its link, and the latency is paid once).
// All leave every rank holding all partials; each rank then dequantises and adds them in rank
// order 0, 1, ..., n-1. Hence the result is bit-identical on every rank, identical for every
// method, and independent of message sizes and of the transport.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "layers/shard_sync.h"
#include "ggml/quant_blocks.h"

namespace r1pi {

// The 34-byte Q8_0 block as an MPI datatype, and the slot-merging op (bytewise OR).
MPI_Datatype q8_0_datatype();
MPI_Op q8_0_slot_merge_op();

// In the order of kSyncMethods' names (src/runtime/run_options.h).
enum class SyncMethod { Allgather, Allreduce, Direct };
SyncMethod parse_sync_method(const std::string& name);  // a name of kSyncMethods (Error for another)

struct SyncStats {
  double seconds = 0;     // wall time inside reduce_sum (quantise, MPI, sum)
  uint64_t sent = 0;      // payload bytes this rank delivers to its peers
  uint64_t received = 0;  // payload bytes it takes in from them
  int calls = 0;
};

class Q8_0Sync final : public ShardSync {
 public:
  Q8_0Sync(SyncMethod method, int rank, int n_ranks);
  ~Q8_0Sync() override;
  void reduce_sum(float* x, int B, int64_t n) override;
  SyncMethod method() const { return method_; }
  const SyncStats& stats() const { return stats_; }

 private:
  SyncMethod method_;
  int rank_, n_ranks_;
  SyncStats stats_;
  std::vector<block_q8_0> mine_, all_;
  std::vector<float> row_;
};

}  // namespace r1pi
