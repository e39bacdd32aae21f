#include "tools/hub/hub_pull.h"

#include <cstdio>
#include <filesystem>
#include <regex>

#include "tools/hub/hub_choice.h"
#include "tools/hub/hub_client.h"
#include "tools/hub/hub_download.h"

namespace r1pi {
namespace fs = std::filesystem;
namespace {

constexpr int kMaxListingPages = 10000;  // the Hub pages listings by 1000 files: a bound, not a limit

struct RepoSpec {
  std::string repo, quant;
};

RepoSpec parse_spec(const std::string& spec) {
  // Repository names as the Hub allows them: OWNER/NAME (or a legacy NAME alone), letters, digits,
  // '-', '_', '.'; checked here as they go into URLs unencoded.
  static const std::regex repo_re(R"(^([A-Za-z0-9][A-Za-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9._-]*$)");
  const size_t colon = spec.rfind(':');
  RepoSpec r{spec.substr(0, colon), colon == std::string::npos ? "" : spec.substr(colon + 1)};
  if (!std::regex_match(r.repo, repo_re) || r.repo.find("..") != std::string::npos)
    throw Error("not a Hugging Face repository: " + spec +
                " (OWNER/NAME[:QUANT], e.g. bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M)");
  if (colon != std::string::npos && r.quant.empty()) throw Error(spec + ": no quantisation after ':'");
  return r;
}

// The next page of a listing, from the Link header: <URL>; rel="next".
std::string next_page(const std::string& link) {
  static const std::regex re(R"(<([^>]+)>\s*;\s*rel="?next"?)");
  std::smatch m;
  return std::regex_search(link, m, re) ? m[1].str() : "";
}

std::vector<HubFile> list_files(const HubClient& hub, const std::string& repo) {
  const std::string what = "repository " + repo;
  // recursive: the files in folders too (split GGUFs often sit in a folder per quantisation).
  std::string page = "/api/models/" + repo + "/tree/main?recursive=true";
  std::vector<HubFile> files;
  for (int pages = 0; !page.empty(); ++pages) {
    if (pages == kMaxListingPages) throw Error(what + ": the listing does not end");
    const HubResponse reply = hub.get(page);
    if (reply.status != 200) throw hub.status_error(reply, what);
    const std::vector<HubFile> more = parse_hub_listing(reply.body, "the listing of " + repo + " at " + hub.endpoint());
    files.insert(files.end(), more.begin(), more.end());
    page = next_page(reply.header("link"));
  }
  return files;
}

}  // namespace

std::vector<std::string> pull_model(const PullOptions& options) {
  const RepoSpec spec = parse_spec(options.spec);
  const HubClient hub = HubClient::from_environment();
  const GgufChoice choice = choose_gguf(list_files(hub, spec.repo), spec.repo, spec.quant);
  uint64_t bytes = 0;
  for (const HubFile& f : choice.parts) bytes += f.size;
  std::fprintf(stderr, "pull: %s %s from %s: %zu file%s, %.1f MB\n", spec.repo.c_str(), choice.quant.c_str(),
               hub.endpoint().c_str(), choice.parts.size(), choice.parts.size() == 1 ? "" : "s", bytes / 1e6);
  fs::create_directories(options.out_dir);
  std::vector<std::string> paths;
  for (const HubFile& f : choice.parts) {
    // Into the folder by its name alone: a split GGUF's parts must lie side by side to load.
    const fs::path dest = fs::path(options.out_dir) / fs::path(f.path).filename();
    download_hub_file(hub, "/" + spec.repo + "/resolve/main/" + hub_url_path(f.path), f, dest, options.progress);
    paths.push_back(dest.string());
  }
  return paths;
}

}  // namespace r1pi
