// What a board says about itself in /proc and /sys (and, on a Raspberry Pi, vcgencmd): the facts
// r1pi-cluster check judges. Read under a root folder, "/" on a board; a test points it at a fake
// tree to play a board with another governor, less memory or a hot CPU.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace r1pi {

struct SystemFacts {
  std::string cpu_model;                 // "model name", else the board ("Model"), else the core ("CPU part")
  int cpus_online = 0;                   // devices/system/cpu/online
  std::optional<double> cur_mhz;         // cpu0's cpufreq: scaling_cur_freq
  std::optional<double> max_mhz;         //   and cpuinfo_max_freq
  std::optional<std::string> governor;   //   and scaling_governor (none: no cpufreq, a VM or a fixed clock)
  std::optional<double> temperature_c;   // the hottest thermal zone
  std::optional<uint64_t> mem_available;  // /proc/meminfo, bytes
  uint64_t swap_used = 0;                //   SwapTotal - SwapFree, bytes
  std::optional<uint32_t> throttled;     // `vcgencmd get_throttled` (a Raspberry Pi's firmware), its bits
};

// root: the folder that holds proc/ and sys/. vcgencmd is looked for on PATH.
SystemFacts read_system_facts(const std::string& root);

}  // namespace r1pi
