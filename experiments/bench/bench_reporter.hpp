#pragma once

// The benchmarks' console output. Debian's libbenchmark is built with its own assertions
// on, so it prints "***WARNING*** Library was built as DEBUG. Timings may be affected."
// about itself on every run; what is timed here is meshsim's code, built Release. This
// reporter says so in place of that line, and warns only when meshsim itself was built
// without NDEBUG.
#include <benchmark/benchmark.h>

namespace meshsim::bench {

class ConsoleReporter : public benchmark::ConsoleReporter {
 public:
  // In colour on a terminal only, as the library's own console reporter.
  ConsoleReporter();
  bool ReportContext(const Context& context) override;
};

// Initialize, run with ConsoleReporter (or the reporter --benchmark_format names), shut down.
int run_benchmarks(int argc, char** argv, benchmark::BenchmarkReporter* console = nullptr);

}  // namespace meshsim::bench
