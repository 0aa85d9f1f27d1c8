#include "rl.h"

namespace restore {

void rule_basis(const Membership& m1, const Membership& m2, double s1, double s2, double phi[kRules], Basis basis) {
  const double l1 = m1.large(s1), l2 = m2.large(s2);
  const double mu1[2] = {1.0 - l1, l1}, mu2[2] = {1.0 - l2, l2};
  double total = 0;
  for (int i = 0; i < kRules; i++) {
    if (basis == Basis::kProduct)
      phi[i] = mu1[i >> 1] * mu2[i & 1];
    else
      phi[i] = i < 2 ? mu1[1 - i] : mu2[3 - i];  // L1, S1, L2, S2: the weights sum to 2
    total += phi[i];
  }
  for (int i = 0; i < kRules; i++) phi[i] /= total;  // the product rules' total is 1 up to rounding
}

void SlidingStats::push(double x) {
  n_++;
  values_.push_back(x);
  sum_ += x;
  if (values_.size() > window_) {
    sum_ -= values_.front();
    values_.pop_front();
  }
  const uint64_t oldest = n_ > window_ ? n_ - window_ : 0;  // indices < oldest left the window
  while (!mins_.empty() && mins_.back().second >= x) mins_.pop_back();
  mins_.emplace_back(n_ - 1, x);
  while (mins_.front().first < oldest) mins_.pop_front();
  while (!maxs_.empty() && maxs_.back().second <= x) maxs_.pop_back();
  maxs_.emplace_back(n_ - 1, x);
  while (maxs_.front().first < oldest) maxs_.pop_front();
}

size_t SlidingStats::memory_bytes() const {
  return values_.size() * sizeof(double) + (mins_.size() + maxs_.size()) * sizeof(std::pair<uint64_t, double>);
}

TdAgent::TdAgent(const TdParams& params) : params_(params) {
  for (double& p : p_) p = params.p_init;
}

double TdAgent::value(const double phi[kRules]) const {
  double v = 0;
  for (int i = 0; i < kRules; i++) v += p_[i] * phi[i];
  return v;
}

double TdAgent::step(const double phi_n[kRules], double reward, double tau, const double phi_next[kRules]) {
  const double gamma = std::exp(-params_.beta * tau);
  const double delta = reward + gamma * value(phi_next) - value(phi_n);
  for (int i = 0; i < kRules; i++) {
    z_[i] = params_.lambda * gamma * z_[i] + phi_n[i];
    const double rate = learning_rate(i);
    acc_[i] += phi_n[i];
    p_[i] += rate * delta * z_[i];
  }
  return delta;
}

}  // namespace restore
