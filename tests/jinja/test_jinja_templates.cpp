// Every case render_reference.py wrote (a chat template, its variables, and what Python's jinja2
// gave): r1pi's engine must give the same bytes, or raise_exception's message as RaisedError, or
// fail with Error where Python failed otherwise.
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>

#include "jinja/jinja.h"

namespace {

using nlohmann::ordered_json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Where two renderings part, with some context, for the failure message.
std::string first_difference(const std::string& want, const std::string& got) {
  size_t k = 0;
  while (k < want.size() && k < got.size() && want[k] == got[k]) ++k;
  size_t from = k > 60 ? k - 60 : 0;
  return "first difference at byte " + std::to_string(k) + "\n  python: " + ordered_json(want.substr(from, 160)).dump() +
         "\n  r1pi:   " + ordered_json(got.substr(from, 160)).dump();
}

TEST(JinjaTemplates, RendersAsPythonJinja2) {
  const char* path = std::getenv("R1PI_JINJA_CASES");
  ASSERT_NE(path, nullptr) << "R1PI_JINJA_CASES is not set (ctest sets it)";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "no reference cases at " << path << ": render_reference.py writes them (ctest -R jinja)";
  ordered_json reference = ordered_json::parse(in);
  r1pi::jinja::RenderOptions options;
  options.now = reference.at("now").get<std::time_t>();

  std::map<std::string, std::unique_ptr<r1pi::jinja::Template>> templates;
  std::map<std::string, int> compared_per_template;
  int compared = 0, failures = 0;
  for (const auto& c : reference.at("cases")) {
    const std::string file = c.at("template").get<std::string>(), name = c.at("name").get<std::string>();
    auto& tmpl = templates[file];
    if (!tmpl) {
      try {
        tmpl = std::make_unique<r1pi::jinja::Template>(read_file(file));
      } catch (const std::exception& e) {
        ADD_FAILURE() << file << " does not parse: " << e.what();
        return;
      }
    }
    std::string failure;
    try {
      std::string got = tmpl->render(c.at("variables"), options);
      if (c.contains("expected")) {
        const std::string want = c.at("expected").get<std::string>();
        if (got != want) failure = first_difference(want, got);
      } else {
        failure = "python failed (" + (c.contains("raised") ? c.at("raised") : c.at("error")).get<std::string>() +
                  ") but r1pi rendered " + std::to_string(got.size()) + " bytes";
      }
    } catch (const r1pi::jinja::RaisedError& e) {
      if (!c.contains("raised")) failure = std::string("r1pi raised: ") + e.what();
      else if (c.at("raised").get<std::string>() != e.what())
        failure = std::string("raised ") + ordered_json(e.what()).dump() + ", python raised " + c.at("raised").dump();
    } catch (const r1pi::jinja::Error& e) {
      if (!c.contains("error")) failure = std::string("r1pi failed: ") + e.what();
    }
    ++compared;
    ++compared_per_template[file];
    if (!failure.empty() && ++failures <= 30) ADD_FAILURE() << name << ": " << failure;
  }
  std::printf("compared %d cases over %zu templates, %d differ\n", compared, templates.size(), failures);
  EXPECT_EQ(failures, 0);
  // Not a vacuous pass: the 18 templates of templates/, 30 cases or more each.
  EXPECT_GE(compared, 18 * 30);
  EXPECT_GE(templates.size(), 18u);
  for (auto& [file, n] : compared_per_template) EXPECT_GE(n, 30) << file;
}

}  // namespace
