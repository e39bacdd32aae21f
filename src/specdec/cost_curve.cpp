#include "specdec/cost_curve.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/whole_file.h"

namespace r1pi {

CostCurve CostCurve::from_points(std::vector<std::pair<int, double>> points) {
  std::sort(points.begin(), points.end());
  if (points.empty() || points.front().first != 1)
    throw Error("a cost curve needs the cost of B = 1");
  for (size_t i = 0; i < points.size(); ++i) {
    if (!(points[i].second > 0) || !std::isfinite(points[i].second))
      throw Error("cost of B = " + std::to_string(points[i].first) + " must be a positive number");
    if (i > 0 && points[i].first == points[i - 1].first)
      throw Error("cost of B = " + std::to_string(points[i].first) + " given twice");
  }
  const double one = points.front().second;
  for (auto& p : points) p.second /= one;
  CostCurve c;
  c.points_ = std::move(points);
  return c;
}

CostCurve CostCurve::flat(int max_batch) { return from_points({{1, 1.0}, {max_batch, 1.0}}); }

CostCurve CostCurve::parse(const std::string& text, const std::string& where) {
  std::vector<std::pair<int, double>> points;
  std::istringstream in(text);
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::istringstream fields(line);
    int B = 0;
    double cost = 0;
    std::string rest;
    if (!(fields >> B >> cost) || (fields >> rest) || B < 1 || B > 4096)
      throw Error(where + ":" + std::to_string(line_no) + ": expected 'B cost' with B from 1 to 4096, got '" +
                  line + "'");
    points.emplace_back(B, cost);
  }
  try {
    return from_points(std::move(points));
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
}

CostCurve CostCurve::read(const std::string& path) {
  // /dev/zero or a FIFO would be read for ever: read_whole_file takes regular files only, and a
  // curve of at most 64 points is a few kilobytes, so a large file is not one.
  constexpr off_t kMaxBytes = 1 << 20;
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > kMaxBytes)
    throw Error(path + ": " + std::to_string(st.st_size) + " bytes is too large for a cost curve file (at most " +
                std::to_string(kMaxBytes) + ")");
  return parse(read_whole_file(path, "cost curve"), path);
}

// Through a temporary: another r1pi reading the cache at the same time never sees half a curve.
void CostCurve::write(const std::string& path) const {
  try {
    AtomicFile out(path);
    const std::string t = text();
    std::fwrite(t.data(), 1, t.size(), out.stream());
    out.commit();  // a short write shows here, in the stream's error flag
  } catch (const WriteError& e) {
    throw Error(path + ": cannot write the cost curve: " + std::strerror(e.error_number));
  }
}

double CostCurve::at(int B) const {
  if (B < 1 || B > max_batch()) throw Error("cost curve: B = " + std::to_string(B) + " outside 1.." +
                                            std::to_string(max_batch()));
  auto hi = std::lower_bound(points_.begin(), points_.end(), std::make_pair(B, -1.0));
  if (hi->first == B) return hi->second;
  auto lo = hi - 1;
  return lo->second + (hi->second - lo->second) * double(B - lo->first) / double(hi->first - lo->first);
}

std::string CostCurve::text() const {
  std::string s = "# r1pi speculative decoding: time of a B-token forward relative to B = 1\n";
  char line[64];
  for (const auto& [B, cost] : points_) {
    std::snprintf(line, sizeof line, "%d %.4f\n", B, cost);
    s += line;
  }
  return s;
}

std::string CostCurve::summary() const {
  std::string s;
  char item[48];
  for (const auto& [B, cost] : points_) {
    if (B == 1) continue;
    std::snprintf(item, sizeof item, "%sc(%d) %.2f", s.empty() ? "" : ", ", B, cost);
    s += item;
  }
  return s;
}

}  // namespace r1pi
