// A batch of sequences on N ranks (run under mpirun, any N the model allows):
//
//   mpirun -np N mpi_batched_sequences MODEL [--sequences 8] [--slots 4] [--threads 1]
//
// Rank 0 drives r1pi's multi-rank engine (RootTokenSource, the other ranks in run_worker) through
// tests/sequence_batch.h: sequences of different prompts, lengths, start steps and samplers
// (greedy and seeded sampling alternate) share forward passes, slots are freed and taken again;
// then each sequence runs alone through generate() in the same engine. Every sequence's tokens
// must be the same both ways ("FAIL: ..." otherwise). The slot operations (truncate) travel as
// control messages, so the other ranks' caches follow rank 0's.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "common/error.h"
#include "runtime/generator.h"
#include "runtime/mpi/distributed_run.h"
#include "runtime/mpi/rank_agreement.h"
#include "runtime/mpi/rank_roles.h"
#include "runtime/run_options.h"
#include "mpi_test_main.h"
#include "sequence_batch.h"

namespace r1pi {
namespace {

int run(int argc, char** argv, const MpiWorld& world) {
  if (argc < 2) throw Error("usage: mpi_batched_sequences MODEL [--sequences N] [--slots N] [--threads N]");
  const std::string path = argv[1];
  int n = 8, slots = 4, threads = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (flag == "--sequences") n = v;
    else if (flag == "--slots") slots = v;
    else if (flag == "--threads") threads = v;
    else throw Error("unknown option " + flag);
  }
  const std::optional<LoadedModel> model = load_shards(path, false, world);
  if (!model) return 1;
  const std::unique_ptr<RankEngine> engine = make_engine(*model, 128, threads, "allgather", world, GgmlType::F32, slots);
  if (!engine) return 1;
  if (!world.is_root()) return run_worker(engine->forward, engine->sync, world, {});

  RootTokenSource source(engine->forward, engine->sync, world, {});
  int verdict = 0;
  try {
    // The byte vocabulary's ids 3.. are bytes; a trained model's are its tokens.
    const std::vector<test::SequenceRun> runs = test::mixed_sequences(n, int32_t(model->config.n_vocab));
    const std::vector<std::vector<int32_t>> batched = test::run_batched(source, runs);
    for (int i = 0; i < n; ++i) {
      const test::SequenceRun& r = runs[size_t(i)];
      source.truncate(0, 0);
      GenerationOptions o;
      o.n_predict = r.n_predict;
      o.batch_size = r.chunk;
      o.sampler = r.sampler;
      o.ignore_eos = true;
      const std::vector<int32_t> alone = generate(source, *model->tokenizer, r.prompt, o, {}).generated;
      if (alone != batched[size_t(i)]) {
        std::printf("FAIL: sequence %d (%s) differs batched and alone on %d ranks\n", i,
                    r.sampler.temperature > 0 ? "sampled" : "greedy", world.size());
        verdict = 1;
      }
    }
  } catch (const Error& e) {
    std::printf("FAIL: %s\n", e.what());
    verdict = 1;
  }
  source.stop(0);
  if (verdict == 0)
    std::printf("PASS: %d sequences in %d slots on %d ranks: each got its tokens alone\n", n, slots, world.size());
  std::fflush(stdout);
  return verdict;
}

}  // namespace
}  // namespace r1pi

int main(int argc, char** argv) {
  return r1pi::test::mpi_test_main(argc, argv, "mpi_batched_sequences", r1pi::run);
}
