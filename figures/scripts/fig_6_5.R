# Thesis Figure 6.5 (T1913): "Example of our temperature model." One page's temperature over 1000
# timesteps with 100 random requests (T1910): each request sets it to 1 - 0.5 exp(-0.2 req), req =
# the page's requests in the recent window; after 5 timesteps without a request it drops by 0.05,
# down to 0 (T1906-1908). Ticks at the bottom mark the timesteps with a request. The request times
# are drawn by restore-sim --temperature-demo with the profile's seed.
# Reads results/restore/fig_6_5.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])
d <- d[d$seed == min(d$seed), ]
requests <- d[d$requested > 0, ]

p <- ggplot(d, aes(timestep, temperature)) +
  geom_line(colour = "#d73027", linewidth = 0.4) +
  geom_rug(data = requests, aes(x = timestep), inherit.aes = FALSE, sides = "b", colour = "grey30",
           length = unit(0.04, "npc"), linewidth = 0.25) +
  scale_y_continuous(limits = c(0, 1)) +
  labs(x = "timestep", y = "temperature",
       subtitle = sprintf("%d requests in %d timesteps (ticks), seed %d", sum(d$requested), nrow(d), d$seed[1])) +
  theme_thesis()
save_figure(p, io$output, width = 5, height = 3, title = "Thesis Figure 6.5")
