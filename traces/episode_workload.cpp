#include "traces/episode_workload.hpp"

#include <algorithm>
#include <cmath>

#include "traces/class_share_source.hpp"
#include "traces/servegen_source.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::traces {
namespace {

class MemoryWorkload final : public EpisodeWorkload {
 public:
  explicit MemoryWorkload(SharedTrace trace) : trace_(std::move(trace)) {}
  double span_s() const override { return trace_->empty() ? 0.0 : trace_->back().arrival.seconds(); }
  double requests() const override { return static_cast<double>(trace_->size()); }
  std::unique_ptr<RequestSource> window(SimTime start, SimTime length, double rate_scale) const override {
    return std::make_unique<WindowSource>(trace_, start, length, rate_scale);
  }

 private:
  SharedTrace trace_;
};

// ServeGen's windows, opened where each episode starts. The workload's own window and
// rate scale map episode times back to the files' axis.
class ServeGenWorkload final : public EpisodeWorkload {
 public:
  ServeGenWorkload(std::shared_ptr<const ServeGenTable> table, const WorkloadSpec& spec, std::uint64_t seed)
      : table_(std::move(table)),
        spec_(std::get<ServeGenSpec>(spec.source)),
        seed_(seed),
        from_s_(spec.window_start.seconds()),
        to_s_(std::min(table_->span_s(), spec.window_end ? spec.window_end->seconds() : table_->span_s())),
        rate_scale_(spec.rate_scale),
        class_shares_(spec.class_shares) {}

  double span_s() const override { return std::max(0.0, to_s_ - from_s_) / rate_scale_; }
  double requests() const override { return table_->expected_requests(from_s_, to_s_, spec_.load_scale); }
  std::unique_ptr<RequestSource> window(SimTime start, SimTime length, double rate_scale) const override {
    const double begin_s = from_s_ + start.seconds() * rate_scale_;
    const double end_s = std::min(to_s_, begin_s + length.seconds() * rate_scale * rate_scale_);
    const SimTime begin = SimTime::from_seconds(begin_s);
    auto shaped = std::make_unique<ShapedSource>(std::make_unique<ServeGenSource>(table_, spec_, seed_, begin_s), begin,
                                                 std::max(begin, SimTime::from_seconds(end_s)),
                                                 rate_scale * rate_scale_, std::nullopt, EmptyWindow::kAllow);
    if (class_shares_.empty()) return shaped;
    return std::make_unique<ClassShareSource>(std::move(shaped), class_shares_, seed_);
  }

 private:
  std::shared_ptr<const ServeGenTable> table_;
  ServeGenSpec spec_;
  std::uint64_t seed_;
  double from_s_, to_s_, rate_scale_;
  std::vector<double> class_shares_;
};

}  // namespace

SharedWorkload in_memory(SharedTrace trace) { return std::make_shared<MemoryWorkload>(std::move(trace)); }

Expected<SharedWorkload> open_episode_workload(const WorkloadSpec& spec, std::uint64_t seed) {
  if (const auto* servegen = std::get_if<ServeGenSpec>(&spec.source); servegen && !spec.max_requests) {
    if (auto status = validate_shaping(spec); !status) return status.error();
    if (auto status = validate_classes(spec); !status) return status.error();
    if (auto status = validate(*servegen); !status) return Error{"servegen: " + status.error().message};
    auto table = load_servegen(servegen->path, servegen->lengths);
    if (!table) return table.error();
    if (auto classes = classes_by_client(**table, *servegen); !classes) return classes.error();
    return SharedWorkload(std::make_shared<ServeGenWorkload>(std::move(*table), spec, seed));
  }
  auto source = open_workload(spec, seed);
  if (!source) return source.error();
  auto trace = load_trace(**source);
  if (!trace) return trace.error();
  return in_memory(std::move(*trace));
}

}  // namespace meshsim::traces
