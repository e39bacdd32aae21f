#include "runtime/mpi/weights_from_root.h"

#include <mpi.h>

#include <algorithm>
#include <vector>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "model/weight_slices.h"
#include "runtime/mpi/rank_agreement.h"
#include "runtime/mpi/rank_watchdog.h"

namespace r1pi {

namespace {

constexpr int kSliceTag = 7301;
constexpr size_t kChunk = size_t(1) << 30;  // MPI counts are ints: send large slices in pieces

void send_bytes(const uint8_t* data, size_t n, int to) {
  for (size_t off = 0; off < n; off += kChunk)
    complete("a rank to take its weight slices", [&](MPI_Request* r) {
      return MPI_Isend(data + off, int(std::min(kChunk, n - off)), MPI_BYTE, to, kSliceTag,
                       MPI_COMM_WORLD, r);
    });
}

// Rank 0's bytes of the header (or a small tensor) to every rank.
void broadcast_bytes(void* data, int n, MPI_Datatype type) {
  complete("the model header from rank 0", [&](MPI_Request* r) {
    return MPI_Ibcast(data, n, type, 0, MPI_COMM_WORLD, r);
  });
}

class ReceivedSliceSource final : public SliceSource {
 public:
  void read(const TensorSlice& slice, uint8_t* dst) override {
    const size_t n = slice.bytes();
    for (size_t off = 0; off < n; off += kChunk)
      complete("this rank's weight slices from rank 0", [&](MPI_Request* r) {
        return MPI_Irecv(dst + off, int(std::min(kChunk, n - off)), MPI_BYTE, 0, kSliceTag,
                         MPI_COMM_WORLD, r);
      });
  }
};

// One-dimensional tensors (norms, rope_freqs): small, and read while the configuration is parsed,
// so they travel with the header.
std::vector<const GgufTensorInfo*> vector_tensors(const GgufFile& f) {
  std::vector<const GgufTensorInfo*> out;
  for (const GgufTensorInfo& t : f.tensors())
    if (t.ne.size() == 1) out.push_back(&t);
  return out;
}

// Rank 0 opens the file; every other rank gets its header and small tensors. Collective even when
// rank 0 fails (it then sends a zero size and the others report that).
GgufFile share_header(const std::string& path, const MpiWorld& world) {
  uint64_t sizes[2] = {0, 0};  // header bytes (0: rank 0 failed), file size
  if (world.is_root()) {
    try {
      GgufFile f = GgufFile::open(path);
      sizes[0] = f.data_offset();
      sizes[1] = f.file_size();
      broadcast_bytes(sizes, 2, MPI_UINT64_T);
      broadcast_bytes(const_cast<uint8_t*>(f.header_bytes()), int(sizes[0]), MPI_BYTE);
      for (const GgufTensorInfo* t : vector_tensors(f))
        broadcast_bytes(const_cast<uint8_t*>(f.tensor_data(*t)), int(t->n_bytes), MPI_BYTE);
      return f;
    } catch (const Error&) {
      if (sizes[0] == 0) broadcast_bytes(sizes, 2, MPI_UINT64_T);
      throw;
    }
  }
  broadcast_bytes(sizes, 2, MPI_UINT64_T);
  if (sizes[0] == 0) throw Error("rank 0 could not read " + path);
  std::vector<uint8_t> header(sizes[0]);
  broadcast_bytes(header.data(), int(header.size()), MPI_BYTE);
  // Rank 0 validated these bytes already; parsing them again here cannot fail differently.
  GgufFile f = GgufFile::from_header(path + " (from rank 0)", header.data(), header.size(), sizes[1]);
  for (const GgufTensorInfo* t : vector_tensors(f)) {
    std::vector<uint8_t> bytes(t->n_bytes);
    broadcast_bytes(bytes.data(), int(bytes.size()), MPI_BYTE);
    f.attach_tensor_data(t->name, std::move(bytes));
  }
  return f;
}

}  // namespace

std::optional<LoadedModel> load_from_root(const std::string& path, const MpiWorld& world, const ShardWeights& weights) {
  // ---- header and configuration on every rank; all agree before any weight moves ----
  std::optional<GgufFile> file;
  LoadedModel model;
  std::string error;
  try {
    file.emplace(share_header(path, world));
    model = describe_model(*file, world.rank(), world.size(), weights);
  } catch (const Error& e) {
    error = e.what();
  }
  if (!all_succeeded(world, error)) return std::nullopt;

  // ---- the weights: rank 0 sends every rank its slices, in plan order ----
  if (!world.is_root()) {
    ReceivedSliceSource source;
    load_weights(model, *file, source, false);
    return model;
  }
  MappedSliceSource mapped(*file);
  std::vector<uint8_t> buffer;
  for (int r = 1; r < world.size(); ++r)
    for (const TensorSlice& s : plan_slices(*file, model.config, Shard::for_rank(model.config, r, world.size(), weights))) {
      buffer.resize(s.bytes());
      mapped.read(s, buffer.data());
      send_bytes(buffer.data(), buffer.size(), r);
    }
  load_weights(model, *file, mapped, true);
  file->release();
  return model;
}

}  // namespace r1pi
