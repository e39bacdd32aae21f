#include "cluster/system_facts.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace r1pi {

namespace {

std::optional<std::string> first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::optional<double> number_in(const std::string& path) {
  const std::optional<std::string> line = first_line(path);
  if (!line) return std::nullopt;
  try {
    return std::stod(*line);
  } catch (...) {
    return std::nullopt;
  }
}

// "key : value" lines (cpuinfo, meminfo): the value of the first line whose key is `key`.
std::optional<std::string> field(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    if (name != key) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return std::nullopt;
}

std::optional<uint64_t> meminfo_bytes(const std::string& path, const std::string& key) {
  const std::optional<std::string> value = field(path, key);  // "123456 kB"
  if (!value) return std::nullopt;
  try {
    return uint64_t(std::stoull(*value)) * 1024;
  } catch (...) {
    return std::nullopt;
  }
}

// The CPU list format of sysfs ("0-3", "0,2-5").
int count_cpus(const std::string& list) {
  int n = 0;
  std::stringstream in(list);
  for (std::string range; std::getline(in, range, ',');) {
    const size_t dash = range.find('-');
    try {
      n += dash == std::string::npos ? 1 : std::stoi(range.substr(dash + 1)) - std::stoi(range.substr(0, dash)) + 1;
    } catch (...) {
    }
  }
  return n;
}

// Arm's part numbers of the cores on the boards r1pi is for.
std::string arm_core(const std::string& part) {
  if (part == "0xd0b") return "Cortex-A76";
  if (part == "0xd08") return "Cortex-A72";
  if (part == "0xd03") return "Cortex-A53";
  if (part == "0xd05") return "Cortex-A55";
  return "Arm core " + part;
}

std::optional<uint32_t> vcgencmd_throttled() {
  FILE* pipe = popen("vcgencmd get_throttled 2>/dev/null", "r");
  if (!pipe) return std::nullopt;
  char line[128] = "";
  const bool got = std::fgets(line, sizeof line, pipe) != nullptr;
  pclose(pipe);
  unsigned value = 0;
  if (!got || std::sscanf(line, "throttled=%x", &value) != 1) return std::nullopt;
  return uint32_t(value);
}

}  // namespace

SystemFacts read_system_facts(const std::string& root) {
  const std::string proc = root + "/proc", cpu = root + "/sys/devices/system/cpu";
  SystemFacts f;
  if (auto name = field(proc + "/cpuinfo", "model name")) f.cpu_model = *name;
  else if (auto board = field(proc + "/cpuinfo", "Model")) f.cpu_model = *board;
  else if (auto part = field(proc + "/cpuinfo", "CPU part")) f.cpu_model = arm_core(*part);
  if (auto online = first_line(cpu + "/online")) f.cpus_online = count_cpus(*online);
  if (auto khz = number_in(cpu + "/cpu0/cpufreq/scaling_cur_freq")) f.cur_mhz = *khz / 1000;
  if (auto khz = number_in(cpu + "/cpu0/cpufreq/cpuinfo_max_freq")) f.max_mhz = *khz / 1000;
  f.governor = first_line(cpu + "/cpu0/cpufreq/scaling_governor");
  std::error_code ec;
  for (const auto& zone : std::filesystem::directory_iterator(root + "/sys/class/thermal", ec)) {
    if (zone.path().filename().string().rfind("thermal_zone", 0) != 0) continue;
    if (auto milli = number_in(zone.path().string() + "/temp"))
      f.temperature_c = std::max(f.temperature_c.value_or(-273.0), *milli / 1000);
  }
  f.mem_available = meminfo_bytes(proc + "/meminfo", "MemAvailable");
  const uint64_t swap_total = meminfo_bytes(proc + "/meminfo", "SwapTotal").value_or(0);
  const uint64_t swap_free = meminfo_bytes(proc + "/meminfo", "SwapFree").value_or(swap_total);
  f.swap_used = swap_total > swap_free ? swap_total - swap_free : 0;
  f.throttled = vcgencmd_throttled();
  return f;
}

}  // namespace r1pi
