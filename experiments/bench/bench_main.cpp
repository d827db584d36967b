// main() of the benchmarks that have no reporter of their own (in place of BENCHMARK_MAIN).
#include "experiments/bench/bench_reporter.hpp"

int main(int argc, char** argv) { return meshsim::bench::run_benchmarks(argc, argv); }
