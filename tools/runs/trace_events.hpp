#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "sim/cluster/serving_system.hpp"
#include "tools/runs/atomic_file.hpp"

namespace meshsim::cli {

// Writes instance activity as a Chrome trace-event JSON file (opens in ui.perfetto.dev and
// chrome://tracing): one process per server, one track per instance with a slice per
// prefill iteration or folded run of decode iterations, and a "kv in" track per instance
// with its incoming KV-cache transfers (async slices: they overlap); lifecycle changes
// (starting, active, draining, inactive, removed) are instant events on the instance's
// track. Streamed: memory does not grow with the run.
class ChromeTraceWriter final : public cluster::ActivitySink {
 public:
  explicit ChromeTraceWriter(const std::string& path);
  Status open_status() const;

  void on_instance(std::uint32_t instance, std::uint32_t server, std::string_view tag) override;
  void on_iteration(std::uint32_t instance, engine::SimTime start, engine::SimTime end, std::uint32_t prompts,
                    std::uint32_t decodes, std::uint32_t iterations) override;
  void on_transfer(std::uint64_t request, std::uint32_t from, std::uint32_t to, engine::SimTime start,
                   engine::SimTime end) override;
  void on_instance_state(std::uint32_t instance, std::string_view state, engine::SimTime time) override;
  // A process per node of a shared cluster ("batch on node N") with an async slice per
  // run of a batch job, and an instant "preempted" event where a run was cut short.
  void on_batch_run(std::string_view job, std::uint32_t node, engine::SimTime start, engine::SimTime end,
                    bool preempted) override;
  // Closes the JSON document and moves the file into place.
  Status commit();

 private:
  void begin_event();
  std::uint32_t server_of(std::uint32_t instance) const;

  AtomicFile file_;
  bool first_ = true;
  std::vector<std::uint32_t> servers_;  // by instance
  std::set<std::uint32_t> batch_nodes_;  // nodes whose process is named
  std::uint64_t batch_runs_ = 0;
};

}  // namespace meshsim::cli
