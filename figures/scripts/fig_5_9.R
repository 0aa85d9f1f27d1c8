# Thesis Figure 5.9 (T1568-1577). Panel A: "CAVE performs well across all datasets for PBFS. Only
# Mosaic has a better performance for the sparse RN dataset." CAVE's speedup over each baseline for
# BFS with a memory budget of 3 % of CAVE's file, per generated graph (as Figure 5.1B, on every graph).
# Panel B: "CPU usage of CAVE remains low showing that its benefit
# comes from better SSD utilization - CAVE is I/O-bound, not CPU-bound." During one blocked parallel
# BFS on the social graph (as FS) with as many concurrent I/Os as the device's k_r: the process's
# CPU utilization and the read bandwidth divided by fio's random-read bandwidth at the same
# concurrency on the same device (the thesis's definition, T1577), every 100 ms. Dashed: the
# thesis's "generally below 5 %" CPU and "around 100 %" bandwidth; dotted: fio's CPU utilization
# for the same reads at the same concurrency on the same device (what the reads alone cost).
# Reads results/cave/fig_5_9a.csv results/cave/fig_5_9b.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(3)
speedups <- read_tidy(io$inputs[[1]])
d <- read_tidy(io$inputs[[2]])
reference <- read_tidy(io$inputs[[3]])
a <- plot_cave_speedups(speedups, cave_thesis_speedups(reference, "cave_pbfs_speedup")) +
  labs(subtitle = "(A) CAVE's speedup, BFS")
long <- rbind(data.frame(d[, c("device", "t_s")], metric = "CPU utilization", value = d$cpu_pct),
              data.frame(d[, c("device", "t_s")], metric = "device bandwidth utilization",
                         value = d$bandwidth_util_pct))
thesis <- data.frame(metric = c("CPU utilization", "device bandwidth utilization"),
                     value = c(reference_value(reference, "cave_cpu_utilization_max"),
                               reference_value(reference, "cave_disk_bw_utilization")))
reads_alone <- aggregate(fio_cpu_pct ~ device, d, mean)
p <- ggplot(long, aes(t_s, value, colour = metric)) +
  geom_hline(data = thesis, aes(yintercept = value, colour = metric), linetype = "dashed", show.legend = FALSE) +
  geom_hline(data = reads_alone, aes(yintercept = fio_cpu_pct), colour = "#d95f02", linetype = "dotted") +
  geom_line() + geom_point(size = 0.6) +
  facet_wrap(~device) +
  scale_colour_manual(name = NULL,
                      values = c("CPU utilization" = "#d95f02", "device bandwidth utilization" = "#1b9e77")) +
  labs(x = "Time since BFS started (s)", y = "Utilization (%)",
       subtitle = sprintf("(B) BFS with %d concurrent I/Os; dashed: thesis; dotted: fio's CPU",
                         as.integer(d$io_threads[1]))) +
  theme_thesis()
save_figure(stack_plots(list(a, p), c(1, 1), 4.8, 6.4), io$output, width = 4.8, height = 6.4, title = "Figure 5.9")
