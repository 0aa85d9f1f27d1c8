// The policies of thesis Chapter 6 (policy.h): Static, the score policies (tLFU, tLRU, LRFU,
// EXD), TEMP and ReStore, and their names.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "policy.h"

namespace restore {

// ---------------------------------------------------------------------------------------------

ScorePolicy::ScorePolicy(ScoreKind kind, const std::vector<TierSpec>& tiers, uint32_t pages, const PolicyParams& params)
    : HeapPolicy(tiers, pages), kind_(kind), params_(params) {
  victim_after_insert_ = params.victim == PolicyParams::Victim::kAfter;
  if (kind == ScoreKind::kLrfu || kind == ScoreKind::kExd) {
    last_.assign(pages, 0);
    // Never-requested pages: CRF / EXD score 0, i.e. log 0.
    for (uint32_t p = 0; p < pages; p++) set_key(p, -std::numeric_limits<double>::infinity(), 0);
  }
}

size_t ScorePolicy::memory_bytes() const { return HeapPolicy::memory_bytes() + last_.capacity() * sizeof(uint32_t); }

double ScorePolicy::score(uint32_t page, uint64_t now) const {
  const double k = key(page), t = static_cast<double>(now);
  switch (kind_) {
    case ScoreKind::kLrfu: return std::exp2(k - params_.lrfu_lambda * t);
    case ScoreKind::kExd: return std::exp(k - params_.exd_alpha * t);
    default: return k;
  }
}

void ScorePolicy::access(uint32_t page, Op, uint64_t now, QueueProbe&, std::vector<Move>& moves) {
  const uint32_t stamp = static_cast<uint32_t>(now + 1);
  const double t = static_cast<double>(now);
  // tLRU decides on the recency the page had before this request (thesis L1924: the metadata is
  // updated after the operation; the original Run_tLRU.cpp updates it "after decision"). With the
  // refreshed recency every request to a lower tier would trivially be the most recent one.
  const double before = key(page);
  switch (kind_) {
    case ScoreKind::kTlfu: set_key(page, key(page) + 1.0, stamp); break;
    case ScoreKind::kTlru:
      set_key(page, static_cast<double>(stamp), stamp);  // recency: request index + 1 (0 = never)
      break;
    case ScoreKind::kLrfu: {
      // C = 1 + C_old 2^{-lambda (t - t_last)}; key = log2 C + lambda t (order-preserving over time).
      const double decayed = std::exp2(key(page) - params_.lrfu_lambda * t);  // 0 when never requested
      set_key(page, std::log2(1.0 + decayed) + params_.lrfu_lambda * t, stamp);
      break;
    }
    case ScoreKind::kExd: {
      const double decayed = std::exp(key(page) - params_.exd_alpha * t);
      set_key(page, std::log1p(decayed) + params_.exd_alpha * t, stamp);
      break;
    }
    default: break;
  }
  if (kind_ == ScoreKind::kLrfu || kind_ == ScoreKind::kExd) last_[page] = stamp;
  const int tier = tier_of(page);
  if (tier == 0) return;
  const double decision_key = kind_ == ScoreKind::kTlru ? before : key(page);
  // The original tLRU promotes only a page more recent than the faster tier's least recent by more
  // than that tier's capacity in requests (PolicyParams::TlruMargin).
  const bool margin = kind_ == ScoreKind::kTlru && params_.tlru_margin == PolicyParams::TlruMargin::kCapacity;
  const double needed = margin ? static_cast<double>(tiers_[static_cast<size_t>(tier - 1)].capacity_pages) : 0.0;
  if (!full(tier - 1) || decision_key > key(lowest(tier - 1)) + needed) promote(page, moves);
}

// ---------------------------------------------------------------------------------------------

TempPolicy::TempPolicy(const std::vector<TierSpec>& tiers, uint32_t pages, const PolicyParams& params)
    : HeapPolicy(tiers, pages),
      model_(pages, params.temp, this),
      sum_(tiers.size(), 0),
      admit_(tiers.size(), -std::numeric_limits<double>::infinity()) {
  victim_after_insert_ = params.victim == PolicyParams::Victim::kAfter;
  for (size_t t = 0; t < admit_.size() && t < params.temp_admit.size(); t++)
    admit_[t] = TemperatureModel::heat(params.temp.increase, params.temp_admit[t]);
  for (uint32_t p = 0; p < pages; p++) set_key(p, model_.temperature(p), 0);  // the initial temperature
  sum_tiers();
}

void TempPolicy::place(const std::vector<uint8_t>& tier_of) {
  HeapPolicy::place(tier_of);
  sum_tiers();
}

void TempPolicy::sum_tiers() {
  std::fill(sum_.begin(), sum_.end(), 0);
  for (uint32_t p = 0; p < pages_; p++) sum_[tier_of(p)] += fixed(model_.temperature(p));
}

void TempPolicy::temperature_changed(uint32_t page, double before, double after) {
  sum_[tier_of(page)] += fixed(after) - fixed(before);
  set_key(page, after, model_.last_stamp(page));
}

void TempPolicy::moved(uint32_t page, int from, int to) {
  const int64_t f = fixed(model_.temperature(page));
  sum_[static_cast<size_t>(from)] -= f;
  sum_[static_cast<size_t>(to)] += f;
}

double TempPolicy::mean_temperature(int tier) const {
  const uint64_t n = size(tier);
  return n == 0 ? 0.0 : total_temperature(tier) / static_cast<double>(n);
}

void TempPolicy::heat(uint32_t page, uint64_t now) {
  model_.advance(now);
  model_.touch(page, now);
  set_key(page, model_.temperature(page), model_.last_stamp(page));  // the stamp changed even if T did not
}

void TempPolicy::access(uint32_t page, Op, uint64_t now, QueueProbe&, std::vector<Move>& moves) {
  heat(page, now);
  const int tier = tier_of(page);
  if (tier == 0) return;
  const double t = model_.temperature(page);
  if (t > admit_[static_cast<size_t>(tier - 1)] && (!full(tier - 1) || t > mean_temperature(tier - 1)))
    promote(page, moves);
}

size_t TempPolicy::memory_bytes() const {
  return HeapPolicy::memory_bytes() + model_.memory_bytes() + sum_.capacity() * sizeof(int64_t);
}

// ---------------------------------------------------------------------------------------------

RestorePolicy::RestorePolicy(const std::vector<TierSpec>& tiers, uint32_t pages, const PolicyParams& params)
    : TempPolicy(tiers, pages, params), rl_(params.rl), rng_(derive_seed(params.seed, 7)) {
  if (rl_.epsilon.size() < tiers.size() - 1)
    rl_.epsilon.resize(tiers.size() - 1, rl_.epsilon.empty() ? 0.0 : rl_.epsilon.back());
  for (size_t t = 0; t < tiers.size(); t++) {
    agents_.emplace_back(rl_);
    // Before any observation: s1 in [0, 1] (range 1, mean 0.5); s2 centred at 0 with the range
    // of one queued task.
    agents_.back().m1 = Membership::fit(0.5, 1.0, rl_.b_scale);
    agents_.back().m2 = Membership::fit(0.0, tiers[t].avg_process_time_us(), rl_.b_scale);
  }
  if (rl_.start == RlParams::Start::kOriginal) {
    const uint32_t every = rl_.fit_every;
    rl_.fit_every = 1;  // fit the seed observation at once, whatever the cadence
    for (int t = 0; t < Policy::tiers(); t++) observe_state(t, 0.5, s2_of(t, 1));
    rl_.fit_every = every;
  }
}

double RestorePolicy::s2_of(int tier, uint64_t queued) const {
  return static_cast<double>(queued) * tiers_[static_cast<size_t>(tier)].avg_process_time_us();
}

void RestorePolicy::observe_state(int tier, double s1, double s2) {
  Agent& a = agents_[static_cast<size_t>(tier)];
  a.fit1.push(s1);
  a.fit2.push(s2);
  if (a.fit1.count() % rl_.fit_every == 0) {
    // Ranges have a floor so that a constant input gives a steep but finite sigmoid.
    const bool original = rl_.floor == RlParams::Floor::kOriginal;
    const double r1 = std::max(a.fit1.max() - a.fit1.min(), original ? 0.1 / pages_ : 1e-3);
    const double r2 = std::max(a.fit2.max() - a.fit2.min(), original ? s2_of(tier, 2) : 1e-3 * s2_of(tier, 1));
    const bool mean = rl_.centre == RlParams::Centre::kMean;
    a.m1 = Membership::fit(mean ? a.fit1.mean() : (a.fit1.max() + a.fit1.min()) / 2, r1, rl_.b_scale);
    a.m2 = Membership::fit(mean ? a.fit2.mean() : (a.fit2.max() + a.fit2.min()) / 2, r2, rl_.b_scale);
  }
}

void RestorePolicy::observe_every_tier(QueueProbe& probe) {
  for (int t = 0; t < tiers(); t++) observe_state(t, mean_temperature(t), s2_of(t, probe.queued(t)));
}

double RestorePolicy::cost(int tier, double s1, double s2) const {
  const Agent& a = agents_[static_cast<size_t>(tier)];
  double phi[kRules];
  rule_basis(a.m1, a.m2, s1, s2, phi, rl_.basis);
  return a.td.value(phi);
}

void RestorePolicy::td_step(uint64_t now, QueueProbe& probe) {
  for (int t = 0; t < tiers(); t++) {
    Agent& a = agents_[static_cast<size_t>(t)];
    const double s1 = mean_temperature(t), s2 = s2_of(t, probe.queued(t));
    if (rl_.observe_every == 0) observe_state(t, s1, s2);
    double phi[kRules];
    rule_basis(a.m1, a.m2, s1, s2, phi, rl_.basis);
    if (!a.started) {
      a.started = true;
    } else {
      a.tau += 1.0;
      const bool model = rl_.reward == RlParams::Reward::kModel;
      if (!model && a.reward_n == 0) continue;  // no request reached the tier: still in s_n (semi-Markov)
      const double reward = model ? model_cost() : a.reward_sum / static_cast<double>(a.reward_n);
      a.td.step(a.phi, reward, a.tau, phi);
      a.updates++;
    }
    std::copy(phi, phi + kRules, a.phi);
    a.tau = 0;
    a.since = now;
    a.reward_sum = 0;
    a.reward_n = 0;
  }
}

void RestorePolicy::observe(int tier, double response_us, uint64_t now) {
  Agent& a = agents_[static_cast<size_t>(tier)];
  if (!a.started) return;
  // R_n = (1/X_n) sum r_i e^{-beta (t_{n,i} - t_n)}, times in TD steps; t_{n,i} is when the response
  // is observed (`now`), never before s_n began: a response observed at the step that began s_n
  // counts whole. (In unsigned arithmetic an earlier `now` would wrap to a weight of 0 while
  // still counting in X_n, biasing R_n low: the emulator once passed the request's issue index.)
  const uint64_t at = std::max(now, a.since);
  const double elapsed = static_cast<double>(at - a.since) / rl_.step;
  a.reward_sum += response_us * std::exp(-rl_.td.beta * elapsed);
  a.reward_n++;
}

double RestorePolicy::model_cost() const {
  double cost = 0;
  for (int t = 0; t < tiers(); t++) {
    const TierSpec& s = tiers_[static_cast<size_t>(t)];
    const double mean_io_us = 0.5 * (s.read_latency_us + s.alpha * s.read_latency_us);  // reads and writes alike
    cost += mean_io_us * static_cast<double>(size(t)) * std::exp((1.0 + mean_temperature(t)) / 2.0);
  }
  return cost / static_cast<double>(pages_);
}

bool RestorePolicy::released_step_due(uint64_t now) const {
  if (!outside_seen_) return false;
  const uint64_t since = now - first_outside_;
  return since < rl_.init_rounds || since % rl_.step == 1;
}

// The released transition's second half: the state after the request's decision and moves (their
// migration I/Os counted as queued, as the released code submits them before it looks), the reward
// of the placement now, one step of every agent from the basis it had before the request.
void RestorePolicy::released_step(QueueProbe& probe, const std::vector<Move>& moves) {
  const double reward = model_cost();
  for (int t = 0; t < tiers(); t++) {
    Agent& a = agents_[static_cast<size_t>(t)];
    uint64_t queued = probe.queued(t);
    for (const Move& m : moves) queued += (m.from == t) + (m.to == t);  // a read on one side, a write on the other
    double phi[kRules];
    rule_basis(a.m1, a.m2, mean_temperature(t), s2_of(t, queued), phi, rl_.basis);
    a.td.step(before_[static_cast<size_t>(t)].data(), reward, 1.0, phi);
    a.updates++;
  }
}

void RestorePolicy::access(uint32_t page, Op, uint64_t now, QueueProbe& probe, std::vector<Move>& moves) {
  const int i = tier_of(page);
  if (i != 0 && !outside_seen_) {
    outside_seen_ = true;
    first_outside_ = now;
  }
  const bool per_request = rl_.transition == RlParams::Transition::kRequest;
  const bool due = per_request && released_step_due(now);
  if (due) {  // the state before the request, as the released code records it
    before_.resize(static_cast<size_t>(tiers()));
    for (int t = 0; t < tiers(); t++) {
      const Agent& a = agents_[static_cast<size_t>(t)];
      rule_basis(a.m1, a.m2, mean_temperature(t), s2_of(t, probe.queued(t)), before_[static_cast<size_t>(t)].data(),
                 rl_.basis);
    }
  }
  const bool warming = outside_seen_ && now - first_outside_ < rl_.init_rounds;
  if (!per_request && (now % rl_.step == 0 || warming)) td_step(now, probe);
  heat(page, now);
  if (i != 0) decide(page, i, probe, moves);
  if (due) released_step(probe, moves);
  // The original observes at the end of its 1-based request i, i % N == 0 (Run_RL.cpp L1445).
  if (rl_.observe_every > 0 && (now + 1) % rl_.observe_every == 0) observe_every_tier(probe);
}

void RestorePolicy::decide(uint32_t page, int i, QueueProbe& probe, std::vector<Move>& moves) {
  const int j = i - 1;
  decisions_++;
  const bool is_full = full(j);
  const double tk = temperature(page);
  // The page a promotion would demote: with victim_after_insert_ the page itself if it is colder
  // than all of tier j (it comes straight back, and the upgraded state is the present one).
  double td = is_full ? temperature(lowest(j)) : 0.0;
  if (is_full && victim_after_insert_) td = std::min(td, tk);
  const double ni = static_cast<double>(size(i)), nj = static_cast<double>(size(j));
  const double si = total_temperature(i), sj = total_temperature(j);
  const uint64_t qi = probe.queued(i), qj = probe.queued(j);
  const uint64_t extra = is_full ? 2 : 1;  // migration I/Os each tier gets: read/write of K (+ of the victim)
  const double s1_i = si / ni, s1_j = nj > 0 ? sj / nj : 0.0;
  const double s2_i = s2_of(i, qi), s2_j = s2_of(j, qj);
  if (rl_.observe_every == 0) {
    observe_state(i, s1_i, s2_i);
    observe_state(j, s1_j, s2_j);
  }
  if (rl_.decision == RlParams::Decision::kReleased) {
    // The released code's states after an upgrade: K moved alone (the victim left where it is),
    // two more queued tasks on each tier.
    const double s1_i_up = ni > 1 ? (si - tk) / (ni - 1) : 0.0, s1_j_up = (sj + tk) / (nj + 1);
    double ci_not = cost(i, s1_i, s2_i), cj_not = cost(j, s1_j, s2_j);
    double ci_up = cost(i, s1_i_up, s2_of(i, qi + 2)), cj_up = cost(j, s1_j_up, s2_of(j, qj + 2));
    if (ci_not == 0.0 || cj_not == 0.0) ci_not = cj_not = ci_up = cj_up = 0.0;  // its zero rule
    explore_and_move(page, j, cj_not + ci_up >= cj_up + ci_not, moves);
    return;
  }
  const double si_up = si - tk + td, sj_up = sj + tk - td;
  const double ni_up = ni - 1 + (is_full ? 1 : 0), nj_up = nj + 1 - (is_full ? 1 : 0);
  const double s1_i_up = ni_up > 0 ? si_up / ni_up : 0.0, s1_j_up = sj_up / nj_up;
  double wi_not = 1.0, wj_not = 1.0, wi_up = 1.0, wj_up = 1.0;
  if (rl_.decision == RlParams::Decision::kMean) {
    wi_not = s1_i, wj_not = s1_j, wi_up = s1_i_up, wj_up = s1_j_up;
  } else if (rl_.decision == RlParams::Decision::kTotal) {
    wi_not = si, wj_not = sj, wi_up = si_up, wj_up = sj_up;
  }
  const double not_cost = wi_not * cost(i, s1_i, s2_i) + wj_not * cost(j, s1_j, s2_j);
  const double up_cost =
      wi_up * cost(i, s1_i_up, s2_of(i, qi + extra)) + wj_up * cost(j, s1_j_up, s2_of(j, qj + extra));
  // Eq. 6.4 with v = -cost: upgrade iff the predicted cost of the two tiers does not increase.
  explore_and_move(page, j, up_cost <= not_cost, moves);
}

void RestorePolicy::explore_and_move(uint32_t page, int j, bool upgrade, std::vector<Move>& moves) {
  const double eps = rl_.epsilon[static_cast<size_t>(j)];
  if (eps > 0 && rng_.uniform() < eps) upgrade = rl_.explore == RlParams::Explore::kUpgrade || rng_.below(2) == 1;
  if (upgrade) promote(page, moves);
}

size_t RestorePolicy::memory_bytes() const {
  size_t bytes = TempPolicy::memory_bytes();
  for (const Agent& a : agents_) bytes += sizeof(Agent) + a.fit1.memory_bytes() + a.fit2.memory_bytes();
  return bytes;
}

// ---------------------------------------------------------------------------------------------

namespace {
template <ScoreKind kind>
std::unique_ptr<Policy> make_score(const std::vector<TierSpec>& tiers, uint32_t pages, const PolicyParams& params) {
  return std::make_unique<ScorePolicy>(kind, tiers, pages, params);
}
template <class P>
std::unique_ptr<Policy> make(const std::vector<TierSpec>& tiers, uint32_t pages, const PolicyParams& params) {
  return std::make_unique<P>(tiers, pages, params);
}
}  // namespace

std::vector<NamedPolicy> builtin_policies() {
  return {{"static",
           [](const std::vector<TierSpec>& tiers, uint32_t pages, const PolicyParams&) -> std::unique_ptr<Policy> {
             return std::make_unique<StaticPolicy>(tiers, pages);
           }},
          {"tlfu", make_score<ScoreKind::kTlfu>},
          {"tlru", make_score<ScoreKind::kTlru>},
          {"lrfu", make_score<ScoreKind::kLrfu>},
          {"exd", make_score<ScoreKind::kExd>},
          {"temp", make<TempPolicy>},
          {"restore", make<RestorePolicy>}};
}

}  // namespace restore
