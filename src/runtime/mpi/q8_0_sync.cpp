#include "runtime/mpi/q8_0_sync.h"

#include <mpi.h>

#include <chrono>
#include <cstring>

#include "common/error.h"
#include "neon/kernels.h"
#include "ggml/quantize.h"
#include "runtime/mpi/rank_watchdog.h"
#include "runtime/run_options.h"

namespace r1pi {

namespace {

// The direct exchange's messages; a tag of their own, apart from the watchdog's pings. Messages
// between two ranks with one tag arrive in the order sent, so consecutive syncs cannot mix.
constexpr int kPartialSumTag = 7501;

// Merges rank slots: bytewise OR of whole Q8_0 blocks. Exactly associative and commutative.
void merge_slots(void* in, void* inout, int* len, MPI_Datatype*) {
  const uint8_t* a = static_cast<const uint8_t*>(in);
  uint8_t* b = static_cast<uint8_t*>(inout);
  const size_t n = size_t(*len) * sizeof(block_q8_0);
  for (size_t i = 0; i < n; ++i) b[i] |= a[i];
}

}  // namespace

MPI_Datatype q8_0_datatype() {
  static MPI_Datatype type = [] {
    MPI_Datatype t;
    MPI_Type_contiguous(int(sizeof(block_q8_0)), MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
  }();
  return type;
}

MPI_Op q8_0_slot_merge_op() {
  static MPI_Op op = [] {
    MPI_Op o;
    MPI_Op_create(&merge_slots, /*commute=*/1, &o);
    return o;
  }();
  return op;
}

SyncMethod parse_sync_method(const std::string& name) {
  std::string names;
  for (size_t i = 0; i < kSyncMethods.size(); ++i) {
    if (name == kSyncMethods[i]) return SyncMethod(i);
    names += (i ? ", " : "") + std::string(kSyncMethods[i]);
  }
  throw Error("unknown sync method '" + name + "' (" + names + ")");
}

Q8_0Sync::Q8_0Sync(SyncMethod method, int rank, int n_ranks)
    : method_(method), rank_(rank), n_ranks_(n_ranks) {}

Q8_0Sync::~Q8_0Sync() = default;

void Q8_0Sync::reduce_sum(float* x, int B, int64_t n) {
  const auto start = std::chrono::steady_clock::now();
  if (n % QK8_0 != 0)
    throw Error("sync: row length " + std::to_string(n) + " is not whole Q8_0 blocks");
  const Kernels& kern = kernels();
  const int64_t blocks = int64_t(B) * (n / QK8_0);
  const int64_t bytes = blocks * int64_t(sizeof(block_q8_0));
  all_.resize(size_t(blocks) * size_t(n_ranks_));

  // ---- this rank's partial rows as Q8_0 ----
  // (allreduce and direct quantise into their own slot of all_; allgather needs a separate row)
  block_q8_0* mine = method_ != SyncMethod::Allgather ? all_.data() + rank_ * blocks
                                                      : (mine_.resize(size_t(blocks)), mine_.data());
  for (int b = 0; b < B; ++b) kern.quantize_row_q8_0(x + b * n, mine + b * (n / QK8_0), n);

  // ---- every rank's partials to every rank ----
  if (method_ == SyncMethod::Allreduce) {
    std::memset(all_.data(), 0, sizeof(block_q8_0) * size_t(rank_ * blocks));
    std::memset(all_.data() + (rank_ + 1) * blocks, 0,
                sizeof(block_q8_0) * size_t((n_ranks_ - rank_ - 1) * blocks));
    complete("the ranks' partial sums", [&](MPI_Request* r) {
      return MPI_Iallreduce(MPI_IN_PLACE, all_.data(), int(blocks * n_ranks_), q8_0_datatype(),
                            q8_0_slot_merge_op(), MPI_COMM_WORLD, r);
    });
  } else if (method_ == SyncMethod::Direct) {
    complete_all("the ranks' partial sums", [&](std::vector<MPI_Request>& requests) {
      // Receives first, so that no message waits for its buffer; sends go to rank+1, rank+2, ...
      // so that the ranks do not all send to rank 0 first.
      for (int step = 1; step < n_ranks_; ++step) {
        const int from = (rank_ - step + n_ranks_) % n_ranks_;
        requests.emplace_back();
        MPI_Irecv(all_.data() + from * blocks, int(blocks), q8_0_datatype(), from, kPartialSumTag,
                  MPI_COMM_WORLD, &requests.back());
      }
      for (int step = 1; step < n_ranks_; ++step) {
        requests.emplace_back();
        MPI_Isend(mine, int(blocks), q8_0_datatype(), (rank_ + step) % n_ranks_, kPartialSumTag,
                  MPI_COMM_WORLD, &requests.back());
      }
    });
  } else {
    complete("the ranks' partial sums", [&](MPI_Request* r) {
      return MPI_Iallgather(mine, int(blocks), q8_0_datatype(), all_.data(), int(blocks),
                            q8_0_datatype(), MPI_COMM_WORLD, r);
    });
  }

  // ---- sum in rank order: x = p0 + p1 + ... ----
  row_.resize(size_t(n));
  for (int b = 0; b < B; ++b) {
    float* xb = x + b * n;
    for (int r = 0; r < n_ranks_; ++r) {
      const block_q8_0* q = all_.data() + r * blocks + b * (n / QK8_0);
      if (r == 0) {
        dequantize_row_q8_0(q, xb, n);
      } else {
        dequantize_row_q8_0(q, row_.data(), n);
        for (int64_t i = 0; i < n; ++i) xb[i] += row_[i];
      }
    }
  }
  stats_.sent += uint64_t(bytes) * uint64_t(n_ranks_ - 1);
  stats_.received += uint64_t(bytes) * uint64_t(n_ranks_ - 1);
  stats_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++stats_.calls;
}

}  // namespace r1pi
