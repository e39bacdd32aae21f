// c(B): the time of one forward pass of B tokens (with the picks of all B positions) relative to
// B = 1, for one model, rank count, thread count and backend. Measured at start-up or read from a
// file of "B cost" lines ('#' starts a comment); between measured B the curve is linear.
#pragma once
#include <string>
#include <vector>

namespace r1pi {

class CostCurve {
 public:
  CostCurve() = default;
  // points: (B, cost) with B = 1 first; costs are divided by the cost of B = 1.
  static CostCurve from_points(std::vector<std::pair<int, double>> points);
  // Every B up to max_batch costs as much as B = 1 (what a draft costs when it costs nothing).
  static CostCurve flat(int max_batch);
  static CostCurve parse(const std::string& text, const std::string& where);
  static CostCurve read(const std::string& path);
  void write(const std::string& path) const;

  bool empty() const { return points_.empty(); }
  int max_batch() const { return points_.empty() ? 0 : points_.back().first; }
  double at(int B) const;  // B in 1..max_batch()
  std::string text() const;     // the file format
  std::string summary() const;  // one line: "c(2) 1.08, c(4) 1.50, ..."

 private:
  std::vector<std::pair<int, double>> points_;
};

}  // namespace r1pi
