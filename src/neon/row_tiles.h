// The row loop the value kernels share across backends: rows in tiles of four, then one tile of the
// one to three left, each tile size a compile-time constant so that its accumulators stay in
// registers.
#pragma once

namespace r1pi {

// Calls rows.template operator()<R>(r, args...) for r = 0, 4, 8, ... (R = 4), then once for the
// rest (R = 3, 2 or 1), covering rows [0, n).
template <class Rows, class... Args>
inline void for_row_tiles(int n, Rows&& rows, Args... args) {
  int r = 0;
  for (; r + 4 <= n; r += 4) rows.template operator()<4>(r, args...);
  switch (n - r) {
    case 3: rows.template operator()<3>(r, args...); break;
    case 2: rows.template operator()<2>(r, args...); break;
    case 1: rows.template operator()<1>(r, args...); break;
    default: break;
  }
}

}  // namespace r1pi
