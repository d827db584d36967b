#include "tools/runs/trace_events.hpp"

#include <nlohmann/json.hpp>

namespace meshsim::cli {
namespace {

// Transfers sit on a second track of the receiving instance.
constexpr std::uint64_t kTransferTrackOffset = 1'000'000;
constexpr std::uint64_t kBatchPidOffset = 1'000'000;  // above any server id a run reaches

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(const std::string& path) : file_(path) {
  file_.stream() << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
}

Status ChromeTraceWriter::open_status() const {
  if (!file_.is_open()) return Error{file_.path() + ": cannot create the trace-events file"};
  return Ok{};
}

void ChromeTraceWriter::begin_event() {
  file_.stream() << (first_ ? "\n" : ",\n");
  first_ = false;
}

std::uint32_t ChromeTraceWriter::server_of(std::uint32_t instance) const {
  return instance < servers_.size() ? servers_[instance] : 0;
}

void ChromeTraceWriter::on_instance(std::uint32_t instance, std::uint32_t server, std::string_view tag) {
  if (instance >= servers_.size()) servers_.resize(instance + 1, 0);
  servers_[instance] = server;
  auto& out = file_.stream();
  begin_event();
  out << R"({"ph":"M","name":"process_name","pid":)" << server << R"(,"args":{"name":"server )" << server << "\"}}";
  begin_event();
  out << R"({"ph":"M","name":"thread_name","pid":)" << server << ",\"tid\":" << instance
      << R"(,"args":{"name":"instance )" << instance << " (" << tag << ")\"}}";
  begin_event();
  out << R"({"ph":"M","name":"thread_name","pid":)" << server << ",\"tid\":" << kTransferTrackOffset + instance
      << R"(,"args":{"name":"instance )" << instance << " kv in\"}}";
}

void ChromeTraceWriter::on_iteration(std::uint32_t instance, engine::SimTime start, engine::SimTime end,
                                     std::uint32_t prompts, std::uint32_t decodes, std::uint32_t iterations) {
  const char* name = prompts == 0 ? "decode" : (decodes == 0 ? "prefill" : "prefill+decode");
  begin_event();
  file_.stream() << R"({"ph":"X","name":")" << name << R"(","pid":)" << server_of(instance) << ",\"tid\":" << instance
                 << ",\"ts\":" << start.us() << ",\"dur\":" << (end - start).us() << R"(,"args":{"prompts":)"
                 << prompts << ",\"decoding\":" << decodes << ",\"iterations\":" << iterations << "}}";
}

void ChromeTraceWriter::on_transfer(std::uint64_t request, std::uint32_t from, std::uint32_t to, engine::SimTime start,
                                    engine::SimTime end) {
  // Transfers to one instance overlap, so they are async slices (b/e pairs keyed by the
  // request), which may overlap, rather than complete slices, which must nest.
  const std::uint32_t pid = server_of(to);
  const std::uint64_t tid = kTransferTrackOffset + to;
  begin_event();
  file_.stream() << R"({"ph":"b","cat":"kv","name":"kv transfer","id":)" << request << ",\"pid\":" << pid
                 << ",\"tid\":" << tid << ",\"ts\":" << start.us() << R"(,"args":{"from_instance":)" << from << "}}";
  begin_event();
  file_.stream() << R"({"ph":"e","cat":"kv","name":"kv transfer","id":)" << request << ",\"pid\":" << pid
                 << ",\"tid\":" << tid << ",\"ts\":" << end.us() << "}";
}

void ChromeTraceWriter::on_instance_state(std::uint32_t instance, std::string_view state, engine::SimTime time) {
  // An instant event on the instance's track: its lifecycle reads along the timeline.
  begin_event();
  file_.stream() << R"({"ph":"i","s":"t","name":")" << state << R"(","pid":)" << server_of(instance)
                 << ",\"tid\":" << instance << ",\"ts\":" << time.us() << "}";
}

void ChromeTraceWriter::on_batch_run(std::string_view job, std::uint32_t node, engine::SimTime start,
                                     engine::SimTime end, bool preempted) {
  // Processes after the servers' (whose ids are small), one per node of the core.
  const std::uint64_t pid = kBatchPidOffset + node;
  auto& out = file_.stream();
  if (batch_nodes_.insert(node).second) {
    begin_event();
    out << R"({"ph":"M","name":"process_name","pid":)" << pid << R"(,"args":{"name":"batch on node )" << node
        << "\"}}";
  }
  // Runs on one node overlap: async slices, one id per run.
  const std::string name = nlohmann::json(std::string(job)).dump();  // quoted and escaped
  const std::uint64_t id = ++batch_runs_;
  begin_event();
  out << R"({"ph":"b","cat":"batch","name":)" << name << R"(,"id":)" << id << ",\"pid\":" << pid
      << ",\"tid\":0,\"ts\":" << start.us() << "}";
  begin_event();
  out << R"({"ph":"e","cat":"batch","name":)" << name << R"(,"id":)" << id << ",\"pid\":" << pid
      << ",\"tid\":0,\"ts\":" << end.us() << "}";
  if (preempted) {
    begin_event();
    out << R"({"ph":"i","s":"p","name":"preempted","pid":)" << pid << ",\"ts\":" << end.us()
        << R"(,"args":{"job":)" << name << "}}";
  }
}

Status ChromeTraceWriter::commit() {
  file_.stream() << "\n]}\n";
  return file_.commit();
}

}  // namespace meshsim::cli
