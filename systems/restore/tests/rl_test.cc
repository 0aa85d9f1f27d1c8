// Membership functions, the FRB basis and the TD(lambda) update (Eq. 6.2-6.6) on hand-computed numbers.
#include "rl.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace restore;

TEST(Membership, SigmoidThroughHalfAtTheMean) {
  Membership m = Membership::fit(0.4, 2.0);  // b = 10 / 2 = 5
  EXPECT_DOUBLE_EQ(m.b, 5.0);
  EXPECT_NEAR(m.large(0.4), 0.5, 1e-15);
  EXPECT_NEAR(m.small(0.4), 0.5, 1e-15);
  // x - xbar = 0.1 range: 1 / (1 + e^-1) = 0.7311; 0.25 range: 0.9241.
  EXPECT_NEAR(m.large(0.4 + 0.2), 0.7310585786, 1e-9);
  EXPECT_NEAR(m.large(0.4 - 0.5), 1 - 0.9241418200, 1e-9);
  // The thesis's form 1 / (1 + a e^{-b x}) with a = e^{b xbar}.
  for (double x : {-1.0, 0.0, 0.3, 1.7}) EXPECT_NEAR(m.large(x), 1.0 / (1.0 + m.a() * std::exp(-m.b * x)), 1e-12);
  EXPECT_NEAR(m.large(1.0) + m.small(1.0), 1.0, 1e-15);
}

TEST(Membership, RuleBasisIsTheProductOfMemberships) {
  Membership m1 = Membership::fit(0.5, 1.0), m2 = Membership::fit(100, 400);
  double phi[kRules];
  rule_basis(m1, m2, 0.6, 50, phi);
  const double l1 = 1 / (1 + std::exp(-10 * 0.1)), l2 = 1 / (1 + std::exp(-(10.0 / 400) * -50));
  EXPECT_NEAR(phi[0], (1 - l1) * (1 - l2), 1e-12);  // (S, S)
  EXPECT_NEAR(phi[1], (1 - l1) * l2, 1e-12);        // (S, L)
  EXPECT_NEAR(phi[2], l1 * (1 - l2), 1e-12);        // (L, S)
  EXPECT_NEAR(phi[3], l1 * l2, 1e-12);              // (L, L)
  EXPECT_NEAR(phi[0] + phi[1] + phi[2] + phi[3], 1.0, 1e-12);
}

TEST(TdAgent, TwoStepsByHand) {
  TdParams p;  // lambda 0.8, beta 0.1, lr0 0.1, lr_decay 100, p_init 0
  TdAgent a(p);
  const double s0[4] = {0.1, 0.2, 0.3, 0.4}, s1[4] = {0.25, 0.25, 0.25, 0.25}, s2[4] = {0.4, 0.3, 0.2, 0.1};
  // Step 1: gamma = e^-0.1, delta = 100 + gamma * 0 - 0 = 100, z = phi(s0), alpha = 0.1:
  // p = 0.1 * 100 * phi(s0) = (1, 2, 3, 4).
  EXPECT_DOUBLE_EQ(a.step(s0, 100, 1, s1), 100);
  EXPECT_NEAR(a.p()[0], 1, 1e-12);
  EXPECT_NEAR(a.p()[3], 4, 1e-12);
  EXPECT_NEAR(a.learning_rate(0), 0.1 / (1 + 100 * 0.1), 1e-15);
  // Step 2 (tau = 2): v(s1) = 2.5, v(s2) = 0.4 + 0.6 + 0.6 + 0.4 = 2, gamma = e^-0.2 = 0.8187307531,
  // delta = 50 + 0.8187307531 * 2 - 2.5 = 49.1374615062.
  const double gamma = 0.8187307530779818, delta = 49.13746150615596;
  EXPECT_NEAR(a.step(s1, 50, 2, s2), delta, 1e-9);
  const double z0 = 0.8 * gamma * 0.1 + 0.25, z3 = 0.8 * gamma * 0.4 + 0.25;
  EXPECT_NEAR(a.z()[0], z0, 1e-12);
  EXPECT_NEAR(a.z()[3], z3, 1e-12);
  EXPECT_NEAR(a.p()[0], 1 + 0.1 / (1 + 100 * 0.1) * delta * z0, 1e-9);
  EXPECT_NEAR(a.p()[3], 4 + 0.1 / (1 + 100 * 0.4) * delta * z3, 1e-9);
}

TEST(TdAgent, ConvergesToTheDiscountedReturnOfAConstantReward) {
  // One state, reward 10 each step of tau 1: v = 10 / (1 - e^-beta).
  TdParams p;
  p.lr_decay = 0;  // a constant rate of 0.1 so that it converges quickly
  TdAgent a(p);
  const double s[4] = {0.25, 0.25, 0.25, 0.25};
  for (int i = 0; i < 20000; i++) a.step(s, 10, 1, s);
  EXPECT_NEAR(a.value(s), 10 / (1 - std::exp(-0.1)), 0.05);
}

TEST(SlidingStats, WindowMeanMinMax) {
  SlidingStats st(3);
  for (double x : {1.0, 5.0, 2.0, 8.0}) st.push(x);
  EXPECT_DOUBLE_EQ(st.mean(), 5.0);
  EXPECT_DOUBLE_EQ(st.min(), 2.0);
  EXPECT_DOUBLE_EQ(st.max(), 8.0);
  st.push(3.0);
  st.push(4.0);  // window: 8, 3, 4
  EXPECT_DOUBLE_EQ(st.min(), 3.0);
  EXPECT_DOUBLE_EQ(st.max(), 8.0);
  st.push(1.0);  // 3, 4, 1
  EXPECT_DOUBLE_EQ(st.max(), 4.0);
  EXPECT_DOUBLE_EQ(st.min(), 1.0);
}

TEST(Membership, IndependentBasisWeighsEachMembershipAlone) {
  // The original code's features (RL_Agent_2states.h L45-50): mu_L(s1), mu_S(s1), mu_L(s2),
  // mu_S(s2), normalised by their sum, 2.
  Membership m1 = Membership::fit(0.5, 1.0), m2 = Membership::fit(100, 400);
  double phi[kRules];
  rule_basis(m1, m2, 0.6, 50, phi, Basis::kIndependent);
  const double l1 = 1 / (1 + std::exp(-10 * 0.1)), l2 = 1 / (1 + std::exp(-(10.0 / 400) * -50));
  EXPECT_NEAR(phi[0], l1 / 2, 1e-12);
  EXPECT_NEAR(phi[1], (1 - l1) / 2, 1e-12);
  EXPECT_NEAR(phi[2], l2 / 2, 1e-12);
  EXPECT_NEAR(phi[3], (1 - l2) / 2, 1e-12);
}
