// --api-key-file: the key without the spaces and line ends around it (they used to be kept, all
// newlines but one, so that no client could match), a blank file or a second line refused.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "test_support.h"
#include "tools/model_maker.h"

namespace r1pi {
namespace {

const std::string& model() {
  static const std::string path = test::make_model_file("api-key-file", {.preset = "tiny", .seed = 4});
  return path;
}

std::string key_file(const std::string& name, const std::string& content) {
  const std::string path = test::scratch_dir("api-key-file-" + name) + "/key.txt";
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// Starts `r1pi --serve --port 0 --api-key-file KEYFILE` (loopback), asks /v1/models with the right
// and a wrong key, stops the server; prints "right CODE wrong CODE".
test::CommandResult serve_and_ask(const std::string& key_path) {
  const std::string dir = test::scratch_dir("api-key-file-server");
  const std::string script = dir + "/serve.sh";
  std::ofstream(script) << R"(set -u
log=$1/server.log
: >"$log"
"$2" -m "$3" --serve --port 0 -t 1 --api-key-file "$4" >"$log" 2>&1 &
pid=$!
port=""
for _ in $(seq 1 600); do
  port=$(sed -n 's|^serve: listening on http://[^:]*:\([0-9]*\) .*|\1|p' "$log")
  [ -n "$port" ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
if [ -z "$port" ]; then cat "$log"; kill -9 $pid 2>/dev/null; wait $pid; exit 2; fi
ask() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" "http://127.0.0.1:$port/v1/models"; }
right=$(ask secret-key)
wrong=$(ask other-key)
kill -TERM $pid
wait $pid
echo "right $right wrong $wrong"
)";
  return test::run_command("bash " + script + " " + dir + " " + test::bin_dir() + "/r1pi " + model() + " " + key_path);
}

TEST(ApiKeyFile, SpacesAndLineEndsAroundTheKeyAreDropped) {
  const test::CommandResult r = serve_and_ask(key_file("padded", "  \tsecret-key \r\n\n\n"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("right 200 wrong 401"), std::string::npos) << r.output;
}

TEST(ApiKeyFile, ABlankFileOrASecondLineIsRefused) {
  // timeout: a server that started after all must not hang the test.
  const std::string r1pi = "timeout 60 " + test::bin_dir() + "/r1pi -m " + model() + " --serve --port 0 -t 1 --api-key-file ";
  const std::string blank = key_file("blank", " \n\t\n");
  test::CommandResult r = test::run_command(r1pi + blank);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error: " + blank + ": the API key file is empty"), std::string::npos) << r.output;
  const std::string two = key_file("two-lines", "first-key\nsecond-key\n");
  r = test::run_command(r1pi + two);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error: " + two + ": the API key file holds more than one line"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace r1pi
