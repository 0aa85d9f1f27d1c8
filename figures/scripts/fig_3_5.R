# Thesis Figure 3.5 (T660-665): "Speedup increases as more concurrent I/Os are used until the device
# is saturated." A bufferpool with unbatchable reads and batchable writes (f_r = 0.5) evicts
# write_batch dirty pages at once; speedup over evicting one page at a time. This script draws,
# per measured device (in the order of the CSV; one panel per read fraction too if the CSV has
# several): the measured speedup vs write_batch (points and line), the PIO model's prediction from
# the device's measured alpha_cost and k_w (dashed), and a dashed vertical line at k_w.
# Reads results/pio/writeback.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])

devices <- unique(d$device)
fractions <- sort(unique(d$read_fraction))
# One panel per (device, read fraction); the strip's second line gives the model inputs.
keys <- unique(d[order(match(d$device, devices), d$read_fraction), c("device", "read_fraction", "alpha", "k_w")])
if (anyDuplicated(keys[, c("device", "read_fraction")])) stop("writeback.csv: several alpha / k_w for one device")
# No model line where the device's alpha_cost is below 1 (the PIO model needs writes >= reads).
keys$info <- sprintf("%s%s*\",\"~~k[w] == %d",
                     if (length(fractions) > 1) sprintf("f[r] == %s*\",\"~~", format(keys$read_fraction)) else "",
                     ifelse(is.na(keys$alpha), '"no model:"~~alpha[cost] < 1',
                            sprintf("alpha[cost] == %s", sig_format(keys$alpha))),
                     as.integer(keys$k_w))
with_panel <- function(frame) {
  row <- match(paste(frame$device, frame$read_fraction), paste(keys$device, keys$read_fraction))
  frame$device_label <- factor(frame$device, levels = devices, labels = plotmath_string(devices))
  frame$info_label <- factor(keys$info[row], levels = unique(keys$info))
  frame
}
d <- d[order(match(d$device, devices), d$read_fraction, d$write_batch), ]
long <- with_panel(rbind(
  data.frame(device = d$device, read_fraction = d$read_fraction, write_batch = d$write_batch,
             speedup = d$speedup, series = "measured"),
  data.frame(device = d$device, read_fraction = d$read_fraction, write_batch = d$write_batch,
             speedup = d$model_speedup, series = "PIO model")))
long <- long[!is.na(long$speedup), ]
k_lines <- with_panel(keys)

n_panels <- nrow(keys)
p <- ggplot(long, aes(write_batch, speedup, colour = series, linetype = series)) +
  geom_hline(yintercept = 1, colour = "grey70", linewidth = 0.3) +
  geom_vline(data = k_lines, aes(xintercept = k_w), linetype = "dashed", colour = "grey40") +
  geom_line() +
  geom_point(data = long[long$series == "measured", ], size = 1.2) +
  facet_wrap(vars(device_label, info_label), ncol = min(n_panels, 3), scales = "free", labeller = label_parsed) +
  expand_limits(x = 1, y = 1) +
  scale_x_continuous(breaks = function(l) unique(round(pretty(l)))) +
  scale_colour_manual(name = NULL, values = c(measured = "#4575b4", "PIO model" = "#d73027")) +
  scale_linetype_manual(name = NULL, values = c(measured = "solid", "PIO model" = "dashed")) +
  labs(x = "#concurrent write-backs per eviction (write_batch)", y = "Speedup (x)",
       subtitle = parse(text = paste0(if (length(fractions) == 1)
                                        sprintf('"read fraction"~f[r] == %s*";  "~~', format(fractions)),
                                      '"grey dashed line:"~~k[w]'))) +
  theme_thesis()
rows <- ceiling(n_panels / 3)
save_figure(p, io$output, width = 6.5, height = min(4.5, 0.9 + 2 * rows), title = "Thesis Figure 3.5")
