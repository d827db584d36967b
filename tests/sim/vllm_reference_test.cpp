// VllmScheduler against a slow, plainly written reference of vLLM v1's scheduling rules
// (scheduler.py's schedule() loop, one KV cache group, no prefix caching): random request
// mixes of prompts, outputs, token budgets, block counts, thresholds, priorities and
// arrivals, under both policies, with requests leaving mid-way, compared step by step.
// The reference keeps a block count per request and scans lists; nothing in it is shared
// with the scheduler but the limits.
#include "sim/batching/vllm_scheduler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace meshsim::cluster {
namespace {

class ReferenceVllm {
 public:
  struct Request {
    std::uint32_t slot = 0;
    std::uint32_t tokens = 0;  // prompt and outputs so far
    std::uint32_t computed = 0;
    std::uint32_t blocks = 0;  // held
    VllmRank rank;
    std::uint64_t order = 0;  // enqueue order: the tie-break of equal ranks
  };
  struct Step {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> chunks;  // slot, tokens
    std::vector<std::uint32_t> preempted;
  };

  ReferenceVllm(const VllmLimits& limits, std::uint32_t blocks) : limits_(limits), free_(blocks) {}

  void enqueue(std::uint32_t slot, std::uint32_t tokens, const VllmRank& rank) {
    waiting_.push_back(Request{slot, tokens, 0, 0, rank, enqueued_++});
  }

  Step schedule() {
    Step step;
    std::uint32_t budget = limits_.max_num_batched_tokens;
    for (std::size_t i = 0; i < running_.size(); ++i) {
      const std::uint32_t slot = running_[i].slot;
      const std::uint32_t n = chunk(running_[i], budget);
      if (n == 0) continue;
      bool fits = false;
      while (!(fits = take_blocks(*find(running_, slot), n))) {
        const std::size_t v = victim();
        Request preempted = running_[v];
        running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(v));
        if (v < i) {
          const auto it = std::find_if(step.chunks.begin(), step.chunks.end(),
                                       [&](const auto& c) { return c.first == preempted.slot; });
          budget += it->second;
          step.chunks.erase(it);
          --i;
        }
        free_ += preempted.blocks;
        preempted.blocks = preempted.computed = 0;
        step.preempted.push_back(preempted.slot);
        waiting_.insert(waiting_.begin(), preempted);  // FCFS: the front; priority: by rank when read
        if (preempted.slot == slot) break;  // nothing left to preempt: it cannot run
      }
      if (!fits) break;
      step.chunks.emplace_back(slot, n);
      budget -= n;
    }
    if (!step.preempted.empty()) return step;
    while (!waiting_.empty() && budget > 0 && running_.size() < limits_.max_num_seqs) {
      const std::size_t head = waiting_head();
      Request& r = waiting_[head];
      const std::uint32_t n = chunk(r, budget);
      if (!take_blocks(r, n)) break;
      running_.push_back(r);
      waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(head));
      step.chunks.emplace_back(running_.back().slot, n);
      budget -= n;
    }
    return step;
  }

  // The step ran: tokens computed; a chunk reaching its last known token samples one.
  // Returns the slots that sampled.
  std::vector<std::uint32_t> complete(const Step& step) {
    std::vector<std::uint32_t> sampled;
    for (const auto& [slot, n] : step.chunks) {
      Request& r = *find(running_, slot);
      r.computed += n;
      if (r.computed == r.tokens) {
        ++r.tokens;
        sampled.push_back(slot);
      }
    }
    return sampled;
  }

  void remove(std::uint32_t slot) {
    if (auto it = find(running_, slot); it != running_.end()) {
      free_ += it->blocks;
      running_.erase(it);
      return;
    }
    waiting_.erase(find(waiting_, slot));
  }

  std::vector<std::uint32_t> running() const {
    std::vector<std::uint32_t> out;
    for (const Request& r : running_) out.push_back(r.slot);
    return out;
  }
  // In admission order.
  std::vector<std::uint32_t> waiting() const {
    std::vector<std::uint32_t> out;
    ReferenceVllm copy = *this;
    while (!copy.waiting_.empty()) {
      const std::size_t head = copy.waiting_head();
      out.push_back(copy.waiting_[head].slot);
      copy.waiting_.erase(copy.waiting_.begin() + static_cast<std::ptrdiff_t>(head));
    }
    return out;
  }
  std::uint32_t free_blocks() const { return free_; }

 private:
  static std::vector<Request>::iterator find(std::vector<Request>& in, std::uint32_t slot) {
    return std::find_if(in.begin(), in.end(), [&](const Request& r) { return r.slot == slot; });
  }
  std::uint32_t chunk(const Request& r, std::uint32_t budget) const {
    std::uint32_t n = r.tokens - r.computed;
    if (limits_.long_prefill_token_threshold > 0) n = std::min(n, limits_.long_prefill_token_threshold);
    return std::min(n, budget);
  }
  bool take_blocks(Request& r, std::uint32_t n) {
    const std::uint32_t need = (r.computed + n + limits_.block_size - 1) / limits_.block_size;
    const std::uint32_t more = need > r.blocks ? need - r.blocks : 0;
    if (more > free_) return false;
    free_ -= more;
    r.blocks += more;
    return true;
  }
  // FCFS: the last admitted. Priority: the first running request of the greatest
  // (priority, arrival).
  std::size_t victim() const {
    if (limits_.policy == VllmPolicy::kFcfs) return running_.size() - 1;
    std::size_t worst = 0;
    for (std::size_t i = 0; i < running_.size(); ++i) {
      if (running_[i].rank > running_[worst].rank) worst = i;
    }
    return worst;
  }
  // FCFS: the front. Priority: the least (priority, arrival, enqueue order).
  std::size_t waiting_head() const {
    if (limits_.policy == VllmPolicy::kFcfs) return 0;
    std::size_t best = 0;
    for (std::size_t i = 0; i < waiting_.size(); ++i) {
      if (std::pair(waiting_[i].rank, waiting_[i].order) < std::pair(waiting_[best].rank, waiting_[best].order)) {
        best = i;
      }
    }
    return best;
  }

  VllmLimits limits_;
  std::uint32_t free_;
  std::vector<Request> running_;
  std::vector<Request> waiting_;
  std::uint64_t enqueued_ = 0;
};

TEST(VllmReferenceTest, RandomMixesScheduleAsThePlainRulesSayStepByStep) {
  std::uint64_t preemptions = 0, earlier_victims = 0, priority_steps = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(trial) + 101);
    const auto pick = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
    VllmLimits l;
    l.max_num_seqs = 1 + pick(8);
    l.max_num_batched_tokens = l.max_num_seqs + pick(300);
    l.block_size = std::uint32_t{1} << pick(5);
    l.long_prefill_token_threshold = pick(3) == 0 ? 1 + pick(64) : 0;
    l.prefix_caching = false;
    l.policy = trial % 2 == 0 ? VllmPolicy::kPriority : VllmPolicy::kFcfs;
    const std::uint32_t blocks = 4 + pick(60);
    VllmScheduler engine(l, blocks);
    ReferenceVllm reference(l, blocks);
    std::deque<TokenStream> streams;
    std::vector<std::uint32_t> outputs, max_outputs;
    std::vector<std::uint32_t> here;
    for (int op = 0; op < 250; ++op) {
      const std::string where = "trial " + std::to_string(trial) + " op " + std::to_string(op);
      const std::uint32_t kind = pick(10);
      if (kind < 3) {  // a request arrives; one that could never fit alone is not sent
        const std::uint32_t slot = static_cast<std::uint32_t>(streams.size());
        const std::uint32_t prompt = 1 + pick(6 * l.block_size);
        const std::uint32_t max_out = 1 + pick(20);
        streams.emplace_back(slot, prompt, std::vector<traces::ContentSegment>{}, 0);
        outputs.push_back(0);
        max_outputs.push_back(max_out);
        if (prompt + max_out > l.block_size * blocks) continue;
        // Arrivals out of enqueue order and tied, as a trace's re-sorted or batched ones are.
        const VllmRank rank{static_cast<std::int32_t>(pick(4)), pick(3) == 0 ? 7 : rng() % 1000};
        engine.enqueue(slot, streams.back(), prompt, 0, rank);
        reference.enqueue(slot, prompt, rank);
        here.push_back(slot);
      } else if (kind < 4 && !here.empty()) {  // one leaves (aborted, timed out)
        const std::size_t i = pick(static_cast<std::uint32_t>(here.size()));
        engine.remove(here[i]);
        reference.remove(here[i]);
        here.erase(here.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        const std::vector<std::uint32_t> running_before = reference.running();
        const ReferenceVllm::Step want = reference.schedule();
        const VllmScheduler::Step& got = engine.schedule();
        std::vector<std::pair<std::uint32_t, std::uint32_t>> chunks;
        for (const auto& c : got.chunks) chunks.emplace_back(c.slot, c.tokens);
        ASSERT_EQ(chunks, want.chunks) << where;
        ASSERT_EQ(got.preempted, want.preempted) << where;
        preemptions += want.preempted.size();
        priority_steps += l.policy == VllmPolicy::kPriority && !want.preempted.empty();
        for (const std::uint32_t victim : want.preempted) {
          earlier_victims += !running_before.empty() && victim != running_before.back();
        }
        if (got.chunks.empty()) continue;
        engine.complete(1);
        for (const std::uint32_t slot : reference.complete(want)) {
          if (++outputs[slot] < max_outputs[slot]) continue;
          engine.remove(slot);
          reference.remove(slot);
          here.erase(std::find(here.begin(), here.end(), slot));
        }
      }
      const std::vector<std::uint32_t> slots = engine.slots();
      ASSERT_EQ(std::vector<std::uint32_t>(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(engine.running())),
                reference.running())
          << where;
      ASSERT_EQ(std::vector<std::uint32_t>(slots.begin() + static_cast<std::ptrdiff_t>(engine.running()), slots.end()),
                reference.waiting())
          << where;
      ASSERT_EQ(engine.cache().free_blocks(), reference.free_blocks()) << where;
      const auto problems = engine.check_invariants();
      ASSERT_TRUE(problems.empty()) << where << ": " << problems.front();
    }
  }
  // The mixes reach what the rules are about: preemptions under both policies, and
  // priority victims that are not the last admitted.
  EXPECT_GT(preemptions, 500u);
  EXPECT_GT(priority_steps, 100u);
  EXPECT_GT(earlier_victims, 50u);
}

}  // namespace
}  // namespace meshsim::cluster
