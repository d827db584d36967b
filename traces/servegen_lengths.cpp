#include "traces/servegen_lengths.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "sim/engine/number_text.hpp"

namespace meshsim::traces {
namespace {

// ServeGen's counts are whole numbers; this bounds what one request may hold.
constexpr double kMaxTokens = 1e9;

void skip_spaces(std::string_view& text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n' || text.front() == '\t')) text.remove_prefix(1);
}

// A number at the start of `text` (consumed).
std::optional<double> take_number(std::string_view& text) {
  skip_spaces(text);
  double value = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || !std::isfinite(value)) return std::nullopt;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return value;
}

bool take(std::string_view& text, char c) {
  skip_spaces(text);
  if (text.empty() || text.front() != c) return false;
  text.remove_prefix(1);
  return true;
}

}  // namespace

std::uint32_t EmpiricalLengths::sample(double u) const {
  const auto at = std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin();
  return std::max<std::uint32_t>(1, tokens[std::min(static_cast<std::size_t>(at), tokens.size() - 1)]);
}

Expected<EmpiricalLengths> parse_length_dict(std::string_view text) {
  std::map<std::uint32_t, double> weights;
  std::set<double> keys;
  if (!take(text, '{')) return Error{"expected a dict '{tokens: probability, ...}'"};
  if (!take(text, '}')) {
    for (;;) {
      const auto tokens = take_number(text);
      if (!tokens || *tokens < 0 || *tokens > kMaxTokens || *tokens != std::floor(*tokens)) {
        return Error{"expected a whole number of tokens in [0, 1e9] as a key"};
      }
      if (!take(text, ':')) return Error{"expected ':' after the key " + number_text(*tokens)};
      const auto probability = take_number(text);
      if (!probability || *probability < 0) {
        return Error{"expected a probability >= 0 for " + number_text(*tokens) + " tokens"};
      }
      if (!keys.insert(*tokens).second) return Error{"the key " + number_text(*tokens) + " appears twice"};
      weights[std::max<std::uint32_t>(1, static_cast<std::uint32_t>(*tokens))] += *probability;
      if (take(text, '}')) break;
      if (!take(text, ',')) return Error{"expected ',' or '}' after " + number_text(*tokens) + "'s probability"};
    }
  }
  skip_spaces(text);
  if (!text.empty()) return Error{"expected nothing after the dict's '}'"};
  EmpiricalLengths lengths;
  double total = 0.0;
  for (const auto& [tokens, weight] : weights) total += weight;
  if (weights.empty()) return lengths;
  if (!(total > 0)) return Error{"expected probabilities that do not all sum to 0"};
  double running = 0.0;
  for (const auto& [tokens, weight] : weights) {
    if (weight <= 0) continue;
    running += weight / total;
    lengths.tokens.push_back(tokens);
    lengths.cumulative.push_back(running);
  }
  lengths.cumulative.back() = 1.0;
  return lengths;
}

EmpiricalLengths mixture(const std::vector<std::pair<const EmpiricalLengths*, double>>& parts) {
  std::map<std::uint32_t, double> weights;
  for (const auto& [part, weight] : parts) {
    if (part == nullptr || part->empty() || !(weight > 0)) continue;
    double before = 0.0;
    for (std::size_t i = 0; i < part->tokens.size(); ++i) {
      weights[part->tokens[i]] += weight * (part->cumulative[i] - before);
      before = part->cumulative[i];
    }
  }
  EmpiricalLengths out;
  double total = 0.0;
  for (const auto& [tokens, weight] : weights) total += weight;
  if (!(total > 0)) return out;
  double running = 0.0;
  for (const auto& [tokens, weight] : weights) {
    running += weight / total;
    out.tokens.push_back(tokens);
    out.cumulative.push_back(running);
  }
  out.cumulative.back() = 1.0;
  return out;
}

int ClientLengths::window_at(double t_s) const {
  if (window_start_s.empty()) return -1;
  const auto after = std::upper_bound(window_start_s.begin(), window_start_s.end(), t_s) - window_start_s.begin();
  const std::ptrdiff_t in_force = std::max<std::ptrdiff_t>(0, after - 1);
  // The window in force, else the nearest with lengths (measured between window starts).
  int best = -1;
  double best_distance = 0.0;
  for (std::size_t w = 0; w < input.size(); ++w) {
    if (input[w].empty() || output[w].empty()) continue;
    const double distance = std::abs(window_start_s[w] - window_start_s[static_cast<std::size_t>(in_force)]);
    if (best < 0 || distance < best_distance) {
      best = static_cast<int>(w);
      best_distance = distance;
    }
  }
  return best;
}

Expected<ClientLengths> read_client_lengths(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open the ServeGen length file"};
  nlohmann::json tree = nlohmann::json::parse(in, nullptr, false);
  if (tree.is_discarded()) return Error{path + ": not valid JSON (expected ServeGen's chunk-N-dataset.json)"};
  if (!tree.is_object()) return Error{path + ": expected an object of windows {\"<start s>\": {...}}"};
  std::vector<std::pair<double, const nlohmann::json*>> windows;
  for (const auto& [key, value] : tree.items()) {
    double start = 0.0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), start);
    if (ec != std::errc() || end != key.data() + key.size() || !(start >= 0) || start > 1e12) {
      return Error{path + ": window key '" + key + "': expected a start in seconds in [0, 1e12]"};
    }
    windows.emplace_back(start, &value);
  }
  std::sort(windows.begin(), windows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  ClientLengths lengths;
  for (const auto& [start, value] : windows) {
    const std::string where = path + ": window " + number_text(start);
    if (!lengths.window_start_s.empty() && start == lengths.window_start_s.back()) return Error{where + ": appears twice"};
    if (!value->is_object()) return Error{where + ": expected an object with input_tokens and output_tokens"};
    for (const char* key : {"input_tokens", "output_tokens"}) {
      const auto field = value->find(key);
      if (field == value->end() || !field->is_string()) {
        return Error{where + ": " + key + ": expected the text of a dict {tokens: probability}"};
      }
      auto parsed = parse_length_dict(field->get_ref<const std::string&>());
      if (!parsed) return Error{where + ": " + key + ": " + parsed.error().message};
      (std::string_view(key) == "input_tokens" ? lengths.input : lengths.output).push_back(std::move(*parsed));
    }
    lengths.window_start_s.push_back(start);
  }
  return lengths;
}

}  // namespace meshsim::traces
