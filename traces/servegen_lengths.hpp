#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/engine/expected.hpp"

namespace meshsim::traces {

// An empirical distribution of token counts: the counts in increasing order and their
// cumulative probabilities (the last is 1).
struct EmpiricalLengths {
  std::vector<std::uint32_t> tokens;
  std::vector<double> cumulative;

  bool empty() const { return tokens.empty(); }
  // The count at `u` in [0, 1) of the inverse CDF (at least 1 token).
  std::uint32_t sample(double u) const;
};

// ServeGen's text of a Python dict {tokens: probability, ...} ("{}": empty). Probabilities
// are normalised to sum to 1; a count may appear once; counts of 0 become 1 token (a
// request holds at least one). The error says what was expected where.
Expected<EmpiricalLengths> parse_length_dict(std::string_view text);

// The mixture of `parts` (each weighted; empty parts and weights <= 0 left out).
EmpiricalLengths mixture(const std::vector<std::pair<const EmpiricalLengths*, double>>& parts);

// One client's request lengths over time (ServeGen's chunk-N-dataset.json): per window
// (keys: window starts in seconds, on the trace's time axis) the empirical distributions
// of input (prompt) and output tokens; a window may have none.
struct ClientLengths {
  std::vector<double> window_start_s;  // increasing
  std::vector<EmpiricalLengths> input, output;

  // The window in force at `t_s` (the last starting at or before it) when it has lengths,
  // else the nearest window in time that has; -1 when no window has any.
  int window_at(double t_s) const;
};

// Reads a chunk-N-dataset.json; errors name the file, the window and the key.
Expected<ClientLengths> read_client_lengths(const std::string& path);

}  // namespace meshsim::traces
