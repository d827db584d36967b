#pragma once

#include <stdexcept>
#include <string>

// MESHSIM_CHECK guards invariants and API preconditions (a ledger below zero, an event
// scheduled in the past, a run started from inside a handler). A broken invariant is a
// programming error, not bad input: it throws std::logic_error with file:line, which
// `main` reports once. Input errors are returned as values instead (see expected.hpp).
namespace meshsim {

// A value derived from the input that leaves the range the simulation represents, found
// during a run (a performance model that prices an iteration at years, a clock pushed
// past SimTime::kMaxSeconds), or a workload that fails part-way through a run driven in
// steps (an RL episode). Unlike a broken invariant it is the input's fault: the command
// line reports it as bad input (exit 2).
struct RangeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace meshsim

#define MESHSIM_CHECK(condition, message)                                              \
  do {                                                                                 \
    if (!(condition)) {                                                                \
      throw std::logic_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                             ": check failed: " #condition ": " + (message));          \
    }                                                                                  \
  } while (false)
