#pragma once

#include <stdexcept>
#include <string>

// MESHSIM_CHECK guards invariants and API preconditions (a ledger below zero, an event
// scheduled in the past, a run started from inside a handler). A broken invariant is a
// programming error, not bad input: it throws std::logic_error with file:line, which
// `main` reports once. Input errors are returned as values instead (see expected.hpp).
#define MESHSIM_CHECK(condition, message)                                              \
  do {                                                                                 \
    if (!(condition)) {                                                                \
      throw std::logic_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                             ": check failed: " #condition ": " + (message));          \
    }                                                                                  \
  } while (false)
