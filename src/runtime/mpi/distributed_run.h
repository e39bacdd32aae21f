// A job of several ranks: every rank loads its shard (or receives it from rank 0), the ranks check
// they hold the same model, then rank 0 generates while the others follow its control messages.
#pragma once
#include "model/shard.h"
#include "runtime/mpi/mpi_world.h"
#include "runtime/run_options.h"

namespace r1pi {

class GgufFile;
struct LlamaConfig;

// The shard rank `rank` of n_ranks holds (the rule every rank of a job applies): FFN columns split
// on whole blocks of ffn_down's type. Throws r1pi::Error when the model cannot be split that way.
Shard rank_shard(const GgufFile& file, const LlamaConfig& config, int rank, int n_ranks);

// Returns the process exit code (0, or 1 with the reason printed by rank 0).
int run_distributed(const RunOptions& options, const MpiWorld& world);

}  // namespace r1pi
