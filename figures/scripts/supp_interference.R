# Supplementary figure (not in the thesis): the read/write interference experiment of Yang's NVM
# study (J. Yang, "High Performance Storage System Design Using Emerging Storage Technologies",
# PhD thesis, University of Minnesota, 2021, §2.5.3 and Figure 2.5): foreground 4 KiB random reads
# (one job, QD 1) while a background job writes at a controlled rate. This script draws, per measured
# device (in the order of the CSV), the foreground read latency (mean and p99, microseconds) vs the
# measured background write bandwidth (MB/s); the point at 0 MB/s is the read latency without
# background load.
# Reads results/pio/interference.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])

devices <- unique(d$device)
n_dev <- length(devices)
d <- d[order(match(d$device, devices), d$background_bytes_s), ]
d$device <- factor(d$device, levels = devices)
long <- rbind(
  data.frame(device = d$device, background = d$background_bytes_s / 1e6, latency = d$lat_mean_us, stat = "mean"),
  data.frame(device = d$device, background = d$background_bytes_s / 1e6, latency = d$lat_p99_us, stat = "p99")
)
long$stat <- factor(long$stat, levels = c("mean", "p99"))

p <- ggplot(long, aes(background, latency, colour = stat, shape = stat)) +
  geom_line() + geom_point(size = 1.3) +
  facet_wrap(~device, ncol = min(n_dev, 3), scales = "free") +
  expand_limits(x = 0, y = 0) +
  scale_colour_manual(name = "Foreground 4 KiB random reads (QD 1):",
                      values = c(mean = "#1a9850", p99 = "#d73027"),
                      labels = c(mean = "mean latency", p99 = "p99 latency")) +
  scale_shape_manual(name = "Foreground 4 KiB random reads (QD 1):", values = c(mean = 16, p99 = 17),
                     labels = c(mean = "mean latency", p99 = "p99 latency")) +
  labs(x = "Measured background write bandwidth (MB/s)", y = expression("Read latency (" * mu * "s)")) +
  theme_thesis()
rows <- ceiling(n_dev / 3)
save_figure(p, io$output, width = 6.5, height = min(4.5, 0.8 + 2.2 * rows),
            title = "Read latency under background writes")
