#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/task.hpp"
#include "scheduler/world.hpp"

namespace meshsim::scheduler {

// A world moved by hand, for unit tests and as the reference sim/script's ScriptClock is
// tested against: a clock that advances when told (firing timers in time order on the
// way), and agents that answer a cancel at once unless hung, in which case the core waits
// out the timeout and the clock moves by it.
class ManualWorld : public Clock, public TimerService, public Actuator {
 public:
  SimTime now() const override { return now_; }
  // now() in seconds, as the tests speak.
  double now_s() const { return now_.seconds(); }
  void advance(SimTime by) {
    const SimTime until = now_ + by;
    while (!timers_.empty() && timers_.begin()->first.first <= until) {
      const auto it = timers_.begin();
      // A timer a timed-out cancel overtook (see cancel_task) fires late, now: the
      // clock never goes back.
      now_ = std::max(now_, it->first.first);
      const auto [target, tag] = it->second;
      timers_.erase(it);
      target->on_timer(tag);
    }
    now_ = until;
  }
  // Seconds, rounded to the microsecond.
  void advance(double seconds) { advance(SimTime::from_seconds(seconds)); }
  // Resuming from a state file: the clock goes back to when it was saved, and the timers
  // of the abandoned timeline are dropped (the core re-arms its own).
  void rewind(SimTime to) {
    timers_.clear();
    now_ = to;
  }

  TimerId call_at(SimTime at, TimerTarget& target, std::uint64_t tag) override {
    const TimerId id = next_timer_++;
    timers_.emplace(std::make_pair(std::max(at, now_), id), std::make_pair(&target, tag));
    return id;
  }
  void cancel(TimerId id) override {
    std::erase_if(timers_, [id](const auto& kv) { return kv.first.second == id; });
  }

  CancelReply cancel_task(const Task& task, SimTime timeout) override {
    cancels.push_back(task.agent + "/" + task.id);
    if (hanging.count(task.agent) == 0) return CancelReply{true, SimTime::zero()};
    now_ += timeout;
    return CancelReply{false, timeout};
  }

  std::set<std::string> hanging;      // agents that never answer
  std::vector<std::string> cancels;   // "agent/task" of every cancel asked

 private:
  SimTime now_;
  TimerId next_timer_ = 1;
  std::map<std::pair<SimTime, TimerId>, std::pair<TimerTarget*, std::uint64_t>> timers_;
};

}  // namespace meshsim::scheduler
