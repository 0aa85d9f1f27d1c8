# Supplementary figure (not in the thesis): a fio thread sweep on an emulated SSD
# (emussd) with declared alpha, k_r and k_w. Throughput must grow until the declared
# k and then stay flat at k / service time; latency must stay flat until k and then
# grow with the queue (the knee the thesis uses to read k off a device, T490-495).
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])
d$op <- factor(d$op, levels = c("read", "write"), labels = c("Random 4 KiB reads", "Random 4 KiB writes"))
panel <- function(metric, y, series) {
  data.frame(op = d$op, threads = d$threads, metric = metric, value = y, series = series)
}
long <- rbind(
  panel("Throughput (kIOPS)", d$iops / 1000, "throughput"),
  panel("Latency (ms)", d$lat_mean_us / 1000, "mean latency"),
  panel("Latency (ms)", d$lat_p99_us / 1000, "p99 latency")
)
long$metric <- factor(long$metric, levels = c("Throughput (kIOPS)", "Latency (ms)"))
declared <- unique(data.frame(op = d$op, k = d$declared_k,
                              metric = factor("Throughput (kIOPS)", levels = levels(long$metric)),
                              iops = d$declared_iops / 1000))
p <- ggplot(long, aes(threads, value, colour = series)) +
  geom_vline(data = declared, aes(xintercept = k), linetype = "dashed", colour = "grey40") +
  geom_hline(data = declared, aes(yintercept = iops), linetype = "dotted", colour = "grey40") +
  geom_line() + geom_point(size = 0.9) +
  facet_wrap(~ metric + op, scales = "free", ncol = 2, strip.position = "top",
             labeller = function(l) label_value(l, multi_line = FALSE)) +
  expand_limits(y = 0) +
  scale_colour_manual(name = NULL, values = c(throughput = "#4575b4", "mean latency" = "#1a9850",
                                              "p99 latency" = "#d73027")) +
  labs(x = "#threads issuing concurrent I/Os", y = NULL,
       subtitle = sprintf("emussd: read %g us/page, alpha = %g; dashed: declared k, dotted: k / service time",
                          unique(d$declared_read_latency_us), unique(d$declared_alpha))) +
  theme_thesis()
save_figure(p, io$output, width = 6.5, height = 4.2, title = "emussd saturation sweep")
