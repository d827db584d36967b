#include "tools/runs/progress_bar.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace meshsim::cli {

ProgressBar::ProgressBar(bool wanted)
    : enabled_(wanted && isatty(STDERR_FILENO) != 0 && std::getenv("CI") == nullptr) {}

void ProgressBar::update(double fraction, engine::SimTime now) {
  if (!enabled_) return;
  const auto wall = std::chrono::steady_clock::now();
  if (drawn_ && wall - last_draw_ < std::chrono::milliseconds(100) && fraction < 1.0) return;
  last_draw_ = wall;
  drawn_ = true;
  constexpr int kWidth = 40;
  const int filled = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * kWidth);
  std::fprintf(stderr, "\r[%s%s] %5.1f%%  sim t = %.1f s", std::string(static_cast<std::size_t>(filled), '#').c_str(),
               std::string(static_cast<std::size_t>(kWidth - filled), '.').c_str(), fraction * 100.0, now.seconds());
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (enabled_ && drawn_) std::fprintf(stderr, "\n");
  drawn_ = false;
}

}  // namespace meshsim::cli
