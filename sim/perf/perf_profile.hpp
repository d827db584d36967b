#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/perf/hardware.hpp"
#include "sim/perf/perf_model.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::cluster {

// One measurement of a profile CSV in SplitwiseSim's perf_model.csv layout (read by
// configs/profile_csv.hpp: the simulation opens no file): a prefill of
// batch_size prompts of prompt_size tokens, then token_size decode iterations; times in ms
// (token_time is the mean decode iteration).
struct ProfileRow {
  std::string model;
  std::string hardware;
  std::uint32_t tensor_parallel = 0;
  std::uint32_t prompt_size = 0;
  std::uint32_t batch_size = 0;
  std::uint32_t token_size = 0;
  double prompt_time_ms = 0.0;
  double token_time_ms = 0.0;

  PrefillWork prefill_work() const;
  // The mean decode iteration of the row: every sequence at its mean context length.
  DecodeWork decode_work() const;
};

// The rows of one deployment.
std::vector<ProfileRow> select_rows(const std::vector<ProfileRow>& rows, const std::string& model,
                                    const std::string& hardware, std::uint32_t tensor_parallel);

// Rows that contradict the rest of their deployment: a prefill of more prompts (same
// prompt and token sizes) measured faster than a prefill of fewer. Such a row is a
// failed or truncated run (e.g. llama2-70b at TP 2 with 64 prompts, out of memory), not
// a property of the hardware. Returns the rows kept; `dropped` receives the others.
std::vector<ProfileRow> drop_non_monotonic(const std::vector<ProfileRow>& rows, std::vector<ProfileRow>* dropped);

// SplitwiseSim's table for one deployment: median prompt_time and token_time per batch
// tokens (prompt_size * batch_size).
Expected<TablePerfModel> make_table_model(const std::vector<ProfileRow>& deployment_rows);

// Mean absolute percentage error (in %) of a model's prefill and decode predictions.
struct ProfileError {
  double prefill_mape = 0.0;
  double decode_mape = 0.0;
  std::size_t rows = 0;
};
ProfileError profile_error(const PerfModel& model, const std::vector<ProfileRow>& rows);

// Fits roofline factors to one deployment's rows by minimising the MAPE (Nelder-Mead in
// log space, so every factor stays positive).
RooflineFactors fit_roofline(const ModelSpec& model, const SkuSpec& sku, std::uint32_t tensor_parallel,
                             const std::vector<ProfileRow>& rows);

}  // namespace meshsim::cluster
