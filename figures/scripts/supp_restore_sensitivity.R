# Supplementary figure (not in the thesis): the sensitivity study of Chapter 6's claims (issue 22,
# item 5). One panel per claim on the swept figures' runs; a row per parameter the thesis leaves
# open, a tile per value, one parameter changed at a time (every other at the chapter's value): red
# where the claim fails at that point, green where it holds; under the value, the check's score (the
# share of its rows or groups that hold, or a comparison's ratio, which holds above 1). Columns are
# the values' places in their lists relative to the chapter's value (0, outlined), so that the
# chapter's point lines up.
# Reads results/restore/sensitivity.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])

# "restore-6.10-greatest-benefit-for-c-and-d" -> "6.10: greatest benefit for c and d", wrapped
claim_label <- function(id) {
  short <- sub("^restore-", "", id)
  title <- sub("-", ": ", short, fixed = TRUE)
  vapply(gsub("-", " ", title), function(s) paste(strwrap(s, width = 50), collapse = "\n"), "")
}
# numbers with three significant digits (0.32192809488736235 -> 0.322, 2e-08 -> 2e-08), text as is
value_label <- function(v) {
  n <- suppressWarnings(as.numeric(v))
  ifelse(is.na(n), sub(" rate=", " ", v), format(signif(n, 3), drop0trailing = TRUE, trim = TRUE))
}
value_label_one <- function(v) vapply(v, value_label, "")

claims <- unique(d$claim)
parameters <- unique(d$parameter)
d$panel <- factor(claim_label(d$claim), levels = claim_label(claims))
d$parameter <- factor(d$parameter, levels = rev(parameters))
d$verdict <- factor(ifelse(d$status == "pass", "holds", ifelse(d$status == "fail", "fails", "not run")),
                    levels = c("holds", "fails", "not run"))
d$label <- paste0(value_label_one(d$value), "\n", ifelse(is.na(d$score), "", sprintf("%.2f", d$score)))
chapter <- d[is_true(d$is_default), ]

p <- ggplot(d, aes(position, parameter)) +
  geom_tile(aes(fill = verdict), colour = "white", linewidth = 0.4) +
  geom_tile(data = chapter, fill = NA, colour = "black", linewidth = 0.6) +
  geom_text(aes(label = label), size = 1.7, lineheight = 0.75) +
  facet_wrap(~panel, ncol = 2) +
  scale_fill_manual(name = "At this point the claim", values = c(holds = "#91cf60", fails = "#fc8d59",
                                                                 "not run" = "grey85"), drop = FALSE) +
  scale_x_continuous(breaks = seq(min(d$position), max(d$position)), expand = c(0, 0)) +
  labs(x = "place of the value in its list, relative to the chapter's value (0, outlined)", y = NULL) +
  theme_thesis(base_size = 7) +
  theme(panel.grid = element_blank(), strip.text = element_text(size = 7, lineheight = 0.9))
rows <- ceiling(length(claims) / 2)
save_figure(p, io$output, width = 6.5, height = min(9, 0.9 + rows * (0.45 + 0.15 * length(parameters))),
            title = "Sensitivity of Chapter 6's claims")
