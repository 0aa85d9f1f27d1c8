# Thesis Figure 2.6A (T515): "The Virtual SSD is software-controlled, exhibiting alpha ~ 2 prior to
# saturation", read off the ratio of the slopes of 4K read and write IOPS vs concurrent I/Os.
# This script draws, per measured device (in the order of the CSV), 4 KiB random read and write
# IOPS vs the number of threads (fio thread search, QD 1; linear axes) and a least-squares line
# through the origin fitted to the points up to the estimated k of each op (threads <= k_r for
# reads, <= k_w for writes; filled points are fitted, hollow ones are not). Each panel prints
# both slopes and their ratio (read slope / write slope), the asymmetry before saturation.
# Reads results/pio/sweeps.csv results/pio/alpha_k.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
sweeps <- read_tidy(io$inputs[[1]])
alpha_k <- read_tidy(io$inputs[[2]])

devices <- unique(sweeps$device)
n_dev <- length(devices)

d <- sweeps[sweeps$sweep == "threads" & sweeps$pattern == "random" & sweeps$block_size == 4096, ]
d <- d[order(match(d$device, devices), d$op, d$threads), ]
ak <- alpha_k[alpha_k$pattern == "random" & alpha_k$block_size == 4096, ]
k_of <- function(device, op) ifelse(op == "read", ak$k_r[match(device, ak$device)], ak$k_w[match(device, ak$device)])
d$k <- k_of(d$device, d$op)
if (any(is.na(d$k))) stop("alpha_k.csv has no random 4096-byte row for: ",
                          paste(unique(d$device[is.na(d$k)]), collapse = ", "))
d$fitted <- factor(ifelse(d$threads <= d$k, "fitted (threads <= k)", "not fitted (threads > k)"),
                   levels = c("fitted (threads <= k)", "not fitted (threads > k)"))
d$device <- factor(d$device, levels = devices)
d$op <- factor(d$op, levels = c("read", "write"), labels = c("reads", "writes"))
d$kiops <- d$iops / 1000

# Least squares through the origin: slope = sum(x y) / sum(x^2) over the fitted points.
fits <- do.call(rbind, lapply(split(d[d$threads <= d$k, ], list(d$device[d$threads <= d$k], d$op[d$threads <= d$k]),
                                    drop = TRUE), function(g) {
  data.frame(device = g$device[1], op = g$op[1], k = g$k[1], slope = sum(g$threads * g$iops) / sum(g$threads^2))
}))
fits <- fits[order(as.integer(fits$device), as.integer(fits$op)), ]
# Draw each line from the origin until it leaves the op's measured range (or the last thread count).
reach <- aggregate(cbind(iops, threads) ~ device + op, data = d, FUN = max)
fits$x_end <- pmin(reach$threads[match(paste(fits$device, fits$op), paste(reach$device, reach$op))],
                   1.15 * reach$iops[match(paste(fits$device, fits$op), paste(reach$device, reach$op))] / fits$slope)
fit_lines <- rbind(data.frame(device = fits$device, op = fits$op, threads = 0, kiops = 0),
                   data.frame(device = fits$device, op = fits$op, threads = fits$x_end,
                              kiops = fits$slope * fits$x_end / 1000))

ratio <- do.call(rbind, lapply(split(fits, fits$device, drop = TRUE), function(f) {
  r <- f$slope[f$op == "reads"]
  w <- f$slope[f$op == "writes"]
  if (length(r) != 1 || length(w) != 1) return(NULL)
  data.frame(device = f$device[1], ratio = r / w)
}))
labels <- rbind(
  data.frame(device = fits$device, line = as.integer(fits$op),
             label = sprintf('"%s: %s IOPS/thread (threads" <= %d*")"', fits$op, sig_format(fits$slope),
                             as.integer(fits$k))),
  data.frame(device = ratio$device, line = 3L,
             label = sprintf('"slope ratio:"~~alpha %%~~%% "%s"', sig_format(ratio$ratio)))
)
labels$device <- factor(labels$device, levels = devices)
headroom <- aggregate(kiops ~ device, data = d, FUN = max)
headroom$kiops <- headroom$kiops * 1.5
headroom$threads <- 0

op_colours <- c(reads = "#4575b4", writes = "#d73027")
p <- ggplot(d, aes(threads, kiops, colour = op)) +
  geom_line(data = fit_lines, aes(group = op), linetype = "dashed", linewidth = 0.5) +
  geom_point(aes(shape = fitted), size = 1.4, stroke = 0.6) +
  geom_blank(data = headroom, aes(threads, kiops), inherit.aes = FALSE) +
  geom_text(data = labels, aes(x = 0, y = Inf, label = label, vjust = 0.3 + 1.5 * line),
            inherit.aes = FALSE, parse = TRUE, hjust = 0, size = 2.2, colour = "grey20") +
  facet_wrap(~device, ncol = min(n_dev, 3), scales = "free") +
  expand_limits(x = 0, y = 0) +
  scale_colour_manual(name = NULL, values = op_colours) +
  scale_shape_manual(name = NULL, values = c(16, 1), drop = FALSE,
                     labels = c(expression("fitted (threads" <= k * ")"),
                                expression("not fitted (threads" > k * ")"))) +
  labs(x = "#threads issuing concurrent I/Os (QD 1 each)", y = "4 KiB random kIOPS",
       caption = "Dashed: least-squares line through the origin; slope ratio = read slope / write slope") +
  theme_thesis()
rows <- ceiling(n_dev / 3)
save_figure(p, io$output, width = 6.5, height = min(4.5, 0.9 + 2.3 * rows), title = "Thesis Figure 2.6A")
