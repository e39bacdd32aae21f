#include "cluster/model_needs.h"

#include <algorithm>
#include <cstdio>

#include "ggml/ggml_type.h"
#include "gguf/gguf_file.h"
#include "model/architecture.h"
#include "model/model_config.h"
#include "model/model_fingerprint.h"
#include "runtime/run_options.h"
#include "runtime/run_steps.h"

namespace r1pi {

ModelNeeds model_needs(const std::string& path, int ctx_size) {
  const GgufFile file = GgufFile::open(path);
  const ModelConfig c = ModelConfig::from_gguf(file);
  ModelNeeds needs;
  RunOptions o;
  o.ctx_size = ctx_size;
  needs.n_ctx = context_size(o, c);
  const bool tied = file.find_tensor("output.weight") == nullptr;
  std::string matrix_type;
  for (const GgufTensorInfo& t : file.tensors()) {
    needs.weight_bytes += t.n_bytes;
    if (t.name == "token_embd.weight") {
      needs.read_per_token += tied ? t.n_bytes : t.n_bytes / std::max<uint64_t>(1, t.rows());
    } else if (t.name.find("_exps.") != std::string::npos && c.n_experts) {
      needs.read_per_token += t.n_bytes * c.n_experts_used / c.n_experts;
    } else {
      needs.read_per_token += t.n_bytes;
      if (matrix_type.empty() && t.name.rfind("blk.", 0) == 0 && t.ne.size() > 1) matrix_type = ggml_type_name(t.type);
    }
  }
  needs.kv_bytes = 2ull * ggml_row_bytes(GgmlType::F32, c.head_dim) * c.n_kv_heads * c.n_layers * uint64_t(needs.n_ctx);
  char summary[256];
  const std::string arch(c.arch ? c.arch->name : "?");
  std::snprintf(summary, sizeof summary, "%s, %u layers, dim %u, %s, %.1f MB", arch.c_str(), c.n_layers, c.dim,
                matrix_type.c_str(), needs.weight_bytes / 1e6);
  needs.summary = summary;
  needs.fingerprint = to_hex(model_fingerprint(file));
  return needs;
}

}  // namespace r1pi
