#include "experiments/bench/bench_reporter.hpp"

#include <unistd.h>

#include <sstream>
#include <string>
#include <string_view>

namespace meshsim::bench {

ConsoleReporter::ConsoleReporter() : benchmark::ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Color : OO_None) {}

bool ConsoleReporter::ReportContext(const Context& context) {
  std::ostream& err = GetErrorStream();
  std::ostringstream captured;
  SetErrorStream(&captured);
  const bool ok = benchmark::ConsoleReporter::ReportContext(context);
  SetErrorStream(&err);
  std::istringstream lines(captured.str());
  constexpr std::string_view kLibraryDebug = "***WARNING*** Library was built as DEBUG";
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(kLibraryDebug, 0) != 0) {
      err << line << '\n';
      continue;
    }
#ifdef NDEBUG
    err << "note: libbenchmark (Debian's) was built with its own assertions; meshsim's timed code is built "
           "Release (NDEBUG)\n";
#else
    err << "***WARNING*** meshsim was built without NDEBUG (not Release): its timings are not representative\n";
#endif
  }
  return ok;
}

int run_benchmarks(int argc, char** argv, benchmark::BenchmarkReporter* console) {
  // Another --benchmark_format gets the library's own reporter.
  bool console_format = true;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.rfind("--benchmark_format=", 0) == 0 && arg != "--benchmark_format=console") console_format = false;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  ConsoleReporter fallback;
  if (console_format) {
    benchmark::RunSpecifiedBenchmarks(console != nullptr ? console : &fallback);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace meshsim::bench
