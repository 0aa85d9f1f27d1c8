# Supplementary figure (not in the thesis): the queue-depth sweep of Yang's NVM study (J. Yang,
# "High Performance Storage System Design Using Emerging Storage Technologies", PhD thesis,
# University of Minnesota, 2021, §2.5.2 and Figure 2.4), which varies the I/O depth of a single job
# where the thesis varies threads.
# This script draws, per measured device (in the order of the CSV), bandwidth vs iodepth (one fio
# job, log2 axis) for reads and writes of every (pattern, block size) the sweep measured.
# Reads results/pio/sweeps.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
sweeps <- read_tidy(io$inputs[[1]])

devices <- unique(sweeps$device)
n_dev <- length(devices)

d <- sweeps[sweeps$sweep == "queue_depth", ]
if (nrow(d) == 0) stop("sweeps.csv has no queue_depth sweep")
d <- d[order(match(d$device, devices), d$pattern, d$block_size, d$op, d$iodepth), ]
d$device <- factor(d$device, levels = devices)
d$op <- factor(d$op, levels = c("read", "write"), labels = c("reads", "writes"))
configs <- unique(d[, c("pattern", "block_size")])
config_labels <- sprintf("%s %g KiB (%s)", configs$pattern, configs$block_size / 1024,
                         sapply(seq_len(nrow(configs)), function(i) {
                           paste(sort(unique(d$engine[d$pattern == configs$pattern[i] &
                                                      d$block_size == configs$block_size[i]])), collapse = ", ")
                         }))
d$config <- factor(match(paste(d$pattern, d$block_size), paste(configs$pattern, configs$block_size)),
                   levels = seq_len(nrow(configs)), labels = config_labels)
d$mb_s <- d$bandwidth_bytes_s / 1e6

p <- ggplot(d, aes(iodepth, mb_s, colour = op, linetype = config, group = interaction(op, config))) +
  geom_line() + geom_point(aes(shape = op), size = 1.1) +
  facet_wrap(~device, ncol = min(n_dev, 3), scales = "free_y") +
  expand_limits(y = 0) +
  scale_x_continuous(trans = "log2", breaks = log2_breaks) +
  scale_colour_manual(name = NULL, values = c(reads = "#4575b4", writes = "#d73027")) +
  scale_shape_manual(name = NULL, values = c(reads = 16, writes = 17)) +
  scale_linetype_discrete(name = NULL) +
  labs(x = "I/O depth (requests in flight, one fio job)", y = "Bandwidth (MB/s)") +
  theme_thesis()
rows <- ceiling(n_dev / 3)
save_figure(p, io$output, width = 6.5, height = min(4.5, 0.8 + 2.2 * rows), title = "Queue-depth sweep")
