# The one theme, palette and output helper shared by every figure script.
# Each figure script is run as: Rscript figures/scripts/fig_X_Y.R <input.csv>... <output.pdf>
suppressPackageStartupMessages(library(ggplot2))
# A grob measured before any device is open (ggplotGrob in stack_plots) opens R's default device,
# which writes Rplots.pdf in the working directory: outside the script's declared output, and
# refused where the repository is read-only (a hardened docker step). A PDF device without a file instead.
options(device = function(...) grDevices::pdf(NULL, ...))

theme_thesis <- function(base_size = 9) {
  theme_bw(base_size = base_size) +
    theme(
      legend.position = "bottom",
      legend.key.height = unit(0.8, "lines"),
      strip.background = element_rect(fill = "grey92", colour = NA),
      strip.text = element_text(face = "bold"),
      panel.grid.minor = element_blank(),
      plot.margin = margin(4, 6, 4, 4)
    )
}

# One colour per asymmetry value, the same in every chapter.
alpha_colours <- c("1" = "#1b9e77", "2" = "#7570b3", "3" = "#66a61e", "4" = "#d95f02",
                   "8" = "#e7298a", "16" = "#a6761d")

# One colour per bufferpool policy, the same in every chapter (ACE variants are shades of their base).
policy_colours <- c(clock = "#4575b4", lru = "#1a9850", cflru = "#fdae61", lru_wsr = "#d73027")

scale_colour_alpha <- function(values) {
  present <- as.character(sort(unique(values)))
  missing <- setdiff(present, names(alpha_colours))
  if (length(missing) > 0) stop("no colour declared for alpha = ", paste(missing, collapse = ", "),
                                " in figures/scripts/theme.R (alpha_colours)")
  scale_colour_manual(
    name = NULL, values = alpha_colours[present], breaks = present,
    labels = parse(text = paste0("alpha == ", present))
  )
}

# Command-line arguments: all but the last are inputs, the last is the output.
figure_args <- function(n_inputs) {
  args <- commandArgs(trailingOnly = TRUE)
  if (length(args) != n_inputs + 1) {
    stop(sprintf("usage: Rscript <script> %s <output.pdf>",
                 paste(rep("<input.csv>", n_inputs), collapse = " ")))
  }
  list(inputs = args[seq_len(n_inputs)], output = args[[n_inputs + 1]])
}

read_tidy <- function(path) {
  read.csv(path, stringsAsFactors = FALSE, na.strings = "NA")
}

# Write a PDF whose bytes depend only on the plot: R stamps the current time into
# /CreationDate and /ModDate, so both are replaced by SOURCE_DATE_EPOCH (default 0)
# with a string of the same length (the xref offsets stay valid). Written to a
# temporary file and renamed, so a failed run leaves no half-written figure.
# A legend wider than the figure is cut at its edge in the PDF, silently: refuse to draw it.
check_legend_fits <- function(plot, width, height) {
  if (!inherits(plot, "ggplot")) return(invisible())  # a gtable of several plots: its script checks each one
  grDevices::pdf(NULL, width = width, height = height)
  on.exit(grDevices::dev.off())
  gtable <- ggplotGrob(plot)
  margin <- plot$theme$plot.margin
  room <- width - if (is.null(margin)) 0 else sum(grid::convertWidth(margin[c(2, 4)], "in", valueOnly = TRUE))
  for (i in grep("^guide-box", gtable$layout$name)) {
    box <- gtable$grobs[[i]]
    if (inherits(box, "zeroGrob")) next
    needed <- grid::convertWidth(sum(box$widths), "in", valueOnly = TRUE)
    if (needed > room) {
      stop(sprintf("the legend is %.2f in wide, the figure has %.2f in inside its margins: give it more rows ",
                   needed, room),
           "(guides(... = guide_legend(nrow = 2))) or widen the figure")
    }
  }
}

save_figure <- function(plot, path, width, height, title) {
  check_legend_fits(plot, width, height)
  dir.create(dirname(path), recursive = TRUE, showWarnings = FALSE)
  tmp <- tempfile(tmpdir = dirname(path), fileext = ".pdf")
  ggsave(tmp, plot, width = width, height = height, units = "in",
         device = function(filename, ...) grDevices::pdf(file = filename, ..., title = title, useDingbats = FALSE))
  epoch <- as.numeric(Sys.getenv("SOURCE_DATE_EPOCH", "0"))
  stamp <- format(as.POSIXct(epoch, origin = "1970-01-01", tz = "UTC"), "D:%Y%m%d%H%M%S", tz = "UTC")
  bytes <- readBin(tmp, "raw", file.info(tmp)$size)
  for (key in c("/CreationDate", "/ModDate")) {
    hit <- grepRaw(paste0(key, " \\(D:[0-9]{14}\\)"), bytes)
    if (length(hit) == 0) stop("could not find ", key, " in the PDF written by R")
    replacement <- charToRaw(paste0(key, " (", stamp, ")"))
    bytes[hit:(hit + length(replacement) - 1)] <- replacement
  }
  writeBin(bytes, tmp)
  if (!file.rename(tmp, path)) stop("could not move the figure into place: ", path)
  invisible(path)
}

# Panels drawn by different plots, one above the other (heights: their shares), as one figure;
# each plot's legend is checked to fit `width` first.
stack_plots <- function(plots, heights, width, height) {
  for (plot in plots) check_legend_fits(plot, width, height * max(heights) / sum(heights))
  stacked <- gtable::gtable(widths = grid::unit(1, "null"), heights = grid::unit(heights, "null"))
  for (i in seq_along(plots)) stacked <- gtable::gtable_add_grob(stacked, ggplotGrob(plots[[i]]), t = i, l = 1)
  stacked
}

# Facet labels "(A) f_r = 0.1" for figures with one panel per read fraction.
label_read_fraction_panels <- function(d) {
  panels <- unique(d[, c("panel", "read_fraction")])
  factor(d$panel, levels = panels$panel,
         labels = sprintf("(%s)~~f[r] == %s", panels$panel, panels$read_fraction))
}

# Figures 3.2 and 3.3: speedup vs concurrent I/Os, one panel per read fraction, one line per alpha.
plot_speedup_panels <- function(d, concurrency, x_label) {
  d$panel_label <- label_read_fraction_panels(d)
  ggplot(d, aes(.data[[concurrency]], speedup, colour = factor(alpha))) +
    geom_line() + geom_point(size = 0.7) +
    facet_wrap(~panel_label, nrow = 1, labeller = label_parsed) +
    scale_colour_alpha(d$alpha) +
    scale_x_continuous(breaks = seq(0, max(d[[concurrency]]), by = 4)) +
    labs(x = x_label, y = "Speedup (x)") +
    theme_thesis()
}

# Helpers of the device-characterization figures (Chapter 2).
# A CSV boolean ("true"/"false", or TRUE/FALSE once parsed) as a logical.
is_true <- function(x) tolower(as.character(x)) == "true"
# A string quoted for plotmath labels (label_parsed).
plotmath_string <- function(x) paste0('"', gsub('(["\\\\])', "\\\\\\1", x), '"')
# Powers of two over the axis range (every other one when there are too many for a narrow panel).
log2_breaks <- function(limits) {
  b <- 2^seq(ceiling(log2(limits[1])), floor(log2(limits[2])))
  if (length(b) > 6) b <- b[seq(1, length(b), by = 2)]
  b
}
# Three significant digits, but never fewer than the integer digits (2094.4 -> "2094", 1.3 -> "1.30"); NA stays "NA".
sig_format <- function(x, digits = 3) {
  out <- rep("NA", length(x))
  ok <- !is.na(x)
  decimals <- ifelse(x[ok] == 0, 0L, as.integer(pmax(0, digits - 1 - floor(log10(abs(x[ok]))))))
  out[ok] <- sprintf("%.*f", decimals, x[ok])
  out
}

# Helpers of Chapter 4's figures (ACE in PostgreSQL).
policy_names <- c(clock = "Clock Sweep", lru = "LRU", cflru = "CFLRU", lru_wsr = "LRU-WSR")
variant_names <- c(baseline = "baseline", ace = "ACE w/o prefetching", ace_pf = "ACE")
# Table 4.2's synthetic workloads, in the thesis's order (panels A-D).
synthetic_workloads <- c("MS", "WIS", "RIS", "MU")
# The policies in the thesis's order, named as the thesis names them.
policy_factor <- function(x) factor(x, levels = names(policy_names), labels = policy_names)
scale_colour_policy <- function() {
  scale_colour_manual(name = NULL, values = setNames(policy_colours, policy_names[names(policy_colours)]))
}
# The thesis's device for an emulated preset (Table 4.1), NA for any other device.
thesis_device_of_preset <- function(preset) {
  c("pcie-like" = "PCIe SSD", "sata-like" = "SATA SSD", "virtual-like" = "Virtual SSD",
    "optane-like" = "Optane SSD")[as.character(preset)]
}
# "emu-pcie-db (alpha 2.8, k_w 8)": a device and its alpha and k_w, for panel strips.
device_label <- function(device, alpha, k_w) {
  sprintf("%s (alpha %s, k_w %d)", device, sig_format(alpha, 2), as.integer(k_w))
}
# One headline number of results/reference/headline_numbers.csv.
reference_value <- function(reference, id) {
  v <- reference$value[reference$id == id]
  if (length(v) != 1) stop("results/reference/headline_numbers.csv has no single row ", id)
  as.numeric(v)
}
# Figures 4.11, 4.12 and 4.16: a swept parameter `x` (a column of the figure CSV), panel A the
# baseline's (dashed) and ACE's (solid) `measure` (default runtime), panel B ACE's speedup, one
# row of panels per device. `thesis`: points (x, value) drawn as black diamonds in panel B.
plot_ace_sweep <- function(d, x, x_label, thesis = NULL, subtitle = NULL, measure = "runtime_s",
                           measure_label = "(A) runtime (s)") {
  d$policy_label <- policy_factor(d$policy)
  d$device_label <- device_label(d$device, d$device_alpha, d$device_k_w)
  d$series <- ifelse(d$variant == "baseline", "baseline", "ACE")
  ace <- d[d$variant != "baseline", ]
  columns <- c("device_label", "policy_label", x, "series")
  speedup_label <- "(B) speedup of ACE (x)"
  long <- rbind(data.frame(d[, columns], value = d[[measure]], panel = measure_label),
                data.frame(ace[, columns], value = ace$speedup, panel = speedup_label))
  p <- ggplot(long, aes(.data[[x]], value, colour = policy_label, linetype = series)) +
    geom_line() + geom_point(size = 0.9)
  if (!is.null(thesis)) {
    thesis$panel <- speedup_label
    thesis <- merge(thesis, data.frame(device_label = unique(d$device_label)))
    p <- p + geom_point(data = thesis, aes(.data[[x]], value), inherit.aes = FALSE, shape = 18, size = 2.2)
  }
  # One row per device, the measure and the speedup side by side, each with its own y axis
  # (facet_grid frees y per row only, which would draw a speedup of 1.4 on a 0-1500 tpmC axis).
  p + facet_wrap(vars(device_label, panel), ncol = 2, scales = "free_y",
                 labeller = function(labels) label_value(labels, multi_line = FALSE)) +
    scale_colour_policy() +
    scale_linetype_manual(name = NULL, values = c(ACE = "solid", baseline = "dashed")) +
    expand_limits(y = 0) +
    labs(x = x_label, y = NULL, subtitle = subtitle) +
    theme_thesis()
}

# Helpers of Chapter 5's figures (CAVE).
# "emu-pcie (k_r 80)": a device and the concurrency that saturates it.
cave_device_label <- function(device, k_r) sprintf("%s (k_r %d)", device, as.integer(k_r))
# The generated graph and the thesis datasets it stands for (configs/datasets.yaml).
cave_graph_label <- function(graph) {
  c(social = "social (R-MAT; as FS, TW, LJ, YT)", road = "road (grid; as RN)",
    synthetic = "synthetic (Barabasi-Albert; as SD)")[as.character(graph)]
}
# Figures 5.5, 5.8 and 5.13: `y` against the number of concurrent I/Os (log 2), one line per
# device; the dotted vertical line of each device's colour is its k_r.
plot_cave_concurrency <- function(d, y, y_label) {
  d$device_label <- cave_device_label(d$device, d$device_k_r)
  k <- unique(d[, c("device_label", "device_k_r")])
  ggplot(d, aes(io_threads, .data[[y]], colour = device_label)) +
    geom_vline(data = k, aes(xintercept = device_k_r, colour = device_label), linetype = "dotted",
               show.legend = FALSE) +
    geom_line() + geom_point(size = 1) +
    scale_x_continuous(trans = "log2", breaks = log2_breaks) +
    labs(x = "Number of concurrent I/Os", y = y_label, colour = NULL) +
    guides(colour = guide_legend(nrow = 2)) +  # four devices' labels do not fit on one line
    theme_thesis()
}
# Figures 5.6, 5.7, 5.10 and 5.12: runtime against the cache size, one panel per graph (`facet`:
# or per device); CAVE non-blocked solid with crosses, blocked dashed with circles, GraphChi with
# triangles, GridGraph with squares and Mosaic with downward triangles (as the thesis draws them, its
# baselines in colour), and the
# in-memory reference (the whole graph in memory, scipy) as a dotted horizontal line. A baseline
# that did not run at a cache size (status other than ran) is listed under the plot with why.
cave_series <- c("CAVE", "CAVE_blocked", "GraphChi", "GridGraph", "Mosaic", "in-memory reference")
cave_series_linetypes <- c(CAVE = "solid", CAVE_blocked = "dashed", GraphChi = "solid", GridGraph = "solid",
                           Mosaic = "solid", "in-memory reference" = "dotted")
cave_series_shapes <- c(CAVE = 4, CAVE_blocked = 1, GraphChi = 2, GridGraph = 0, Mosaic = 6,
                        "in-memory reference" = NA)
cave_series_colours <- c(CAVE = "black", CAVE_blocked = "black", GraphChi = "#d95f02", GridGraph = "#1b9e77",
                         Mosaic = "#7570b3", "in-memory reference" = "grey40")
cave_not_run <- function(d, where = "graph", statuses = c("cannot_run", "over_budget", "timed_out")) {
  failed <- d[!is.na(d$status) & d$status %in% statuses, ]
  if (nrow(failed) == 0) return(NULL)
  failed <- unique(failed[, c("system", where, "status")])
  text <- paste0("not run: ", paste(sprintf("%s on %s (%s)", failed$system, failed[[where]],
                                            gsub("_", " ", failed$status)), collapse = "; "))
  paste(strwrap(text, width = 100), collapse = "\n")
}
plot_cave_cache <- function(d, facet = "graph") {
  d$graph_label <- cave_graph_label(d$graph)
  d$device_label <- cave_device_label(d$device, d$device_k_r)
  reference <- d[d$system == "in-memory reference (scipy)", ]
  measured <- d[d$system != "in-memory reference (scipy)" & (is.na(d$status) | d$status == "ran"), ]
  measured$cache_pct <- 100 * measured$cache_fraction
  shown <- cave_series[cave_series %in% c(unique(measured$system), if (nrow(reference) > 0) "in-memory reference")]
  p <- ggplot(measured, aes(cache_pct, runtime_s, linetype = system, shape = system, colour = system)) +
    geom_line() + geom_point(size = 1.5) +
    # one legend: the line types', with each series' point and colour drawn in it
    scale_linetype_manual(name = NULL, breaks = shown, values = cave_series_linetypes) +
    scale_shape_manual(values = cave_series_shapes, guide = "none") +
    scale_colour_manual(values = cave_series_colours, guide = "none") +
    guides(linetype = guide_legend(override.aes = list(shape = unname(cave_series_shapes[shown]),
                                                       colour = unname(cave_series_colours[shown])))) +
    scale_x_continuous(trans = "log10") +
    facet_wrap(as.formula(paste("~", if (facet == "graph") "graph_label" else "device_label")), scales = "free_y") +
    labs(x = "Cache size (% of the graph's file)", y = "Runtime (s)", caption = cave_not_run(d)) +
    theme_thesis()
  if (any(measured$system %in% c("GraphChi", "GridGraph", "Mosaic"))) {
    p <- p + scale_y_continuous(trans = "log10",
                                labels = function(x) format(x, scientific = FALSE, drop0trailing = TRUE))
  }
  if (nrow(reference) > 0) {
    reference$system <- "in-memory reference"
    p <- p + geom_hline(data = reference, aes(yintercept = runtime_s, linetype = system, colour = system))
  }
  p
}
# Figures 5.1B, 5.9A and 5.11A: CAVE's speedup over each baseline (log scale) per graph, one bar per
# baseline; a baseline stopped at its time limit is a pale bar at the least its speedup can be
# (labelled ">="), one that did not run for another reason a label at 1 (its status); the thesis's
# range of speedups over each baseline (`thesis`: baseline, low, high) in the caption.
cave_baseline_colours <- c(GraphChi = "#d95f02", GridGraph = "#1b9e77", Mosaic = "#7570b3", GraphX = "#e7298a")
# The thesis's range of CAVE's speedup over each baseline: headline numbers <prefix>_min_vs_<baseline>
# and <prefix>_max_vs_<baseline> (e.g. cave_pbfs_speedup), for plot_cave_speedups' caption.
cave_thesis_speedups <- function(reference, prefix) {
  baselines <- c(graphchi = "GraphChi", gridgraph = "GridGraph", mosaic = "Mosaic")
  value <- function(bound) {
    sapply(names(baselines), function(b) reference_value(reference, sprintf("%s_%s_vs_%s", prefix, bound, b)))
  }
  data.frame(baseline = unname(baselines), low = value("min"), high = value("max"))
}
plot_cave_speedups <- function(d, thesis = NULL) {
  d <- d[d$system != d$cave_system, ]
  d$graph_label <- sub(" (", "\n(", cave_graph_label(d$graph), fixed = TRUE)
  d$device_label <- cave_device_label(d$device, d$device_k_r)
  bars <- d[d$status %in% c("ran", "timed_out"), ]
  bars$bound <- ifelse(bars$status == "ran", "measured", "stopped at the time limit: at least")
  bars$label <- paste0(ifelse(bars$status == "ran", "", ">="), sig_format(bars$speedup_at_least, 2))
  failed <- d[!(d$status %in% c("ran", "timed_out")), ]
  dodge <- position_dodge(width = 0.8)
  p <- ggplot(bars, aes(graph_label, speedup_at_least, fill = system, group = system)) +
    geom_hline(yintercept = 1, colour = "grey50") +
    geom_col(aes(alpha = bound), position = dodge, width = 0.7) +
    geom_text(aes(label = label), position = dodge, vjust = -0.3, size = 2.3) +
    scale_fill_manual(name = NULL, values = cave_baseline_colours) +
    scale_alpha_manual(name = NULL, values = c(measured = 1, "stopped at the time limit: at least" = 0.35),
                       guide = if (all(bars$status == "ran")) "none" else "legend") +
    scale_y_continuous(trans = "log10", expand = expansion(mult = c(0.05, 0.15))) +
    facet_wrap(~device_label) +
    labs(x = NULL, y = sprintf("Speedup of %s (x)", unique(d$cave_system)[1])) +
    # the systems' legend above the bounds' (measured, or at least), each on a line of its own
    theme_thesis() + theme(axis.text.x = element_text(size = 6.5), legend.box = "vertical")
  if (nrow(failed) > 0) {
    p <- p + geom_text(data = failed, aes(graph_label, 1, label = paste(system, gsub("_", " ", status))),
                       inherit.aes = FALSE, angle = 90, hjust = -0.1, size = 2.2, colour = "grey30")
  }
  if (!is.null(thesis)) {
    p <- p + labs(caption = paste("thesis (PCIe SSD, 3 % cache):",
                                  paste(sprintf("%s %s-%sx", thesis$baseline, thesis$low, thesis$high),
                                        collapse = ", ")))
  }
  p
}

# Helpers of Chapter 6's figures (ReStore's migration policies; tLRU shares LRU's colour).
restore_policy_names <- c(static = "Static", tlfu = "tLFU", tlru = "tLRU", lrfu = "LRFU", exd = "EXD",
                          temp = "TEMP", restore = "ReStore")
restore_policy_colours <- c(static = "grey55", tlfu = "#66a61e", tlru = "#1a9850", lrfu = "#fdae61",
                            exd = "#7570b3", temp = "#e6ab02", restore = "#d73027")
# The policies in the thesis's order, named as the thesis names them.
restore_policy_factor <- function(x) {
  factor(x, levels = names(restore_policy_names), labels = restore_policy_names)
}
scale_fill_restore_policy <- function(...) {
  scale_fill_manual(name = NULL, values = setNames(restore_policy_colours, restore_policy_names), ...)
}
scale_colour_restore_policy <- function(...) {
  scale_colour_manual(name = NULL, values = setNames(restore_policy_colours, restore_policy_names), ...)
}
# Facet labels of the tier-capacity grid, rows by Tier 1 (smallest on top), columns by Tier 2.
tier1_factor <- function(t1) factor(t1, levels = sort(unique(t1)), labels = sprintf("Tier 1 %s%%", sort(unique(t1))))
tier2_factor <- function(t2) factor(t2, levels = sort(unique(t2)), labels = sprintf("Tier 2 %s%%", sort(unique(t2))))
# Bars of every policy side by side within each group: the numeric x of each (group, policy) bar.
restore_bar_x <- function(group, policy, width = 0.8) {
  n <- length(restore_policy_names)
  as.integer(group) + (as.integer(restore_policy_factor(policy)) - (n + 1) / 2) * width / n
}
