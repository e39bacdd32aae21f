#include "tools/hub/hub_choice.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/error.h"

namespace r1pi {
namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

bool iequals(const std::string& a, const std::string& b) { return upper(a) == upper(b); }

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

bool is_hex(const std::string& s, size_t digits) {
  return s.size() == digits && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c); });
}

// A GGUF model file: *.gguf, but not a multimodal projector (mmproj-*.gguf), which goes beside a
// model and is no model itself (llama.cpp's -hf keeps them apart too).
bool is_model_gguf(const std::string& path) {
  const std::string name = upper(base_name(path));
  return name.size() > 5 && name.ends_with(".GGUF") && !name.starts_with("MMPROJ");
}

// llama.cpp's gguf-split names its parts PREFIX-%05d-of-%05d.gguf.
struct GgufName {
  std::string stem;  // without ".gguf" and the split suffix
  int index = 0;     // 1-based part number; 0: not split
  int count = 0;
};

GgufName gguf_name(const std::string& path) {
  static const std::regex split_re(R"(^(.*)-(\d{5})-of-(\d{5})\.gguf$)", std::regex::icase);
  const std::string name = base_name(path);
  std::smatch m;
  if (std::regex_match(name, m, split_re)) {
    const int index = std::stoi(m[2].str()), count = std::stoi(m[3].str());
    if (index >= 1 && index <= count) return {m[1].str(), index, count};
  }
  return {name.substr(0, name.size() - 5)};
}

std::vector<std::string> tokens(const std::string& s) {
  std::vector<std::string> out;
  std::string current;
  for (char c : s) {
    if (c == '-' || c == '.') {
      if (!current.empty()) out.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

bool first_token_matches(const std::string& token, const std::string& quant) {
  if (iequals(token, quant)) return true;
  return token.size() > quant.size() + 1 && token[token.size() - quant.size() - 1] == '_' &&
         iequals(token.substr(token.size() - quant.size()), quant);
}

bool stem_names_quant(const std::string& stem, const std::string& quant) {
  const std::vector<std::string> name = tokens(stem), wanted = tokens(quant);
  if (wanted.empty() || wanted.size() > name.size()) return false;
  for (size_t i = 0; i + wanted.size() <= name.size(); ++i) {
    bool match = first_token_matches(name[i], wanted[0]);
    for (size_t j = 1; match && j < wanted.size(); ++j) match = iequals(name[i + j], wanted[j]);
    if (match) return true;
  }
  return false;
}

// A quantisation token as llama.cpp's file names carry them: F32, F16, BF16, Q8_0, Q4_K_M,
// IQ2_XXS, TQ1_0, MXFP4; within a token it may follow a '_' ("model_Q8_0").
std::string quant_in_token(const std::string& token) {
  static const std::regex quant_re(R"(^(I?Q[1-8](_[0-9A-Z]+)*|TQ[12]_0|BF16|F16|F32|MXFP4(_MOE)?)$)",
                                   std::regex::icase);
  for (size_t from = 0;;) {
    const std::string tail = token.substr(from);
    if (std::regex_match(tail, quant_re)) return upper(tail);
    const size_t underscore = token.find('_', from);
    if (underscore == std::string::npos) return "";
    from = underscore + 1;
  }
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// One model: a single .gguf, or a split GGUF's parts (a null entry: a part the listing lacks).
struct GgufModel {
  std::string key, stem;  // key: names the model in messages, one per model
  std::vector<const HubFile*> parts;
};

std::vector<GgufModel> gguf_models(const std::vector<HubFile>& files) {
  std::vector<GgufModel> models;
  for (const HubFile& f : files) {
    if (!is_model_gguf(f.path)) continue;
    const GgufName name = gguf_name(f.path);
    const std::string dir = f.path.substr(0, f.path.size() - base_name(f.path).size());
    // What a user reads: the path, or a split GGUF's stem and its number of parts.
    const std::string key =
        name.count ? dir + name.stem + " (" + std::to_string(name.count) + " parts)" : f.path;
    auto it = std::find_if(models.begin(), models.end(), [&](const GgufModel& m) { return m.key == key; });
    if (it == models.end()) {
      models.push_back({key, name.stem, std::vector<const HubFile*>(std::max(name.count, 1), nullptr)});
      it = models.end() - 1;
    }
    it->parts[name.count ? name.index - 1 : 0] = &f;
  }
  return models;
}

}  // namespace

std::vector<HubFile> parse_hub_listing(const std::string& json_text, const std::string& where) {
  const nlohmann::json listing = nlohmann::json::parse(json_text, nullptr, false);
  if (!listing.is_array()) throw Error(where + ": the reply is not a JSON array of files");
  std::vector<HubFile> files;
  for (const nlohmann::json& entry : listing) {
    if (!entry.is_object() || !entry.contains("type") || !entry["type"].is_string())
      throw Error(where + ": a listing entry without a type");
    if (entry["type"] != "file") continue;  // "directory": its files are listed too (recursive)
    if (!entry.contains("path") || !entry["path"].is_string() || !entry.contains("size") ||
        !entry["size"].is_number_unsigned())
      throw Error(where + ": a file entry without a path or a size");
    HubFile f;
    f.path = entry["path"];
    f.size = entry["size"];
    if (entry.contains("lfs") && entry["lfs"].is_object() && entry["lfs"].contains("oid") &&
        entry["lfs"]["oid"].is_string() && is_hex(entry["lfs"]["oid"], 64)) {
      f.sha256 = entry["lfs"]["oid"];
    } else if (entry.contains("oid") && entry["oid"].is_string() && is_hex(entry["oid"], 40)) {
      f.git_oid = entry["oid"];
    }
    files.push_back(f);
  }
  return files;
}

bool gguf_names_quant(const std::string& file_name, const std::string& quant) {
  return stem_names_quant(gguf_name(file_name).stem, quant);
}

std::vector<std::string> gguf_quants(const std::vector<HubFile>& files) {
  std::vector<std::string> quants;
  for (const GgufModel& m : gguf_models(files))
    for (const std::string& token : tokens(m.stem)) {
      const std::string q = quant_in_token(token);
      if (!q.empty() && std::find(quants.begin(), quants.end(), q) == quants.end()) quants.push_back(q);
    }
  return quants;
}

GgufChoice choose_gguf(const std::vector<HubFile>& files, const std::string& repo, const std::string& quant) {
  const std::vector<GgufModel> models = gguf_models(files);
  if (models.empty()) throw Error(repo + " has no .gguf model file");
  const std::vector<std::string> wanted =
      quant.empty() ? std::vector<std::string>{"Q4_K_M", "Q4_0"} : std::vector<std::string>{quant};
  for (const std::string& w : wanted) {
    std::vector<const GgufModel*> matches;
    for (const GgufModel& m : models)
      if (stem_names_quant(m.stem, w)) matches.push_back(&m);
    if (matches.empty()) continue;
    if (matches.size() > 1) {
      std::vector<std::string> names;
      for (const GgufModel* m : matches) names.push_back(m->key);
      throw Error(repo + ": several .gguf files name " + w + ": " + joined(names) +
                  " (give more of the file's name after ':')");
    }
    GgufChoice choice{upper(w), {}};
    for (size_t i = 0; i < matches[0]->parts.size(); ++i) {
      if (!matches[0]->parts[i])
        throw Error(repo + ": the split GGUF " + matches[0]->stem + " lacks part " + std::to_string(i + 1) +
                    " of " + std::to_string(matches[0]->parts.size()));
      choice.parts.push_back(*matches[0]->parts[i]);
    }
    return choice;
  }
  std::vector<std::string> available = gguf_quants(files);
  if (available.empty())
    for (const GgufModel& m : models) available.push_back(m.key);
  throw Error(repo + ": no .gguf file names " + (quant.empty() ? "Q4_K_M or Q4_0 (the default)" : quant) +
              "; available: " + joined(available) + " (pull one with " + repo + ":QUANT)");
}

}  // namespace r1pi
