#include "traces/servegen_source.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "sim/engine/check.hpp"
#include "sim/engine/number_text.hpp"
#include "traces/field_parsing.hpp"
#include "traces/generated_source.hpp"

namespace meshsim::traces {
namespace {

// How far apart two timestamps may be and still count as equal (they are whole seconds).
constexpr double kTimeTolerance_s = 1e-6;
// The most windows a client may have (about 19 years of 600 s windows).
constexpr std::size_t kMaxWindows = 1'000'000;

std::optional<double> parse_number(std::string_view text) {
  double value = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// One client's file: its windows, first timestamp and window length (0 with one row).
struct ClientFile {
  std::vector<ClientWindow> windows;
  double first_s = 0.0;
  double window_s = 0.0;
};

Expected<ClientFile> read_client(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open the ServeGen window file"};
  ClientFile file;
  std::string line;
  std::vector<std::string> fields;
  std::uint64_t number = 0;
  double previous_s = 0.0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const auto fail = [&](const std::string& what) {
      return Error{path + ":" + std::to_string(number) + ": " + what};
    };
    if (!split_csv_record(line, fields) || fields.size() != 6) {
      return fail("expected 6 fields 'timestamp_s,rate_per_s,cv,pattern,shape,scale', got " + quote_for_message(line));
    }
    const auto timestamp = parse_number(fields[0]);
    if (!timestamp || *timestamp < 0 || *timestamp > SimTime::kMaxSeconds) {
      return fail("timestamp_s: expected seconds in [0, 1e12], got " + quote_for_message(fields[0]));
    }
    const auto rate = parse_number(fields[1]);
    // Bounded: ServeGen's busiest clients send tens of requests a second; a window at 1e8/s
    // would never end, and past 2^64 requests a window's count would overflow.
    if (!rate || !(*rate >= 0 && *rate <= kMaxWindowRate)) {
      return fail("rate_per_s: expected a rate in [0, 1e5], got " + quote_for_message(fields[1]));
    }
    if (!parse_number(fields[2])) return fail("cv: expected a number, got " + quote_for_message(fields[2]));
    ClientWindow window;
    window.rate_per_s = *rate;
    if (fields[3] == "Gamma") {
      window.law = GapLaw::kGamma;
    } else if (fields[3] == "Weibull") {
      window.law = GapLaw::kWeibull;
    } else if (!fields[3].empty()) {
      return fail("pattern: expected Gamma, Weibull or nothing, got " + quote_for_message(fields[3]));
    }
    if (window.law != GapLaw::kNone) {
      const auto shape = parse_number(fields[4]);
      const auto scale = parse_number(fields[5]);
      if (!shape || *shape <= 0) return fail("shape: expected a positive number, got " + quote_for_message(fields[4]));
      if (!scale || *scale <= 0) return fail("scale: expected a positive number, got " + quote_for_message(fields[5]));
      window.shape = *shape;
    } else if (window.rate_per_s > 0) {
      return fail("pattern: a window with requests (rate_per_s " + number_text(window.rate_per_s) +
                  ") needs its gaps' law, Gamma or Weibull");
    }
    if (file.windows.empty()) {
      file.first_s = *timestamp;
    } else {
      const double step = *timestamp - previous_s;
      if (file.windows.size() == 1) file.window_s = step;
      if (!(step > 0) || std::abs(step - file.window_s) > kTimeTolerance_s) {
        return fail("timestamp_s: expected " + number_text(previous_s + file.window_s) +
                    " (windows follow each other at equal steps), got " + number_text(*timestamp));
      }
    }
    if (file.windows.size() >= kMaxWindows) return fail("more than " + std::to_string(kMaxWindows) + " windows");
    previous_s = *timestamp;
    file.windows.push_back(window);
  }
  if (file.windows.empty()) return Error{path + ": no windows (expected one row per window)"};
  return file;
}

// Orders file names as a person would: "chunk-2" before "chunk-10".
// One gap of the window's law at scale 1 (the window's scaling comes after).
double draw_unit_gap(const ClientWindow& window, engine::Rng& rng) {
  if (window.law == GapLaw::kGamma) return rng.gamma(window.shape, 1.0);
  return std::pow(-std::log(1.0 - rng.uniform()), 1.0 / window.shape);  // Weibull, by inversion
}

bool natural_less(std::string_view a, std::string_view b) {
  const auto is_digit = [](char ch) { return ch >= '0' && ch <= '9'; };
  // The digit run starting at `at`, without leading zeros; `at` moves past it.
  const auto number = [&](std::string_view s, std::size_t& at) {
    const std::size_t begin = at;
    while (at < s.size() && is_digit(s[at])) ++at;
    std::string_view run = s.substr(begin, at - begin);
    while (run.size() > 1 && run.front() == '0') run.remove_prefix(1);
    return run;
  };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      const auto na = number(a, i), nb = number(b, j);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;
}

}  // namespace

double ServeGenTable::span_s() const {
  std::size_t windows = 0;
  for (const auto& client : clients) windows = std::max(windows, client.size());
  return static_cast<double>(windows) * window_s;
}

double ServeGenTable::expected_requests(double from_s, double to_s, double load_scale) const {
  double requests = 0.0;
  for (const auto& client : clients) {
    for (std::size_t w = 0; w < client.size(); ++w) {
      const double start = static_cast<double>(w) * window_s;
      const double overlap = std::min(to_s, start + window_s) - std::max(from_s, start);
      if (overlap > 0 && client[w].law != GapLaw::kNone) requests += client[w].rate_per_s * load_scale * overlap;
    }
  }
  return requests;
}

namespace {

// Each client's chunk-N-dataset.json beside its chunk-N-trace.csv (`files`: the trace
// files' names, "" for a single file), and the pooled lengths.
Status read_lengths(ServeGenTable& table, const std::vector<std::string>& files) {
  namespace fs = std::filesystem;
  bool any = false;
  for (const std::string& file : files) {
    const fs::path trace = file.empty() ? fs::path(table.path) : fs::path(table.path) / file;
    const std::string name = trace.filename().string();
    ClientLengths own;
    if (name.ends_with("-trace.csv")) {
      const fs::path dataset = trace.parent_path() / (name.substr(0, name.size() - 10) + "-dataset.json");
      std::error_code ec;
      if (fs::is_regular_file(dataset, ec)) {
        auto read = read_client_lengths(dataset.string());
        if (!read) return read.error();
        own = std::move(*read);
        any = true;
      }
    }
    table.lengths.push_back(std::move(own));
  }
  if (!any) {
    return Error{table.path + ": no chunk-N-dataset.json beside the window files: their lengths are unknown (give "
                              "lengths: model with prompt_tokens and output_tokens)"};
  }
  // Each length window weighs what the client's windows inside it expect to bring.
  std::vector<std::pair<const EmpiricalLengths*, double>> inputs, outputs;
  for (std::size_t c = 0; c < table.lengths.size(); ++c) {
    const ClientLengths& own = table.lengths[c];
    for (std::size_t w = 0; w < own.window_start_s.size(); ++w) {
      const double from = own.window_start_s[w];
      const double to = w + 1 < own.window_start_s.size() ? own.window_start_s[w + 1] : table.span_s();
      double requests = 0.0;
      for (std::size_t k = 0; k < table.clients[c].size(); ++k) {
        const double start = static_cast<double>(k) * table.window_s;
        if (start >= from && start < to) requests += table.clients[c][k].rate_per_s * table.window_s;
      }
      inputs.emplace_back(&own.input[w], requests);
      outputs.emplace_back(&own.output[w], requests);
    }
  }
  table.pooled_input = mixture(inputs);
  table.pooled_output = mixture(outputs);
  if (table.pooled_input.empty() || table.pooled_output.empty()) {
    return Error{table.path + ": the clients' chunk-N-dataset.json files hold no lengths where requests arrive"};
  }
  return Ok();
}

}  // namespace

Status validate(const ServeGenSpec& spec) {
  if (spec.path.empty()) return Error{"path: expected a folder of ServeGen chunk-N-trace.csv files"};
  if (!(spec.load_scale > 0 && spec.load_scale <= kMaxLoadScale)) {
    return Error{"load_scale: expected a factor in (0, " + number_text(kMaxLoadScale) + "], got " +
                 number_text(spec.load_scale)};
  }
  if (spec.lengths == ServeGenLengths::kClients) return Ok();
  if (auto s = validate_length(spec.prompt_tokens, "prompt_tokens"); !s) return s;
  return validate_length(spec.output_tokens, "output_tokens");
}

Expected<std::shared_ptr<const ServeGenTable>> load_servegen(const std::string& path, ServeGenLengths lengths) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.size() <= 10 || !name.ends_with("-trace.csv")) continue;
      // A window file that cannot even be looked at (a symbolic link to itself) is named,
      // not skipped: the workload would silently lack a client.
      std::error_code looked;
      const bool regular = entry.is_regular_file(looked);
      if (looked) return Error{entry.path().string() + ": cannot be read (" + looked.message() + ")"};
      if (regular) files.push_back(name);
    }
    if (ec) return Error{path + ": cannot list the folder (" + ec.message() + ")"};
    if (files.empty()) return Error{path + ": no ServeGen window files (expected chunk-N-trace.csv files)"};
    std::sort(files.begin(), files.end(), natural_less);
  } else if (fs::is_regular_file(path, ec)) {
    files.push_back("");
  } else {
    return Error{path + ": no such folder or file (expected ServeGen's chunk-N-trace.csv files)"};
  }
  auto table = std::make_shared<ServeGenTable>();
  table->path = path;
  double first_s = 0.0;
  std::string first_file;
  for (const auto& name : files) {
    const std::string file_path = name.empty() ? path : (fs::path(path) / name).string();
    auto client = read_client(file_path);
    if (!client) return client.error();
    if (first_file.empty()) {
      first_s = client->first_s;
      first_file = file_path;
    } else if (std::abs(client->first_s - first_s) > kTimeTolerance_s) {
      return Error{file_path + ": the first window starts at " + number_text(client->first_s) + " s, " +
                   first_file + "'s at " + number_text(first_s) + " s: clients must share their windows"};
    }
    if (client->window_s > 0) {
      if (table->window_s == 0) {
        table->window_s = client->window_s;
      } else if (std::abs(client->window_s - table->window_s) > kTimeTolerance_s) {
        return Error{file_path + ": windows of " + number_text(client->window_s) + " s where the others have " +
                     number_text(table->window_s) + " s: clients must share their windows"};
      }
    }
    table->client_names.push_back(name.empty() ? fs::path(path).filename().string() : name);
    table->clients.push_back(std::move(client->windows));
  }
  if (table->window_s == 0) return Error{path + ": every client has one window; two rows are needed to know its length"};
  if (lengths == ServeGenLengths::kClients) {
    if (auto read = read_lengths(*table, files); !read) return read.error();
  }
  return std::shared_ptr<const ServeGenTable>(std::move(table));
}

Expected<std::vector<std::uint8_t>> classes_by_client(const ServeGenTable& table, const ServeGenSpec& spec) {
  std::vector<std::uint8_t> classes(table.clients.size(), 0);
  if (spec.client_classes.empty()) return classes;
  std::vector<std::string> names;
  for (const std::string& file : table.client_names) {
    names.push_back(file.ends_with("-trace.csv") ? file.substr(0, file.size() - 10) : file);
  }
  std::vector<bool> named(names.size(), false);
  for (const auto& [client, service_class] : spec.client_classes) {
    const auto at = std::find(names.begin(), names.end(), client);
    if (at == names.end()) {
      std::string known;
      for (std::size_t i = 0; i < names.size() && i < 8; ++i) known += (i == 0 ? "" : ", ") + names[i];
      return Error{table.path + ": no client '" + client + "' for its class of service (clients: " + known +
                   (names.size() > 8 ? ", ..." : "") + ")"};
    }
    const auto c = static_cast<std::size_t>(at - names.begin());
    classes[c] = service_class;
    named[c] = true;
  }
  for (std::size_t c = 0; c < names.size(); ++c) {
    if (named[c]) continue;
    if (!spec.other_class) {
      return Error{table.path + ": client '" + names[c] + "' is in no class of service (name it in a class's " +
                   "\"clients\", or leave one class without \"clients\" to take the others)"};
    }
    classes[c] = *spec.other_class;
  }
  return classes;
}

ServeGenSource::ServeGenSource(std::shared_ptr<const ServeGenTable> table, const ServeGenSpec& spec,
                               std::uint64_t seed, double start_s)
    : table_(std::move(table)), spec_(spec), seed_(seed), start_s_(std::max(0.0, start_s)) {
  MESHSIM_CHECK(table_ != nullptr && table_->window_s > 0, "ServeGenSource needs a loaded table");
  MESHSIM_CHECK(spec_.load_scale > 0 && spec_.load_scale <= kMaxLoadScale, "ServeGenSource: load_scale out of range");
  MESHSIM_CHECK(spec_.lengths == ServeGenLengths::kModel || table_->lengths.size() == table_->clients.size(),
                "ServeGenSource: client lengths asked of a table loaded without them");
  auto classes = classes_by_client(*table_, spec_);
  MESHSIM_CHECK(classes.has_value(), "ServeGenSource: " + (classes ? std::string() : classes.error().message));
  client_class_ = std::move(*classes);
  cursors_.resize(table_->clients.size());
  const auto first = static_cast<std::size_t>(std::min(start_s_ / table_->window_s, static_cast<double>(kMaxWindows)));
  for (std::size_t c = 0; c < cursors_.size(); ++c) {
    if (open_next_window(c, first)) push(c);
  }
}

double ServeGenSource::next_gap_s(Cursor& cursor, const ClientWindow& window) {
  if (cursor.gap_factor == 0) return cursor.even_gap_s;
  return draw_unit_gap(window, cursor.gaps) * cursor.gap_factor;
}

bool ServeGenSource::open_next_window(std::size_t client, std::size_t first_window) {
  const auto& windows = table_->clients[client];
  Cursor& cursor = cursors_[client];
  const double w_s = table_->window_s;
  for (std::size_t w = first_window; w < windows.size(); ++w) {
    const ClientWindow& window = windows[w];
    if (window.law == GapLaw::kNone || window.rate_per_s <= 0) continue;
    const std::string stream = "servegen/" + table_->client_names[client] + "/" + std::to_string(w);
    cursor.gaps = engine::Rng(engine::derive_seed(seed_, stream));
    cursor.lengths = engine::Rng(engine::derive_seed(seed_, stream + "/lengths"));
    const double expected = window.rate_per_s * spec_.load_scale * w_s;
    const double whole = std::floor(expected);
    const auto count = static_cast<std::uint64_t>(whole) + (cursor.gaps.uniform() < expected - whole ? 1 : 0);
    if (count == 0) continue;
    // The gaps' total, drawn once here and again as the requests come (the stream is
    // rewound), so a window of millions of requests needs no memory.
    const auto rewind = cursor.gaps.state();
    double total = 0.0;
    for (std::uint64_t i = 0; i <= count; ++i) total += draw_unit_gap(window, cursor.gaps);
    cursor.gaps = engine::Rng::from_state(rewind);
    // Every gap drawn as zero (possible with tiny shapes): spread the requests evenly.
    cursor.gap_factor = total > 0 && std::isfinite(total) ? w_s / total : 0.0;
    cursor.even_gap_s = w_s / static_cast<double>(count + 1);
    cursor.window = w;
    cursor.left = count;
    cursor.clock_s = static_cast<double>(w) * w_s + next_gap_s(cursor, window);
    return true;
  }
  cursor.left = 0;
  return false;
}

std::pair<std::uint32_t, std::uint32_t> ServeGenSource::draw_lengths(std::size_t client, double at_s,
                                                                     engine::Rng& rng) const {
  if (spec_.lengths == ServeGenLengths::kModel) {
    const std::uint32_t prompt = sample_length(spec_.prompt_tokens, rng);
    return {prompt, sample_length(spec_.output_tokens, rng)};
  }
  const ClientLengths& own = table_->lengths[client];
  const int w = own.window_at(at_s);
  const EmpiricalLengths& input = w >= 0 ? own.input[static_cast<std::size_t>(w)] : table_->pooled_input;
  const EmpiricalLengths& output = w >= 0 ? own.output[static_cast<std::size_t>(w)] : table_->pooled_output;
  const std::uint32_t prompt = input.sample(rng.uniform());
  return {prompt, output.sample(rng.uniform())};
}

void ServeGenSource::push(std::size_t client) {
  heap_.emplace_back(cursors_[client].clock_s, client);
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
}

Expected<std::optional<TraceRequest>> ServeGenSource::next() {
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    const auto [arrival_s, client] = heap_.back();
    heap_.pop_back();
    Cursor& cursor = cursors_[client];
    // Lengths are drawn for every request, skipped ones too, so a window's requests are
    // the same wherever the replay starts.
    const auto [prompt, output] = draw_lengths(client, arrival_s, cursor.lengths);
    if (--cursor.left > 0) {
      // (Rounding must not carry an arrival past its window's end.)
      const double window_end_s = static_cast<double>(cursor.window + 1) * table_->window_s;
      cursor.clock_s = std::min(window_end_s, cursor.clock_s + next_gap_s(cursor, table_->clients[client][cursor.window]));
      push(client);
    } else if (open_next_window(client, cursor.window + 1)) {
      push(client);
    }
    if (arrival_s < start_s_) continue;
    clock_s_ = arrival_s;
    TraceRequest request;
    request.id = emitted_++;
    request.arrival = SimTime::from_us(static_cast<std::int64_t>(std::llround(arrival_s * 1e6)));
    request.prompt_tokens = prompt;
    request.output_tokens = output;
    request.service_class = client_class_[client];
    return std::optional<TraceRequest>(std::move(request));
  }
  clock_s_ = table_->span_s();
  return std::optional<TraceRequest>();
}

double ServeGenSource::progress() const {
  const double span = table_->span_s() - start_s_;
  return span > 0 ? std::clamp((clock_s_ - start_s_) / span, 0.0, 1.0) : 1.0;
}

}  // namespace meshsim::traces
