// --rank-timeout S ends a job whose rank stopped after about S seconds. It used to take S and then
// 5 s more (the ranks were asked whether they were there only after the timeout): 10 s for 5.
// Needs an MPI build and mpirun; skipped otherwise.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>

#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

constexpr int kTimeout = 6;

bool have_mpi() {
  const test::CommandResult v = test::run_command(test::bin_dir() + "/r1pi --version");
  return v.output.find("MPI: none") == std::string::npos && test::run_command("command -v mpirun").exit_code == 0;
}

TEST(RankTimeout, AStoppedRankEndsTheJobAfterAboutTheTimeout) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build, or no mpirun";
  MakeOptions o;
  o.preset = "tiny";
  o.n_ctx = 16384;
  const std::string model = test::make_model_file("rank-timeout", o);
  const std::string dir = test::scratch_dir("rank-timeout");
  const std::string script = dir + "/job.sh";
  // Two ranks generate for long (many seconds); once the banner is out, rank 1 (its pid written by
  // the sh that execs it) is stopped, as a frozen board would be, and rank 0 must end the job.
  std::ofstream(script) << R"(set -u
dir=$1 mpirun=$2 r1pi=$3 model=$4 timeout=$5
log=$dir/job.log pidfile=$dir/rank1.pid
: >"$log"
rm -f "$pidfile"
run=(-m "$model" -p hi -n 16000 -c 16384 --ignore-eos --temp 0 -t 1 --rank-timeout "$timeout")
"$mpirun" -np 1 -- "$r1pi" "${run[@]}" : -np 1 sh -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$r1pi" "${run[@]}" \
  >"$log" 2>&1 &
job=$!
for _ in $(seq 1 600); do grep -q '^run: ' "$log" && [ -s "$pidfile" ] && break; kill -0 $job 2>/dev/null || break; sleep 0.1; done
if ! grep -q '^run: ' "$log" || [ ! -s "$pidfile" ]; then echo "the job did not start"; cat "$log"; kill -9 $job; wait $job; exit 2; fi
rank1=$(cat "$pidfile")
kill -STOP "$rank1"
for _ in $(seq 1 600); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
kill -0 $job 2>/dev/null && { echo "the job did not end within 60 s"; kill -9 "$rank1" $job; }
wait $job
echo "status $?"
kill -9 "$rank1" 2>/dev/null
cat "$log"
)";
  const test::CommandResult r =
      test::run_command("bash " + script + " " + dir + " " + std::string(R1PI_TEST_DATA) + "/../../scripts/mpirun " +
                        test::bin_dir() + "/r1pi " + model + " " + std::to_string(kTimeout));
  ASSERT_EQ(r.output.find("the job did not start"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("status 0\n"), std::string::npos) << r.output;
  // The waiting rank measures its own wait: "rank 1 silent for N s (--rank-timeout 6)".
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(rank 1 silent for (\d+) s \(--rank-timeout 6\))")))
      << r.output;
  const int waited = std::stoi(m[1].str());
  EXPECT_GE(waited, kTimeout - 1) << r.output;
  EXPECT_LE(waited, kTimeout + 2) << "the timeout fired late\n" << r.output;  // it took 11 before
}

}  // namespace
}  // namespace r1pi
