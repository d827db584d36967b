#pragma once

#include "traces/trace_request.hpp"

// Reads a source to its end or first error; the bound keeps a fuzz input from running long.
inline void drain(meshsim::traces::RequestSource& source) {
  for (int i = 0; i < 100000; ++i) {
    auto next = source.next();
    if (!next || !next->has_value()) return;
  }
}
