# Thesis Figure 2.5 (T499-508): "k and alpha depends on the file system, access type, and block
# size." (A) PCIe SSD, (B) SATA SSD. This script draws one panel per measured device (in the order
# of the CSV; the strip names the device's kind, e.g. file = through a file system, block = raw
# device): bandwidth vs the number of threads (fio thread search, QD 1) for random 4 KiB,
# sequential 4 KiB and random 8 KiB, reads (solid) and writes (dashed). Each panel prints the
# alpha (max read / max write bandwidth) and k_r, k_w of every (pattern, block size) from
# alpha_k.csv ("k >= n" where the search found no plateau, so k is only a lower bound).
# Reads results/pio/sweeps.csv results/pio/alpha_k.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
sweeps <- read_tidy(io$inputs[[1]])
alpha_k <- read_tidy(io$inputs[[2]])

devices <- unique(sweeps$device)
n_dev <- length(devices)

configs <- data.frame(pattern = c("random", "sequential", "random"), block_size = c(4096, 4096, 8192),
                      config = c("random 4 KiB", "sequential 4 KiB", "random 8 KiB"),
                      short = c("rand. 4K", "seq. 4K", "rand. 8K"))
config_colours <- c("random 4 KiB" = "#1b9e77", "sequential 4 KiB" = "#7570b3", "random 8 KiB" = "#d95f02")
config_of <- function(pattern, block_size) {
  hit <- match(paste(pattern, block_size), paste(configs$pattern, configs$block_size))
  factor(configs$config[hit], levels = configs$config)
}

# Strip: device name and kind (file / block / emulated), in the device order of sweeps.csv.
kinds <- alpha_k$kind[match(devices, alpha_k$device)]
device_labels <- ifelse(is.na(kinds), devices, sprintf("%s (%s)", devices, kinds))
device_of <- function(device) factor(device, levels = devices, labels = device_labels)

d <- sweeps[sweeps$sweep == "threads", ]
d$config <- config_of(d$pattern, d$block_size)
d <- d[!is.na(d$config), ]
d <- d[order(match(d$device, devices), d$config, d$op, d$threads), ]
d$panel <- device_of(d$device)
d$op <- factor(d$op, levels = c("read", "write"), labels = c("reads", "writes"))
d$mb_s <- d$bandwidth_bytes_s / 1e6

ak <- alpha_k[alpha_k$device %in% devices, ]
ak$config <- config_of(ak$pattern, ak$block_size)
ak <- ak[!is.na(ak$config), ]
ak <- ak[order(match(ak$device, devices), ak$config), ]
k_term <- function(name, k, saturated) sprintf("k[%s]%s%d", name, ifelse(saturated, "==", ">="), as.integer(k))
labels <- data.frame(
  panel = device_of(ak$device),
  line = as.integer(ak$config),
  config = ak$config,
  label = sprintf('"%s:"~alpha == "%s"*","~~%s*","~~%s', configs$short[as.integer(ak$config)], sig_format(ak$alpha),
                  k_term("r", ak$k_r, is_true(ak$read_saturated)),
                  k_term("w", ak$k_w, is_true(ak$write_saturated)))
)
# Headroom above the curves for the labels.
headroom <- aggregate(mb_s ~ panel, data = d, FUN = max)
headroom$mb_s <- headroom$mb_s * 1.55
headroom$threads <- min(d$threads)

p <- ggplot(d, aes(threads, mb_s, colour = config, linetype = op, shape = op,
                   group = interaction(config, op))) +
  geom_line() + geom_point(size = 1) +
  geom_blank(data = headroom, aes(threads, mb_s), inherit.aes = FALSE) +
  geom_text(data = labels, aes(x = min(d$threads), y = Inf, label = label, colour = config,
                               vjust = 0.3 + 1.5 * line),
            inherit.aes = FALSE, parse = TRUE, hjust = 0, size = 2.2, show.legend = FALSE) +
  facet_wrap(~panel, ncol = min(n_dev, 3), scales = "free_y") +
  expand_limits(y = 0) +
  scale_x_continuous(trans = "log2", breaks = log2_breaks) +
  scale_colour_manual(name = NULL, values = config_colours, drop = FALSE) +
  scale_linetype_manual(name = NULL, values = c(reads = "solid", writes = "dashed")) +
  scale_shape_manual(name = NULL, values = c(reads = 16, writes = 17)) +
  labs(x = "#threads issuing concurrent I/Os (QD 1 each)", y = "Bandwidth (MB/s)") +
  theme_thesis()
rows <- ceiling(n_dev / 3)
save_figure(p, io$output, width = 6.5, height = min(4.5, 0.8 + 2.3 * rows), title = "Thesis Figure 2.5")
