#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/rng.hpp"
#include "traces/servegen_lengths.hpp"
#include "traces/trace_request.hpp"
#include "traces/workload_spec.hpp"

namespace meshsim::traces {

// ServeGen's per-client window files (alibaba/ServeGen, data/language/*/chunk-N-trace.csv):
// one file per client, one headerless row per window,
//   timestamp_s,rate_per_s,cv,pattern,shape,scale
// where pattern is Gamma or Weibull (the law of the window's inter-arrival gaps, scipy's
// shape and scale) or empty (no requests in the window).
enum class GapLaw : std::uint8_t { kNone, kGamma, kWeibull };

struct ClientWindow {
  double rate_per_s = 0.0;
  GapLaw law = GapLaw::kNone;
  double shape = 0.0;
};

// Every client's windows, read once and shared read-only by the sources that replay them.
struct ServeGenTable {
  std::string path;
  double window_s = 0.0;  // the windows' common length (600 s in ServeGen's data)
  // Clients in file-name order (chunk numbers compared as numbers); a client's windows run
  // from the common first timestamp (time 0) on, window_s apart.
  std::vector<std::string> client_names;
  std::vector<std::vector<ClientWindow>> clients;
  // With client lengths: each client's own (empty where its chunk-N-dataset.json is
  // missing), and every client's pooled, weighted by its expected requests in each of
  // its length windows (what a client without a file draws from).
  std::vector<ClientLengths> lengths;
  EmpiricalLengths pooled_input, pooled_output;

  // Where the last client's last window ends, in seconds from time 0.
  double span_s() const;
  // The requests expected in [from_s, to_s) with every rate multiplied by `load_scale`.
  double expected_requests(double from_s, double to_s, double load_scale) const;
};

// Checks a spec's figures (a path, load_scale in (0, kMaxLoadScale], the length models);
// the error names the field.
Status validate(const ServeGenSpec& spec);

// Reads a folder of chunk-*-trace.csv files (or one such file). Errors name the file, the
// line and what was expected there; all clients must share the first timestamp and the
// window length. With `lengths` kClients, also each client's chunk-N-dataset.json (at
// least one client must have one).
Expected<std::shared_ptr<const ServeGenTable>> load_servegen(const std::string& path,
                                                            ServeGenLengths lengths = ServeGenLengths::kModel);

// Each client's class of service under `spec` (every client 0 without client_classes); an
// error names a client the spec names that the table lacks, or one no class takes.
Expected<std::vector<std::uint8_t>> classes_by_client(const ServeGenTable& table, const ServeGenSpec& spec);

// The table's requests: each client's windows in turn, merged across clients by arrival.
// A window of rate r (times load_scale) holds floor(r W) requests plus one with
// probability frac(r W) (so its expected count is r W), spread as ServeGen builds them:
// gaps drawn from the window's law, then scaled together so that they, and one gap past the
// last request, fill the window. Scaling makes the law's scale parameter irrelevant; its
// shape sets the burstiness. Lengths come from the client's own distribution at the
// request's time (spec.lengths kClients: the table's), else the spec's length model.
//
// Each (client, window) draws from its own stream of the seed, so the requests of a window
// are the same wherever a replay starts: opening at `start_s` (seconds from time 0) skips
// the windows before it without drawing them and yields the requests from `start_s` on,
// their arrivals still measured from time 0. Request ids count from the start.
class ServeGenSource final : public RequestSource {
 public:
  ServeGenSource(std::shared_ptr<const ServeGenTable> table, const ServeGenSpec& spec, std::uint64_t seed,
                 double start_s = 0.0);

  Expected<std::optional<TraceRequest>> next() override;
  double progress() const override;
  std::string describe() const override { return "servegen:" + table_->path; }
  std::optional<double> data_end_s() const override { return table_->span_s(); }

 private:
  // One client's replay: the window being played and where its arrivals stand.
  struct Cursor {
    std::size_t window = 0;
    std::uint64_t left = 0;       // requests of the window still to come
    double clock_s = 0.0;         // the last arrival (or the window's start)
    double gap_factor = 0.0;      // seconds per unit of a drawn gap (0: every gap drew 0)
    double even_gap_s = 0.0;      // the gap when gap_factor is 0
    engine::Rng gaps{0};
    engine::Rng lengths{0};
  };
  // Moves `client`'s cursor to its next window holding requests; false when none is left.
  bool open_next_window(std::size_t client, std::size_t first_window);
  // The cursor's next gap in seconds, drawn from its window's law.
  static double next_gap_s(Cursor& cursor, const ClientWindow& window);
  // A request's (prompt, output) tokens: `client`'s own lengths at `at_s`, the pooled ones
  // for a client without any, or the spec's model.
  std::pair<std::uint32_t, std::uint32_t> draw_lengths(std::size_t client, double at_s, engine::Rng& rng) const;
  void push(std::size_t client);

  std::shared_ptr<const ServeGenTable> table_;
  ServeGenSpec spec_;
  std::uint64_t seed_;
  double start_s_;
  std::vector<Cursor> cursors_;
  std::vector<std::uint8_t> client_class_;  // each client's class of service
  // Min-heap of (next arrival, client): ties go to the lower client index.
  std::vector<std::pair<double, std::size_t>> heap_;
  std::uint64_t emitted_ = 0;
  double clock_s_ = 0.0;
};

}  // namespace meshsim::traces
