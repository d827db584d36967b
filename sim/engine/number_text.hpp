#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace meshsim {

// A number for a message: 6 significant digits, exponent when large or small ("1e+13",
// "1e-300", "0.25"), where std::to_string would print "10000000000000.000000" or "0.000000".
inline std::string number_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

// A share as a percentage with `decimals` decimals, rounded down so that 99.985% never
// reads as 100.00% ("99.98%"); exactly 1 reads "100.00%".
inline std::string percent_text(double share, int decimals = 2) {
  double scale = 1.0;
  for (int i = 0; i < decimals; ++i) scale *= 10.0;
  // The tiny nudge keeps shares such as 0.29 (28.999...% in binary) at their written value.
  double floored = std::floor(share * 100.0 * scale + 1e-7) / scale;
  if (share < 1.0) floored = std::min(floored, 100.0 - 1.0 / scale);  // the nudge must not reach 100
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*f%%", decimals, floored);
  return buffer;
}

}  // namespace meshsim
