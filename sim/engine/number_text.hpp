#pragma once

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

}  // namespace meshsim
