// One r1pi-bench test on a token source: the generation loop (runtime/generator.h) run greedily
// past end-of-generation, timed per forward, with only the forwards after the depth counted.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "benchmark/bench_params.h"
#include "benchmark/bench_report.h"
#include "model/model_loader.h"
#include "runtime/step_timings.h"
#include "specdec/speculator.h"

namespace r1pi {

// The ids prompts are cut from: fixed pseudo-random ids (std::mt19937 is specified bit for bit),
// so that every run, build and rank count feeds the same tokens and generates comparable hashes.
std::vector<int32_t> bench_prompt_ids(int count, uint32_t n_vocab);

// Where the measured tokens of a test start: its depth, or 1 for a tg test without one (the
// generation loop needs a prompt token to start from).
int measured_from(const BenchTest& test);
// The prompt ids and context the tests need.
int bench_prompt_length(const std::vector<BenchTest>& tests);
int bench_context(const std::vector<BenchTest>& tests);

// A warm-up and `repetitions` timed runs; every run's hash is checked against the warm-up's.
// last_cost: as for TimedTokenSource; spec: the drafter's options and cost curve, for a test with
// config.spec on.
TestResult run_test(TokenSource& source, const std::function<StepCost()>& last_cost,
                    const Tokenizer& tokenizer, const BenchTest& test, const std::vector<int32_t>& ids,
                    int repetitions, const SpecOptions& spec);

// Speculation must not change the output: each spec-on test whose spec-off twin (every other
// setting equal) also ran gets an error when their hashes differ.
void check_spec_twins(std::vector<TestResult>& results);

// The model columns of the report, from rank 0's shard.
BenchModel describe_bench_model(const LoadedModel& model, int n_ranks, const char* backend);

}  // namespace r1pi
