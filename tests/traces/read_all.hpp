#pragma once

// Reads a request source to its end, for the trace tests.

#include <string>
#include <vector>

#include "traces/trace_request.hpp"

namespace meshsim::traces::testing {

// The requests read, or the error message that stopped the reading.
struct ReadAll {
  std::vector<TraceRequest> requests;
  std::string error;
};

inline ReadAll read_all(RequestSource& source) {
  ReadAll out;
  for (;;) {
    auto next = source.next();
    if (!next) {
      out.error = next.error().message;
      return out;
    }
    if (!next->has_value()) return out;
    out.requests.push_back(**next);
  }
}

}  // namespace meshsim::traces::testing
