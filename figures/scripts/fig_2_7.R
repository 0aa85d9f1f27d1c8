# Thesis Figure 2.7 (T537-543): "Bypassing the file system allows for 1.7x (1.4x) higher read (write)
# throughput for PCIe SSD, while the values of both alpha and k are more stable across the
# experiments." (A) the raw device's throughput vs threads, (B) the latency/bandwidth profile with
# and without the file system. This script draws, for every declared raw block device paired with
# its file-system twin (configs/devices.yaml, file_system_twin): (A) bandwidth of random 4 KiB and
# 8 KiB reads and writes on the raw device vs the number of threads, and (B) mean latency vs
# bandwidth of 4 KiB random reads and writes along the thread search, with and without the file system.
# Reads results/pio/raw_vs_fs.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])
ssds <- unique(d$ssd)

series_of <- function(op, block_size) paste0(block_size / 1024, " KiB ", op, "s")
raw <- d[d$access == "without file system" & d$block_size %in% c(4096, 8192), ]
raw <- raw[order(match(raw$ssd, ssds), raw$op, raw$block_size, raw$threads), ]
profile <- d[d$block_size == 4096, ]
profile <- profile[order(match(profile$ssd, ssds), profile$access, profile$op, profile$threads), ]

panel_a <- data.frame(ssd = raw$ssd, panel = "(A) raw device: bandwidth (MB/s) vs #threads",
                      x = raw$threads, y = raw$bandwidth_bytes_s / 1e6,
                      series = series_of(raw$op, raw$block_size), access = "without file system")
panel_b <- data.frame(ssd = profile$ssd, panel = "(B) 4 KiB: mean latency (us) vs bandwidth (MB/s)",
                      x = profile$bandwidth_bytes_s / 1e6, y = profile$lat_mean_us,
                      series = series_of(profile$op, profile$block_size), access = profile$access)
long <- rbind(panel_a, panel_b)
long$ssd <- factor(long$ssd, levels = ssds)
long$group <- paste(long$series, long$access)

p <- ggplot(long, aes(x, y, colour = series, linetype = access, group = group)) +
  geom_path() + geom_point(size = 0.9) +
  facet_wrap(vars(ssd, panel), scales = "free", ncol = 2, labeller = function(l) label_value(l, multi_line = FALSE)) +
  expand_limits(y = 0) +
  scale_colour_manual(name = NULL, values = c("4 KiB reads" = "#08519c", "8 KiB reads" = "#6baed6",
                                              "4 KiB writes" = "#a50f15", "8 KiB writes" = "#fb6a4a")) +
  scale_linetype_manual(name = NULL, values = c("without file system" = "solid", "with file system" = "dashed")) +
  labs(x = "#threads (A) or bandwidth in MB/s (B)", y = NULL) +
  theme_thesis()
save_figure(p, io$output, width = 6.5, height = 2.6 * length(ssds) + 0.6, title = "Figure 2.7")
