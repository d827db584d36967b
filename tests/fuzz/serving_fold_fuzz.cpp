// Draws a serving case (deployment and workload, tests/sim/serving_cases.hpp, half the
// time with random scaling) from the fuzzer's bytes, replays it folded and unfolded, and aborts when a request is left in
// flight or the two runs report anything differently.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/sim/serving_cases.hpp"

namespace {

// Choices read from the input, a byte or two at a time; zeros once it runs out.
struct ByteChoice {
  const std::uint8_t* data;
  std::size_t size;
  std::uint64_t pick(std::uint64_t bound) {
    std::uint64_t value = 0;
    for (std::uint64_t range = 1; range < bound && size > 0; range <<= 8) {
      value = (value << 8) | *data++;
      --size;
    }
    return value % bound;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace meshsim::cluster::testing;
  ByteChoice choice{data, size};
  ServingCase c = draw_serving_case(choice, 60);
  if (choice.pick(2) == 1) draw_scaling(choice, c);
  const RunResult unfolded = run_case(c, false);
  const RunResult folded = run_case(c, true);
  if (unfolded.counts.in_flight != 0 || !same_outputs(folded, unfolded) || folded.log != unfolded.log) {
    std::fprintf(stderr, "serving_fold_fuzz: %s: %s\n", c.description.c_str(),
                 unfolded.counts.in_flight != 0 ? "requests left in flight" : "folded and unfolded runs differ");
    std::abort();
  }
  return 0;
}
