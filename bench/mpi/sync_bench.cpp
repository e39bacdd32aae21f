// sync_bench: OSU-style latency of the ways r1pi's ranks can combine one residual row.
//
//   mpirun -np P sync_bench [--iters N] [--warmup W] [--dims 2048,4096] [--iface eth0] [--label X]
//
// For each dim (one Q8_0 row is dim/32 blocks of 34 bytes: 2176 B at 2048, 4352 B at 4096; B = 1):
//   ag-q8_0      MPI_Allgather of this rank's Q8_0 row (q8_0_sync.cpp's allgather)
//   ar-or-q8_0   MPI_Allreduce in place over P rank slots of Q8_0 blocks with the bytewise-OR op
//                (q8_0_sync.cpp's allreduce)
//   dx-q8_0      direct exchange: MPI_Irecv from and MPI_Isend to every peer at once, one round
//                (q8_0_sync.cpp's direct)
//   ar-f32       MPI_Allreduce of dim floats, MPI_SUM (what an unquantised sync would send)
//   sync-ag      Q8_0Sync::reduce_sum, --sync allgather: quantise + MPI + dequantise-and-add
//   sync-ar      Q8_0Sync::reduce_sum, --sync allreduce
//   sync-dx      Q8_0Sync::reduce_sum, --sync direct
// Every iteration: MPI_Barrier, then each op is timed on every rank; an iteration's latency is
// the max over ranks. Ops are interleaved per iteration (fair under drifting load). The results
// are checked once. Bytes: "payload" is what the runtime's SyncStats counts per rank (the row to
// each of the P-1 peers; for ar-f32 the same formula with 4*dim bytes); "wire" (only with --iface)
// is the measured growth of the interface's tx_bytes in /proc/net/dev per call and rank, headers
// included, from a separate phase of back-to-back calls without barriers.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ggml/quant_blocks.h"
#include "runtime/mpi/q8_0_sync.h"

using namespace r1pi;

namespace {

enum Op { AG_Q8_0, AR_OR_Q8_0, DX_Q8_0, AR_F32, SYNC_AG, SYNC_AR, SYNC_DX, N_OPS };
const char* const kOpName[N_OPS] = {"ag-q8_0", "ar-or-q8_0", "dx-q8_0", "ar-f32", "sync-ag", "sync-ar", "sync-dx"};
constexpr int kSyncOps[] = {SYNC_AG, SYNC_AR, SYNC_DX};

// tx_bytes of one interface in this process's network namespace (-1: not found).
long long tx_bytes(const std::string& iface) {
  std::ifstream in("/proc/net/dev");
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    if (name != iface) continue;
    std::istringstream fields(line.substr(colon + 1));
    long long v[9] = {};
    for (long long& x : v) fields >> x;
    return v[8];  // rx: bytes packets errs drop fifo frame compressed multicast; then tx bytes
  }
  return -1;
}

struct Buffers {
  int rank, P, dim, blocks;
  std::vector<block_q8_0> row, gathered, slots, direct;
  std::vector<MPI_Request> requests;
  std::vector<float> fin, fout, x;
  Q8_0Sync sync_ag, sync_ar, sync_dx;
  MPI_Op or_op;

  Buffers(int rank_, int P_, int dim_, MPI_Op op)
      : rank(rank_), P(P_), dim(dim_), blocks(dim_ / QK8_0), row(size_t(blocks)),
        gathered(size_t(blocks) * P_), slots(size_t(blocks) * P_), direct(size_t(blocks) * P_),
        fin(size_t(dim_)), fout(size_t(dim_)), x(size_t(dim_)), sync_ag(SyncMethod::Allgather, rank_, P_),
        sync_ar(SyncMethod::Allreduce, rank_, P_), sync_dx(SyncMethod::Direct, rank_, P_), or_op(op) {
    uint8_t* bytes = reinterpret_cast<uint8_t*>(row.data());
    for (size_t i = 0; i < row.size() * sizeof(block_q8_0); ++i) bytes[i] = uint8_t(rank * 31 + i);
    for (int i = 0; i < dim; ++i) fin[size_t(i)] = float((i * 7 + rank * 13) % 101) * 0.5f;
  }

  void partial(std::vector<float>& v) const {  // this rank's partial sums (small, varied)
    for (int i = 0; i < dim; ++i) v[size_t(i)] = float(((i * 37 + rank * 101) % 211) - 105) / 64.0f;
  }

  void run(Op op) {
    switch (op) {
      case AG_Q8_0:
        MPI_Allgather(row.data(), blocks, q8_0_datatype(), gathered.data(), blocks, q8_0_datatype(),
                      MPI_COMM_WORLD);
        break;
      case AR_OR_Q8_0:  // as q8_0_sync.cpp: own slot filled, the others zero, merged in place
        std::memset(slots.data(), 0, slots.size() * sizeof(block_q8_0));
        std::memcpy(slots.data() + size_t(rank) * blocks, row.data(), row.size() * sizeof(block_q8_0));
        MPI_Allreduce(MPI_IN_PLACE, slots.data(), blocks * P, q8_0_datatype(), or_op, MPI_COMM_WORLD);
        break;
      case DX_Q8_0:  // as q8_0_sync.cpp: receives posted first, sends to rank+1, rank+2, ...
        std::memcpy(direct.data() + size_t(rank) * blocks, row.data(), row.size() * sizeof(block_q8_0));
        requests.clear();
        for (int s = 1; s < P; ++s) {
          const int from = (rank - s + P) % P;
          requests.emplace_back();
          MPI_Irecv(direct.data() + size_t(from) * blocks, blocks, q8_0_datatype(), from, 1, MPI_COMM_WORLD,
                    &requests.back());
        }
        for (int s = 1; s < P; ++s) {
          requests.emplace_back();
          MPI_Isend(row.data(), blocks, q8_0_datatype(), (rank + s) % P, 1, MPI_COMM_WORLD, &requests.back());
        }
        MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
        break;
      case AR_F32:
        MPI_Allreduce(fin.data(), fout.data(), dim, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
      case SYNC_AG:
        partial(x);
        sync_ag.reduce_sum(x.data(), 1, dim);
        break;
      case SYNC_AR:
        partial(x);
        sync_ar.reduce_sum(x.data(), 1, dim);
        break;
      case SYNC_DX:
        partial(x);
        sync_dx.reduce_sum(x.data(), 1, dim);
        break;
      default: break;
    }
  }

  // True when this rank holds the right result of the op just run.
  bool check(Op op, std::vector<float>* sync_result) const {
    const size_t S = row.size() * sizeof(block_q8_0);
    auto pattern_ok = [&](const std::vector<block_q8_0>& all) {
      const uint8_t* b = reinterpret_cast<const uint8_t*>(all.data());
      for (int p = 0; p < P; ++p)
        for (size_t i = 0; i < S; ++i)
          if (b[size_t(p) * S + i] != uint8_t(p * 31 + i)) return false;
      return true;
    };
    switch (op) {
      case AG_Q8_0: return pattern_ok(gathered);
      case AR_OR_Q8_0: return pattern_ok(slots);
      case DX_Q8_0: return pattern_ok(direct);
      case AR_F32:
        for (int i = 0; i < dim; ++i) {
          float e = 0;
          for (int r = 0; r < P; ++r) e += float((i * 7 + r * 13) % 101) * 0.5f;
          if (fout[size_t(i)] != e) return false;
        }
        return true;
      case SYNC_AG:
      case SYNC_AR:
      case SYNC_DX: *sync_result = x; return true;
      default: return true;
    }
  }
};

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

std::vector<int> parse_dims(const std::string& s) {
  std::vector<int> dims;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) dims.push_back(std::stoi(item));
  return dims;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int iters = 300, warmup = 20, wire_calls = 100;
  std::vector<int> dims{2048, 4096};
  std::string iface, label = "-";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--iters") iters = std::stoi(v), ++i;
    else if (a == "--warmup") warmup = std::stoi(v), ++i;
    else if (a == "--dims") dims = parse_dims(v), ++i;
    else if (a == "--iface") iface = v, ++i;
    else if (a == "--label") label = v, ++i;
    else if (a == "--wire-calls") wire_calls = std::stoi(v), ++i;
    else {
      if (rank == 0) std::fprintf(stderr, "sync_bench: unknown argument %s\n", a.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  MPI_Op or_op = q8_0_slot_merge_op();
  char host[MPI_MAX_PROCESSOR_NAME];
  int host_len = 0;
  MPI_Get_processor_name(host, &host_len);
  if (rank == 0) {
    std::printf("# sync_bench: %d ranks, %d iterations (+%d warm-up), rank 0 on %s, label %s; "
                "latency = max over ranks, us\n", P, iters, warmup, host, label.c_str());
    std::printf("%-10s %2s %5s %6s %-10s %9s %9s %9s %9s %10s %10s %5s\n", "label", "np", "dim", "bytes", "op",
                "median", "p90", "min", "mean", "payload/rk", "wire/rk", "check");
  }
  for (int dim : dims) {
    if (dim % QK8_0 != 0) {
      if (rank == 0) std::fprintf(stderr, "sync_bench: dim %d is not a multiple of 32\n", dim);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    Buffers buf(rank, P, dim, or_op);
    const int total = iters + warmup;
    std::vector<double> t(size_t(N_OPS) * total), tmax(size_t(N_OPS) * total);
    int bad[N_OPS] = {};
    std::vector<float> sync_results[3];
    for (int it = 0; it < total; ++it)
      for (int op = 0; op < N_OPS; ++op) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double a = MPI_Wtime();
        buf.run(Op(op));
        t[size_t(op) * total + it] = MPI_Wtime() - a;
        if (it == warmup - 1 || (warmup == 0 && it == 0)) {
          std::vector<float>* r = op == SYNC_AG ? &sync_results[0]
                                 : op == SYNC_AR ? &sync_results[1]
                                 : op == SYNC_DX ? &sync_results[2] : nullptr;
          if (!buf.check(Op(op), r)) bad[op] = 1;
        }
      }
    // The three Q8_0Sync methods must give the same bits, on every rank.
    const auto mark_syncs_bad = [&] { for (int op : kSyncOps) bad[op] = 1; };
    if (sync_results[0] != sync_results[1] || sync_results[0] != sync_results[2]) mark_syncs_bad();
    uint64_t h = 1469598103934665603ull;
    for (float f : sync_results[0]) {
      uint32_t u;
      std::memcpy(&u, &f, 4);
      h = (h ^ u) * 1099511628211ull;
    }
    std::vector<uint64_t> hashes(static_cast<size_t>(P));
    MPI_Allgather(&h, 1, MPI_UINT64_T, hashes.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
    for (uint64_t x : hashes)
      if (x != hashes[0]) mark_syncs_bad();

    // Bytes on the wire: back-to-back calls, no barriers in between.
    double wire[N_OPS];
    for (int op = 0; op < N_OPS; ++op) {
      wire[op] = -1;
      if (iface.empty()) continue;
      MPI_Barrier(MPI_COMM_WORLD);
      const long long before = tx_bytes(iface);
      for (int k = 0; k < wire_calls; ++k) buf.run(Op(op));
      const long long after = tx_bytes(iface);
      MPI_Barrier(MPI_COMM_WORLD);
      double mine = before >= 0 && after >= 0 ? double(after - before) / wire_calls : -1, sum = 0;
      MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      wire[op] = mine < 0 ? -1 : sum / P;
    }

    MPI_Reduce(t.data(), tmax.data(), int(t.size()), MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int bad_all[N_OPS];
    MPI_Reduce(bad, bad_all, N_OPS, MPI_INT, MPI_LOR, 0, MPI_COMM_WORLD);
    if (rank != 0) continue;
    const int S = buf.blocks * int(sizeof(block_q8_0));
    for (int op = 0; op < N_OPS; ++op) {
      std::vector<double> v(tmax.begin() + size_t(op) * total + warmup, tmax.begin() + size_t(op + 1) * total);
      double mean = 0;
      for (double x : v) mean += x;
      mean /= double(v.size());
      const double payload = double(op == AR_F32 ? 4 * dim : S) * (P - 1);
      char wire_s[32];
      if (wire[op] < 0) std::snprintf(wire_s, sizeof wire_s, "-");
      else std::snprintf(wire_s, sizeof wire_s, "%.0f", wire[op]);
      std::printf("%-10s %2d %5d %6d %-10s %9.1f %9.1f %9.1f %9.1f %10.0f %10s %5s\n", label.c_str(), P, dim,
                  op == AR_F32 ? 4 * dim : S, kOpName[op], quantile(v, 0.5) * 1e6, quantile(v, 0.9) * 1e6,
                  quantile(v, 0.0) * 1e6, mean * 1e6, payload, wire_s, bad_all[op] ? "BAD" : "ok");
    }
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
