# Thesis Figure 2.8 (T545-549): "(A) The asymmetry is high when I/O size is smaller than native
# page size; as I/O size increases alpha decreases. (B) The concurrency decreases for larger I/O
# size." This script draws, from alpha_k.csv (random pattern), one line per measured device (in the
# order of the CSV): (A) alpha = max read / max write bandwidth vs I/O size, (B) k_r (solid) and
# k_w (dashed) vs I/O size; a triangle marks a k that is only a lower bound (no plateau found).
# The thesis's printed alpha values for the SATA and PCIe SSD (with FS) at 1, 4 and 8 KiB (T547,
# T499, T508; from headline_numbers.csv) are overlaid in (A) as hollow grey markers "thesis: ...".
# Reads results/pio/alpha_k.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
alpha_k <- read_tidy(io$inputs[[1]])
headline <- read_tidy(io$inputs[[2]])

devices <- unique(alpha_k$device)
ak <- alpha_k[alpha_k$pattern == "random", ]
ak <- ak[order(match(ak$device, devices), ak$block_size), ]

# Thesis alpha per (device, I/O size): the ids of headline_numbers.csv that print them.
thesis_ids <- data.frame(
  id = c("sata_alpha_1k", "sata_alpha_4k_fig2_8", "sata_alpha_8k",
         "pcie_alpha_1k", "pcie_alpha_4k_fig2_8", "pcie_alpha_8k"),
  source = rep(c("thesis: SATA", "thesis: PCIe"), each = 3),
  kib = rep(c(1, 4, 8), times = 2)
)
hit <- match(thesis_ids$id, headline$id)
if (any(is.na(hit))) stop("headline_numbers.csv lacks: ", paste(thesis_ids$id[is.na(hit)], collapse = ", "))
thesis <- data.frame(panel = "A", kib = thesis_ids$kib, value = as.numeric(headline$value[hit]),
                     source = thesis_ids$source)

panel_levels <- c("A", "B")
panel_labels <- c("(A)~~alpha == BW[r]^max / BW[w]^max", "(B)~~Concurrency~~k[r]~and~k[w]")
quantity_levels <- c("alpha", "k_r", "k_w")
measured <- rbind(
  data.frame(panel = "A", device = ak$device, kib = ak$block_size / 1024, value = ak$alpha,
             quantity = "alpha", mark = "measured"),
  data.frame(panel = "B", device = ak$device, kib = ak$block_size / 1024, value = ak$k_r, quantity = "k_r",
             mark = ifelse(is_true(ak$read_saturated), "measured", "measured: k is a lower bound")),
  data.frame(panel = "B", device = ak$device, kib = ak$block_size / 1024, value = ak$k_w, quantity = "k_w",
             mark = ifelse(is_true(ak$write_saturated), "measured", "measured: k is a lower bound"))
)
measured$device <- factor(measured$device, levels = devices)
measured$quantity <- factor(measured$quantity, levels = quantity_levels)
mark_levels <- c("measured", "measured: k is a lower bound", "thesis: SATA", "thesis: PCIe")
measured$mark <- factor(measured$mark, levels = mark_levels)
thesis$mark <- factor(thesis$source, levels = mark_levels)
measured$panel <- factor(measured$panel, levels = panel_levels, labels = panel_labels)
thesis$panel <- factor(thesis$panel, levels = panel_levels, labels = panel_labels)
# alpha = 1 (no asymmetry) is drawn in (A); k = 1 (no concurrency) is kept in range in (B).
reference <- data.frame(panel = factor(panel_labels[1], levels = panel_labels), value = 1)
k_floor <- data.frame(panel = factor(panel_labels[2], levels = panel_labels), kib = min(measured$kib), value = 1)

device_colours <- setNames(c("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#a6761d",
                             "#e6ab02", "#666666")[seq_along(devices)], devices)
if (length(devices) > 8) stop("fig_2_8.R has colours for at most 8 devices")
# Log-axis breaks: powers of two, with 3 x 2^n in between when the range is narrow.
log_breaks <- function(limits) {
  n <- seq(floor(log2(limits[1])), ceiling(log2(limits[2])))
  b <- sort(c(2^n, 3 * 2^(n - 1)))
  b <- b[b >= limits[1] & b <= limits[2]]
  if (length(b) > 7) b <- b[abs(log2(b) - round(log2(b))) < 1e-9]
  b
}
sizes <- sort(unique(c(measured$kib, thesis$kib)))
p <- ggplot(measured, aes(kib, value)) +
  geom_hline(data = reference, aes(yintercept = value), linetype = "dotted", colour = "grey50") +
  geom_blank(data = k_floor) +
  geom_line(aes(colour = device, linetype = quantity, group = interaction(device, quantity))) +
  geom_point(aes(colour = device, shape = mark), size = 1.5) +
  geom_point(data = thesis, aes(shape = mark), colour = "grey35", size = 2, stroke = 0.7) +
  facet_wrap(~panel, nrow = 1, scales = "free_y", labeller = label_parsed) +
  scale_x_continuous(trans = "log2", breaks = sizes, labels = format(sizes)) +
  scale_y_continuous(trans = "log2", breaks = log_breaks, labels = function(b) as.character(signif(b, 3))) +
  scale_colour_manual(name = NULL, values = device_colours) +
  scale_linetype_manual(name = NULL, values = c(alpha = "solid", k_r = "solid", k_w = "dashed"),
                        breaks = c("k_r", "k_w"), labels = expression(k[r], k[w])) +
  scale_shape_manual(name = NULL, values = c("measured" = 16, "measured: k is a lower bound" = 17,
                                             "thesis: SATA" = 0, "thesis: PCIe" = 5),
                     breaks = intersect(mark_levels, c(as.character(measured$mark), as.character(thesis$mark)))) +
  guides(colour = guide_legend(order = 1), linetype = guide_legend(order = 2),
         shape = guide_legend(order = 3, override.aes = list(colour = "grey35"))) +
  labs(x = "I/O size (KiB)", y = NULL) +
  theme_thesis() +
  theme(legend.box = "vertical", legend.spacing.y = unit(0, "lines"))
save_figure(p, io$output, width = 6.5, height = 3.2, title = "Thesis Figure 2.8")
