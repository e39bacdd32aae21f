// r1pi-bench (src/benchmark, src/app/r1pi_bench_main.cpp): its parameter lists, the tests they
// expand to, the hash check that turns a moved result into an error, the report, and the program
// on a tiny model. No test looks at a speed.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "benchmark/bench_params.h"
#include "benchmark/bench_report.h"
#include "benchmark/bench_run.h"
#include "common/error.h"
#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

TEST(BenchParams, ListsAndRanges) {
  EXPECT_EQ(parse_int_list("-t", "1,2,4", 1), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(parse_int_list("-t", "1-4", 1), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(parse_int_list("-p", "1-16+4", 0), (std::vector<int>{1, 5, 9, 13}));
  EXPECT_EQ(parse_int_list("-p", "1-16*2", 0), (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(parse_int_list("-d", "0,8-16+8", 0), (std::vector<int>{0, 8, 16}));
}

TEST(BenchParams, BadListsAreRefusedNamingTheFlag) {
  for (const char* bad : {"", "x", "1,,2", "4-1", "0", "-3", "1-8*1", "2.5", "1-"})
    EXPECT_NE(test::error_of([&] { parse_int_list("-t", bad, 1); }).find("-t"), std::string::npos)
        << "'" << bad << "'";
}

TEST(BenchParams, SpecIsOffOrOn) {
  EXPECT_EQ(parse_int_list("--spec", "0,1", 0, 1), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_int_list("--spec", "0-1", 0, 1), (std::vector<int>{0, 1}));
  EXPECT_NE(test::error_of([] { parse_int_list("--spec", "0,2", 0, 1); }).find("<= 1"), std::string::npos);
  EXPECT_NE(test::error_of([] { parse_int_list("--spec", "0-3", 0, 1); }).find("--spec"), std::string::npos);
}

TEST(BenchParams, CacheTypesByName) {
  EXPECT_EQ(parse_name_list("-ctk", "f32,q8_0,f16", kBenchKvTypes), (std::vector<int>{0, 2, 1}));
  const std::string error = test::error_of([] { parse_name_list("-ctk", "f32,q4_0", kBenchKvTypes); });
  EXPECT_NE(error.find("-ctk q4_0: give one or more of f32, f16, q8_0"), std::string::npos) << error;
}

// The cache type nests inside the thread count: each (threads, type) pair is one engine.
TEST(BenchParams, CacheTypeNestsInsideThreads) {
  const std::vector<BenchTest> tests = expand_tests({{1, 2}, {0, 1}, {64}, {0}, {0}}, {}, {8}, {});
  ASSERT_EQ(tests.size(), 4u);
  EXPECT_EQ((std::vector<int>{tests[0].config.threads, tests[1].config.threads, tests[2].config.threads}),
            (std::vector<int>{1, 1, 2}));
  EXPECT_EQ((std::vector<int>{tests[0].config.kv, tests[1].config.kv, tests[2].config.kv}),
            (std::vector<int>{0, 1, 0}));
}

TEST(BenchParams, PgPairs) {
  EXPECT_EQ(parse_pg_pairs("512,128"), (std::vector<std::pair<int, int>>{{512, 128}}));
  EXPECT_EQ(parse_pg_pairs("1,2;3,4"), (std::vector<std::pair<int, int>>{{1, 2}, {3, 4}}));
  EXPECT_THROW(parse_pg_pairs("512"), Error);
  EXPECT_THROW(parse_pg_pairs("512,0"), Error);
}

// Every combination, the first list (threads) varying slowest, tests in pp, tg, pg order within
// one; -p 0 means no pp test.
TEST(BenchParams, EveryCombinationInOrder) {
  ASSERT_EQ(kListParams.size(), 5u);  // threads, kv, batch, depth, spec
  const std::vector<BenchTest> tests =
      expand_tests({{1, 2}, {0}, {64}, {0, 128}, {0}}, {0, 512}, {128}, {{16, 8}});
  ASSERT_EQ(tests.size(), 2u * 2u * 3u);
  std::vector<std::string> names;
  for (size_t i = 0; i < 6; ++i) names.push_back(tests[i].name());
  EXPECT_EQ(names, (std::vector<std::string>{"pp512", "tg128", "pp16+tg8", "pp512 @ d128",
                                             "tg128 @ d128", "pp16+tg8 @ d128"}));
  EXPECT_EQ(tests[5].config.threads, 1);
  EXPECT_EQ(tests[6].config.threads, 2);
  EXPECT_EQ(tests[6].config.batch, 64);
}

TEST(BenchReport, AMovedHashIsAnError) {
  EXPECT_EQ(moved_hash_problem({"aa", "aa", "aa"}), "");
  EXPECT_EQ(moved_hash_problem({"aa"}), "");
  const std::string problem = moved_hash_problem({"aa", "aa", "bb", "aa"});
  EXPECT_NE(problem.find("repetition 3 of 4"), std::string::npos) << problem;
  EXPECT_NE(problem.find("bb"), std::string::npos) << problem;
}

TEST(BenchReport, MeanAndSampleSd) {
  // Hand-checked: mean 5, sum of squared deviations 32, sd = sqrt(32 / 7).
  const MeanSd m = mean_sd({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(m.mean, 5.0);
  EXPECT_DOUBLE_EQ(m.sd, std::sqrt(32.0 / 7.0));
  EXPECT_EQ(mean_sd({3}).sd, 0.0);
}

std::string printed(BenchFormat format, std::vector<TestResult> results, int n_ranks = 1) {
  for (TestResult& r : results)
    if (r.model.type.empty()) r.model = {"llama 1M Q4_0", 1 << 20, 1000000, "scalar", n_ranks, 1000000};
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buf, &size);
  print_results(out, format, results);
  std::fclose(out);
  std::string text(buf, size);
  std::free(buf);
  return text;
}

// tg10: 10 tokens in 0.1 s and 0.2 s: 100 and 50 tok/s.
TestResult decode_result(const std::string& error = "") {
  TestResult r;
  r.test = {0, 10, {2, 64, 0}};
  r.sha256 = "ab";
  r.samples = {{0.1, 0.06, 0.04, "ab"}, {0.2, 0.15, 0.05, "ab"}};
  r.error = error;
  return r;
}

TEST(BenchReport, TableInLlamaBenchsShape) {
  const std::string md = printed(BenchFormat::Md, {decode_result()}, 2);
  EXPECT_NE(md.find("| model | size | params | backend | ranks | threads | n_batch | test | t/s |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Pred ms/tok | Sync ms/tok |"), std::string::npos) << md;
  // mean 75, sd 35.36; Pred (6 + 15) / 2 ms per token, Sync (4 + 5) / 2; 75 tok/s x 1 MB.
  EXPECT_NE(md.find("| tg10 | 75.00 ± 35.36 | 10.500 | 4.500 | 0.07 |"), std::string::npos) << md;
  EXPECT_EQ(printed(BenchFormat::Md, {decode_result()}).find("Pred"), std::string::npos);
}

TEST(BenchReport, AFailedTestShowsItsErrorAndNoNumber) {
  const std::string md = printed(BenchFormat::Md, {decode_result("the sha256 moved")});
  EXPECT_NE(md.find("| tg10 | error: the sha256 moved |"), std::string::npos) << md;
  EXPECT_EQ(md.find("75.00"), std::string::npos) << md;
  const nlohmann::json j = nlohmann::json::parse(printed(BenchFormat::Json, {decode_result("moved")}));
  EXPECT_EQ(j[0]["error"], "moved");
  EXPECT_TRUE(j[0]["avg_ts"].is_null());
  EXPECT_TRUE(j[0]["samples_ts"].is_null());
}

// A spec-on test whose spec-off twin printed another hash is an error; one with the same hash, or
// without a twin, is not.
TEST(BenchReport, SpeculationMustKeepTheHash) {
  TestResult off = decode_result(), on = decode_result(), other = decode_result();
  on.test.config.spec = 1;
  other.test.config.spec = 1;
  other.test.config.batch = 8;  // no spec-off twin
  other.sha256 = "ff";
  std::vector<TestResult> results{off, on, other};
  check_spec_twins(results);
  EXPECT_EQ(results[1].error, "");
  EXPECT_EQ(results[2].error, "");
  results[1].sha256 = "cd";
  check_spec_twins(results);
  EXPECT_NE(results[1].error.find("speculative decoding changed the generated ids"), std::string::npos);
  EXPECT_EQ(results[0].error, "");
}

TEST(BenchReport, SpecColumnOnlyWhenATestSpeculates) {
  EXPECT_EQ(printed(BenchFormat::Md, {decode_result()}).find("spec"), std::string::npos);
  TestResult on = decode_result();
  on.test.config.spec = 1;
  on.samples[0].drafted = 8, on.samples[0].accepted = 2;
  on.samples[1].drafted = 12, on.samples[1].accepted = 8;
  const std::string md = printed(BenchFormat::Md, {decode_result(), on});
  EXPECT_NE(md.find("| n_batch | spec | test |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 64 | 0 | tg10 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 64 | 1 (50% of 20) | tg10 |"), std::string::npos) << md;
  const nlohmann::json j = nlohmann::json::parse(printed(BenchFormat::Json, {on}));
  EXPECT_EQ(j[0]["spec"], true);
  EXPECT_EQ(j[0]["spec_drafted"], 20);
  EXPECT_EQ(j[0]["spec_accepted"], 10);
}

TEST(BenchReport, TypeKColumnOnlyWhenACacheIsNotF32) {
  EXPECT_EQ(printed(BenchFormat::Md, {decode_result()}).find("type_k"), std::string::npos);
  TestResult q8 = decode_result();
  q8.test.config.kv = 2;
  const std::string md = printed(BenchFormat::Md, {decode_result(), q8});
  EXPECT_NE(md.find("| n_batch | type_k | test |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 64 | f32 | tg10 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 64 | q8_0 | tg10 |"), std::string::npos) << md;
  const nlohmann::json j = nlohmann::json::parse(printed(BenchFormat::Json, {q8}));
  EXPECT_EQ(j[0]["type_k"], "q8_0");
  EXPECT_EQ(j[0]["type_v"], "q8_0");
}

// Several -m: one table, each row naming its model.
TEST(BenchReport, OneTableForSeveralModels) {
  TestResult other = decode_result();
  other.model = {"qwen3 2M Q4_K", 2 << 20, 2000000, "scalar", 1, 2000000};
  const std::string md = printed(BenchFormat::Md, {decode_result(), other});
  EXPECT_EQ(md.find("| model |"), md.rfind("| model |")) << md;
  EXPECT_NE(md.find("| llama 1M Q4_0 | 1.00 MiB |"), std::string::npos) << md;
  EXPECT_NE(md.find("| qwen3 2M Q4_K | 2.00 MiB |"), std::string::npos) << md;
  const nlohmann::json j = nlohmann::json::parse(printed(BenchFormat::Json, {decode_result(), other}));
  EXPECT_EQ(j[1]["model_type"], "qwen3 2M Q4_K");
}

TEST(BenchReport, RawSamplesInJsonAndCsv) {
  const nlohmann::json j = nlohmann::json::parse(printed(BenchFormat::Json, {decode_result()}));
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["samples_ts"], (nlohmann::json{100.0, 50.0}));
  EXPECT_DOUBLE_EQ(j[0]["avg_ns"].get<double>(), 1.5e8);  // llama-bench's fields, same units
  EXPECT_EQ(j[0]["n_gen"], 10);
  EXPECT_EQ(j[0]["sha256"], "ab");
  const std::string jsonl = printed(BenchFormat::Jsonl, {decode_result(), decode_result()});
  EXPECT_EQ(std::count(jsonl.begin(), jsonl.end(), '\n'), 2);
  const std::string csv = printed(BenchFormat::Csv, {decode_result("said \"no\"")});
  EXPECT_EQ(csv.rfind("model_type,model_size,", 0), 0u) << csv;
  EXPECT_NE(csv.find("\"said \"\"no\"\"\""), std::string::npos) << csv;
}

// ---- the program ----

// stdout to stdout_path when given (run_command collects stderr with it otherwise).
test::CommandResult bench(const std::string& args, const std::string& stdout_path = "") {
  const std::string command = test::bin_dir() + "/r1pi-bench -m " + test::tiny_model_file(5) + " " + args;
  return test::run_command(stdout_path.empty() ? command : "(" + command + " > " + stdout_path + ")");
}

// Every combination is reported, none failed, and the ids of one test do not depend on the batch
// size or the thread count (the engine is bit-exact).
TEST(BenchCli, JsonHasEveryCombinationAndBitExactHashes) {
  const std::string path = test::scratch_dir("bench_cli") + "/out.json";
  const test::CommandResult r = bench("-p 16 -n 8 -pg 8,4 -d 0,16 -b 8,16 -t 1,2 -r 2 -o json", path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(test::read_file(path));
  ASSERT_EQ(j.size(), 2u * 2u * 2u * 3u);
  std::map<std::string, std::string> hash_of_test;
  for (const nlohmann::json& t : j) {
    EXPECT_EQ(t["error"], "") << t.dump();
    EXPECT_EQ(t["samples_ts"].size(), 2u);
    EXPECT_EQ(t["sha256"].get<std::string>().size(), 64u);
    const auto [it, fresh] = hash_of_test.emplace(t["test"], t["sha256"]);
    if (!fresh) {
      EXPECT_EQ(it->second, t["sha256"]) << t["test"] << " -t " << t["n_threads"] << " -b " << t["n_batch"];
    }
  }
  EXPECT_EQ(hash_of_test.size(), 6u);
}

// --spec 0,1: both tests run, with one hash (the program checks it too), the drafter's counts
// reported.
TEST(BenchCli, SpecOnAndOffGiveOneHash) {
  const std::string dir = test::scratch_dir("bench_cli_spec");
  const test::CommandResult r = test::run_command("(R1PI_CACHE_DIR=" + dir + " " + test::bin_dir() +
                                                  "/r1pi-bench -m " + test::tiny_model_file(5) +
                                                  " -p 0 -n 24 -t 1 -r 1 --spec 0,1 -o json > " + dir + "/out.json)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(test::read_file(dir + "/out.json"));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["spec"], false);
  EXPECT_EQ(j[1]["spec"], true);
  EXPECT_EQ(j[0]["spec_drafted"], 0);
  EXPECT_EQ(j[0]["sha256"], j[1]["sha256"]);
  EXPECT_EQ(j[1]["error"], "");
}

// llama-bench's habits: several -m in one table, -ctk as a list; each (model, cache type) has its
// own ids, the same in every repetition.
TEST(BenchCli, SeveralModelsAndCacheTypes) {
  const std::string dir = test::scratch_dir("bench_cli_models");
  const std::string second = test::make_model_file("bench_second", {.preset = "tiny", .seed = 7});
  const test::CommandResult r = test::run_command(
      "(" + test::bin_dir() + "/r1pi-bench -m " + test::tiny_model_file(5) + " -m " + second +
      " -p 0 -n 6 -t 1 -r 1 -ctk f32,f16 -o json > " + dir + "/out.json)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(test::read_file(dir + "/out.json"));
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[0]["type_k"], "f32");
  EXPECT_EQ(j[1]["type_k"], "f16");
  EXPECT_EQ(j[0]["model_size"], j[1]["model_size"]);
  EXPECT_NE(j[0]["sha256"], j[2]["sha256"]);  // another model's weights, other ids
  for (const nlohmann::json& t : j) EXPECT_EQ(t["error"], "") << t.dump();
  const test::CommandResult bad = bench("-ctk q4_0");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("give one or more of f32, f16, q8_0"), std::string::npos) << bad.output;
}

TEST(BenchCli, MarkdownTable) {
  const test::CommandResult r = bench("-p 8 -n 4 -t 1 -r 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| pp8 | "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| tg4 | "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("weights read per decode token"), std::string::npos) << r.output;
}

TEST(BenchCli, BadInputIsAnError) {
  for (const char* args : {"-t 0", "-p x", "-o yaml", "-p 8 -d 5 -b 4", "-p 0 -n 0", "-pg 8", "-r 0", "--spec 2"}) {
    const test::CommandResult r = bench(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("error: "), std::string::npos) << args << "\n" << r.output;
  }
}

}  // namespace
}  // namespace r1pi
