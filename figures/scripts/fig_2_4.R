# Thesis Figure 2.4 (T490-495): "(A) The Optane SSD has lower k and alpha ~ 1. (B) Latency does
# not increase until saturation." This script draws, for every measured device (columns, in the
# order of the CSV): (A) bandwidth and (B) mean latency of random 4 KiB and 8 KiB reads and writes
# vs the number of threads (fio thread search, QD 1), with a dotted vertical line at the estimated
# k_r / k_w of each series. (A) also prints those k values ("k >= n" where the search found no
# plateau, so k is only a lower bound).
# Reads results/pio/sweeps.csv results/pio/alpha_k.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
sweeps <- read_tidy(io$inputs[[1]])
alpha_k <- read_tidy(io$inputs[[2]])

block_sizes <- c(4096, 8192)
devices <- unique(sweeps$device)
n_dev <- length(devices)

d <- sweeps[sweeps$sweep == "threads" & sweeps$pattern == "random" & sweeps$block_size %in% block_sizes, ]
d <- d[order(match(d$device, devices), d$op, d$block_size, d$threads), ]
series_levels <- c("4 KiB reads", "8 KiB reads", "4 KiB writes", "8 KiB writes")
series_of <- function(op, block_size) factor(paste0(block_size / 1024, " KiB ", op, "s"), levels = series_levels)
series_colours <- c("4 KiB reads" = "#08519c", "8 KiB reads" = "#6baed6",
                    "4 KiB writes" = "#a50f15", "8 KiB writes" = "#fb6a4a")

# Panels: with up to 3 devices, row A (bandwidth) above row B (latency), one column per device;
# with more, each device gets an (A, B) pair and two devices share a row.
metric_levels <- c("A", "B")
metric_titles <- c(A = "(A)~~Bandwidth~(MB/s)", B = "(B)~~Mean~latency~(mu*s)")
# Two strip lines per panel; the first facet variable sets the panel order.
panel_of <- function(frame) {
  frame$device_label <- factor(frame$device, levels = devices, labels = plotmath_string(devices))
  frame$metric_label <- factor(frame$metric, levels = metric_levels, labels = metric_titles[metric_levels])
  frame
}
facets <- if (n_dev <= 3) vars(metric_label, device_label) else vars(device_label, metric_label)

long <- rbind(
  data.frame(device = d$device, metric = "A", threads = d$threads, value = d$bandwidth_bytes_s / 1e6,
             series = series_of(d$op, d$block_size)),
  data.frame(device = d$device, metric = "B", threads = d$threads, value = d$lat_mean_us,
             series = series_of(d$op, d$block_size))
)
long <- panel_of(long)

# Estimated k per series (random pattern), drawn in both rows.
ak <- alpha_k[alpha_k$pattern == "random" & alpha_k$block_size %in% block_sizes & alpha_k$device %in% devices, ]
ak <- ak[order(match(ak$device, devices), ak$block_size), ]
k_lines <- rbind(
  data.frame(device = ak$device, series = series_of("read", ak$block_size), k = ak$k_r,
             saturated = is_true(ak$read_saturated)),
  data.frame(device = ak$device, series = series_of("write", ak$block_size), k = ak$k_w,
             saturated = is_true(ak$write_saturated))
)
k_vlines <- panel_of(rbind(transform(k_lines, metric = "A"), transform(k_lines, metric = "B")))

# k values printed in the headroom of each (A) panel, one line per block size.
k_term <- function(name, k, saturated) sprintf("k[%s] %s %d", name, ifelse(saturated, "==", ">="), as.integer(k))
k_text <- panel_of(data.frame(
  device = ak$device, metric = "A",
  line = match(ak$block_size, block_sizes),
  label = sprintf('"%d KiB:"~~%s*","~~%s', ak$block_size / 1024,
                  k_term("r", ak$k_r, is_true(ak$read_saturated)),
                  k_term("w", ak$k_w, is_true(ak$write_saturated)))
))
headroom <- aggregate(value ~ device + metric, data = long[long$metric == "A", ], FUN = max)
headroom <- panel_of(transform(headroom, value = value * if (n_dev <= 3) 1.5 else 2.1, threads = min(long$threads)))

p <- ggplot(long, aes(threads, value, colour = series)) +
  geom_vline(data = k_vlines, aes(xintercept = k, colour = series), linetype = "dotted",
             linewidth = 0.6, show.legend = FALSE) +
  geom_line() + geom_point(aes(shape = series), size = 1) +
  geom_blank(data = headroom, aes(threads, value), inherit.aes = FALSE) +
  geom_text(data = k_text, aes(x = min(long$threads), y = Inf, label = label, vjust = 0.3 + 1.5 * line),
            inherit.aes = FALSE, parse = TRUE, hjust = 0, size = if (n_dev <= 3) 2.3 else 2, colour = "grey20") +
  facet_wrap(facets, ncol = if (n_dev <= 3) n_dev else 4, scales = "free_y", labeller = label_parsed) +
  expand_limits(y = 0) +
  scale_x_continuous(trans = "log2", breaks = log2_breaks) +
  scale_colour_manual(name = NULL, values = series_colours, drop = FALSE) +
  scale_shape_manual(name = NULL, values = c(16, 17, 16, 17), breaks = series_levels, drop = FALSE) +
  labs(x = "#threads issuing concurrent I/Os (QD 1 each)", y = NULL,
       caption = expression("Dotted lines: estimated " * k[r] * " (reads) and " * k[w] * " (writes) of each series")) +
  theme_thesis()
rows <- if (n_dev <= 3) 2 else ceiling(n_dev / 2)
save_figure(p, io$output, width = 6.5, height = min(4.5, 0.6 + 1.65 * rows), title = "Thesis Figure 2.4")
