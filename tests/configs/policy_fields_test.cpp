// The preemption policy's fields have one home (scheduler::for_each_policy_field): random
// policies go through every path that lists them (as_update and update_policy; the
// config writer and reader) and come back equal. A field missing from the list, or
// handled by one path and not another, fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <type_traits>

#include "configs/object_reader.hpp"
#include "configs/scheduler_args.hpp"

namespace meshsim::configs {
namespace {

namespace sch = meshsim::scheduler;

sch::PreemptionPolicy random_policy(std::mt19937_64& rng) {
  const auto number = [&] { return std::uniform_real_distribution<double>(0, 100)(rng); };
  sch::PreemptionPolicy p;
  p.same_pool_priority_threshold = number();
  p.cross_pool_priority_threshold = number();
  p.remaining_time_weight = number();
  p.min_preempt_score = number();
  p.enable_cross_pool_preemption = rng() % 2 == 0;
  for (int i = 0, n = static_cast<int>(rng() % 3); i < n; ++i) {
    p.protected_pools.push_back("pool-" + std::to_string(rng() % 9));
  }
  if (rng() % 2 == 0) p.label_preemption_rules["tier"]["gold"] = {"silver", "bronze"};
  p.label_priority_threshold = number();
  p.enable_label_preemption = rng() % 2 == 0;
  if (rng() % 2 == 0) p.label_max_priority_deficit = number();
  p.cancel_timeout = number();
  p.min_runtime_before_preemption = number();
  p.hold_timeout = number();
  return p;
}

TEST(PolicyFieldsTest, EveryFieldSurvivesEveryPathThatListsThem) {
  std::mt19937_64 rng(7);
  int fields = 0;
  sch::for_each_policy_field([&](const char*, auto, auto) { ++fields; });
  EXPECT_EQ(fields, 13) << "a field was added: give random_policy a value for it";
  for (int trial = 0; trial < 200; ++trial) {
    const sch::PreemptionPolicy policy = random_policy(rng);
    // as_update, then update_policy onto the defaults.
    sch::PreemptionPolicy applied;
    ASSERT_TRUE(sch::update_policy(applied, sch::as_update(policy)).result.success);
    EXPECT_EQ(applied, policy) << "trial " << trial;
    // Written as a config's "preemption" object and read back.
    const nlohmann::json written = to_json(policy);
    ConfigErrors errors("policy.json");
    ObjectReader reader(&written, "preemption", errors);
    const sch::PolicyUpdate read = read_policy_update(reader);
    ASSERT_TRUE(errors.empty()) << errors.to_string();
    sch::PreemptionPolicy reread;
    ASSERT_TRUE(sch::update_policy(reread, read).result.success);
    EXPECT_EQ(reread, policy) << "trial " << trial << ": " << written.dump();
  }
}

TEST(PolicyFieldsTest, EveryNumberIsRefusedNegativeOrNotFiniteNamingItsKey) {
  sch::for_each_policy_field([&](const char* name, auto, auto update_field) {
    using Value = std::remove_cvref_t<decltype(*(sch::PolicyUpdate{}.*update_field))>;
    if constexpr (std::is_same_v<Value, double>) {
      for (const double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
        sch::PolicyUpdate update;
        update.*update_field = bad;
        sch::PreemptionPolicy policy;
        const auto result = sch::update_policy(policy, update);
        EXPECT_FALSE(result.result.success) << name;
        EXPECT_NE(result.result.error.find(std::string(name) + " must be a finite number >= 0"), std::string::npos)
            << result.result.error;
        EXPECT_EQ(policy, sch::PreemptionPolicy{}) << name << ": a refused update changes nothing";
      }
    }
  });
}

}  // namespace
}  // namespace meshsim::configs
