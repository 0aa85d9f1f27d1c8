#include "algorithms.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "common.h"

namespace cave {

PageRankResult pagerank(Graph& g, Pool& pool, Variant variant, uint32_t iterations, double d) {
  PageRankResult r;
  const uint32_t n = g.n();
  r.score.assign(n, 1.0);
  if (n == 0) return r;
  // x[v] = score(v) / deg(v): the thesis's degree-divided values (0 for degree 0: a vertex
  // without neighbours passes nothing on).
  std::vector<double> x(n), x_next(n, 0.0);
  // Lists over several blocks are summed per block (partial[]) and the partial sums added
  // in block order, in both variants, so the result does not depend on the variant or on
  // the thread count, bit for bit.
  std::vector<int64_t> base(n, -1);
  std::vector<uint32_t> multi;
  int64_t partials = 0;
  for (uint32_t v = 0; v < n; ++v) {
    x[v] = g.degree(v) ? 1.0 / g.degree(v) : 0.0;
    if (g.degree(v) && g.last_block(v) > g.first_block(v)) {
      base[v] = partials;
      partials += g.last_block(v) - g.first_block(v) + 1;
      multi.push_back(v);
    }
  }
  std::vector<double> partial(static_cast<size_t>(partials), 0.0);
  BlockTasks tasks;
  if (variant == Variant::Blocked) {
    for (uint32_t v = 0; v < n; ++v) {
      if (g.degree(v) == 0) continue;
      for (uint64_t b = g.first_block(v), b1 = g.last_block(v); b <= b1; ++b) tasks.keys.push_back((b << 32) | v);
    }
    tasks.finish();
  }
  for (uint32_t it = 0; it < iterations; ++it) {
    const bool last = it + 1 == iterations;
    auto finish = [&](uint32_t v, double sum) {
      x_next[v] = ((1.0 - d) + d * sum) / g.degree(v);
      if (last) r.score[v] = (1.0 - d) + d * sum;
    };
    auto sum_multi = [&](uint32_t v) {
      double s = 0.0;
      const int64_t k = g.last_block(v) - g.first_block(v) + 1;
      for (int64_t c = 0; c < k; ++c) s += partial[static_cast<size_t>(base[v] + c)];
      finish(v, s);
    };
    auto chunk_sum = [&](uint32_t v) {
      return [&, v](const uint32_t* nbrs, uint32_t count, uint32_t chunk) {
        double s = 0.0;
        for (uint32_t i = 0; i < count; ++i) s += x[nbrs[i]];
        if (base[v] < 0)
          finish(v, s);
        else
          partial[static_cast<size_t>(base[v] + chunk)] = s;
      };
    };
    if (variant == Variant::NonBlocked) {
      pool.parallel_for(n, [&](size_t i, unsigned) {
        const uint32_t v = static_cast<uint32_t>(i);
        if (g.degree(v) == 0) return;
        g.for_each_chunk(v, chunk_sum(v));
        if (base[v] >= 0) sum_multi(v);
      });
    } else {
      pool.parallel_for(tasks.size(), [&](size_t t, unsigned) {
        const uint32_t b = tasks.block(t);
        Pinned p(g.cache(), b);
        for (size_t k = tasks.starts[t]; k < tasks.starts[t + 1]; ++k) {
          const uint32_t v = static_cast<uint32_t>(tasks.keys[k]);
          g.chunk_in_block(v, b, p.data(), chunk_sum(v));
        }
      });
      pool.parallel_for(multi.size(), [&](size_t i, unsigned) { sum_multi(multi[i]); });
    }
    for (uint32_t v = 0; v < n; ++v)
      if (g.degree(v) == 0) {
        x_next[v] = 0.0;
        if (last) r.score[v] = 1.0 - d;
      }
    x.swap(x_next);
  }
  for (double s : r.score) r.sum += s;
  return r;
}

WalkResult random_walk(Graph& g, Pool& pool, Variant variant, uint64_t walks, uint64_t length, uint64_t seed,
                       bool record) {
  WalkResult r;
  const uint32_t n = g.n();
  if (n == 0 || walks == 0) return r;
  // Walk w has its own generator (seeded from the master stream), so the walks do not
  // depend on thread scheduling, thread count or variant.
  Rng master(seed);
  std::vector<uint32_t> cur(walks);
  std::vector<Rng> rng;
  rng.reserve(walks);
  for (uint64_t w = 0; w < walks; ++w) {
    cur[w] = static_cast<uint32_t>(master.below(n));
    rng.emplace_back(master.next());
  }
  if (record) {
    r.paths.resize(walks);
    for (uint64_t w = 0; w < walks; ++w) r.paths[w].push_back(cur[w]);
  }
  std::vector<uint64_t> active(walks), pick(walks);
  for (uint64_t w = 0; w < walks; ++w) active[w] = w;
  std::vector<uint64_t> steps(pool.size(), 0);
  BlockTasks tasks;
  for (uint64_t step = 0; step < length && !active.empty(); ++step) {
    // A walk at a vertex without neighbours stops there (a dead end).
    std::vector<uint64_t> moving;
    moving.reserve(active.size());
    for (uint64_t w : active) {
      if (g.degree(cur[w]) == 0)
        ++r.dead_ends;
      else
        moving.push_back(w);
    }
    if (variant == Variant::NonBlocked) {
      pool.parallel_for(moving.size(), [&](size_t i, unsigned tid) {
        const uint64_t w = moving[i];
        cur[w] = g.neighbour(cur[w], rng[w].below(g.degree(cur[w])));
        ++steps[tid];
      });
    } else {
      tasks.keys.clear();
      for (uint64_t w : moving) {  // draw first, then group the walks by the block they read
        pick[w] = g.record(cur[w]).first_edge() + rng[w].below(g.degree(cur[w]));
        tasks.keys.push_back(((pick[w] / kEdgesPerBlock) << 32) | w);
      }
      tasks.finish();
      pool.parallel_for(tasks.size(), [&](size_t t, unsigned tid) {
        const uint32_t b = tasks.block(t);
        Pinned p(g.cache(), b);
        for (size_t k = tasks.starts[t]; k < tasks.starts[t + 1]; ++k) {
          const uint64_t w = tasks.keys[k] & 0xffffffffu;
          cur[w] = p.data()[pick[w] % kEdgesPerBlock];
          ++steps[tid];
        }
      });
    }
    if (record)
      for (uint64_t w : moving) r.paths[w].push_back(cur[w]);
    active.swap(moving);
  }
  for (uint64_t s : steps) r.steps += s;
  return r;
}

DfsResult pseudo_dfs(Graph& g, unsigned threads, uint32_t source, uint32_t threshold) {
  DfsResult r;
  const uint32_t n = g.n();
  if (n == 0) return r;
  if (threads == 0) threads = 1;
  std::vector<std::atomic<uint8_t>> visited(n);
  for (auto& v : visited) v.store(0, std::memory_order_relaxed);
  r.order.assign(n, -1);
  std::atomic<int64_t> rank{0};
  std::atomic<uint64_t> splits{0};

  // Up to `threads` stacks exist at once (thesis: at most k_r); `live` counts stacks that are
  // queued or being explored. The thesis's inner `while` spins when no stack may be created
  // (Algorithm 7, lines 16-23, [T:1453-1460]): here a thread that cannot split simply goes on with its stack.
  std::mutex m;
  std::condition_variable cv;
  std::deque<std::vector<uint32_t>> queue;
  unsigned live = 1;
  visited[source].store(1);
  queue.push_back({source});
  std::exception_ptr error;
  std::atomic<bool> failed{false};  // a read or check failed: every thread drops its stack

  auto worker = [&]() {
    for (;;) {
      std::vector<uint32_t> stack;
      {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return !queue.empty() || live == 0; });
        if (queue.empty()) return;
        stack = std::move(queue.front());
        queue.pop_front();
      }
      try {
        while (!stack.empty() && !failed.load(std::memory_order_relaxed)) {
          const uint32_t v = dfs_step(g, stack, visited, threshold, [&](std::span<const uint32_t> bottom) {
            std::lock_guard<std::mutex> lock(m);
            if (live >= threads) return false;
            queue.emplace_back(bottom.begin(), bottom.end());
            ++live;
            splits.fetch_add(1, std::memory_order_relaxed);
            cv.notify_one();
            return true;
          });
          r.order[v] = rank.fetch_add(1, std::memory_order_relaxed);
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        if (!error) error = std::current_exception();
        failed.store(true);
      }
      std::lock_guard<std::mutex> lock(m);
      if (--live == 0) cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  r.visited = static_cast<uint64_t>(rank.load());
  r.splits = splits.load();
  return r;
}

}  // namespace cave
