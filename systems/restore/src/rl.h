// ReStore's value function and learner (thesis §6.4.2, Eq. 6.2-6.6).
//
//  * Membership (L1847): mu_Large(x) = 1 / (1 + a e^{-b x}), mu_Small = 1 - mu_Large, with
//    b = b_scale / range(x) (b_scale = 10 in the thesis) and a = e^{b xbar}, so that
//    mu_Large(xbar) = 0.5. xbar and range are the mean and max - min of the last `fit_window`
//    observations of x, refitted every `fit_every` observations (the original code refits every
//    4 rounds from the last 500 values).
//  * FRB value (Eq. 6.3): four rules (s1, s2) in {S, L}^2, w^i = mu(s1) mu(s2),
//    v(s) = sum p^i w^i / sum w^i = sum p^i phi^i. The original code instead weighs four
//    independent memberships (Basis::kIndependent, RL_Agent_2states.h L45-50).
//  * TD(lambda) (Eq. 6.5-6.6): gamma = e^{-beta tau}, z^i = lambda gamma z^i + phi^i(s_n),
//    alpha^i = lr0 / (1 + lr_decay * sum_{t<n} phi^i(s_t)), p^i += alpha^i delta z^i with
//    delta = R_n + gamma v(s_{n+1}) - v(s_n).
//  v is a cost (expected discounted future response time, in microseconds) and R_n the measured
//  mean discounted response time, both positive: the thesis's v = -cost (see README).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace restore {

constexpr int kRules = 4;  // rule index = 2 * [s1 Large] + [s2 Large]

// kProduct: the thesis's rules, w^i = mu(s1) mu(s2) (L1845, Eq. 6.3). kIndependent: the original
// code's features, w = (mu_L(s1), mu_S(s1), mu_L(s2), mu_S(s2)) in that order, each rule a single
// membership (RL_Agent_2states.h L45-50; the product rules are commented out there, L51-55).
enum class Basis { kProduct, kIndependent };

struct Membership {
  double xbar = 0.0;
  double b = 10.0;
  double large(double x) const { return 1.0 / (1.0 + std::exp(b * (xbar - x))); }
  double small(double x) const { return 1.0 - large(x); }
  double a() const { return std::exp(b * xbar); }
  // The thesis's parameterisation from the expected value and the range of x.
  static Membership fit(double xbar, double range, double b_scale = 10.0) { return Membership{xbar, b_scale / range}; }
};

// phi^i(s) = w^i(s) / sum_k w^k(s) for the four rules of `basis`.
void rule_basis(const Membership& m1, const Membership& m2, double s1, double s2, double phi[kRules],
                Basis basis = Basis::kProduct);

// Sliding-window mean, min and max of the last `window` observations (monotonic deques).
class SlidingStats {
 public:
  explicit SlidingStats(uint32_t window) : window_(window) {}
  void push(double x);
  uint64_t count() const { return n_; }
  double mean() const { return values_.empty() ? 0.0 : sum_ / static_cast<double>(values_.size()); }
  double min() const { return mins_.front().second; }
  double max() const { return maxs_.front().second; }
  size_t memory_bytes() const;

 private:
  uint32_t window_;
  uint64_t n_ = 0;
  double sum_ = 0;
  std::deque<double> values_;
  std::deque<std::pair<uint64_t, double>> mins_, maxs_;
};

struct TdParams {
  double lambda = 0.8;    // original code (RL_Agent_2states.h)
  double beta = 0.1;      // original code
  double lr0 = 0.1;       // thesis L1900
  double lr_decay = 100;  // thesis Eq. 6.6
  double p_init = 0.0;    // original code
};

class TdAgent {
 public:
  explicit TdAgent(const TdParams& params);
  double value(const double phi[kRules]) const;
  // One TD(lambda) step: the agent spent `tau` in the state with basis phi_n and received the
  // reward R; phi_next is the basis of the state it is in now. Returns delta.
  double step(const double phi_n[kRules], double reward, double tau, const double phi_next[kRules]);
  const double* p() const { return p_; }
  const double* z() const { return z_; }
  double learning_rate(int i) const { return params_.lr0 / (1.0 + params_.lr_decay * acc_[i]); }

 private:
  TdParams params_;
  double p_[kRules];
  double z_[kRules] = {0, 0, 0, 0};
  double acc_[kRules] = {0, 0, 0, 0};  // sum of phi^i over past states
};

}  // namespace restore
