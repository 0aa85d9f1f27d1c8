"""The shared figure code (figures/scripts/theme.R) guards against layouts that hide data: a panel
drawn on another panel's axis, a legend cut at the page's edge."""

import subprocess

from ssdartifact import REPO_ROOT

THEME = REPO_ROOT / "figures" / "scripts" / "theme.R"


def run_r(program: str) -> subprocess.CompletedProcess:
    return subprocess.run(["Rscript", "-e", f'source("{THEME}")\n{program}'], capture_output=True, text=True)


def test_each_panel_of_an_ace_sweep_has_its_own_y_axis():
    """tpmC in the thousands beside a speedup of 1.4: the speedup panel's axis must fit the speedup."""
    result = run_r("""
d <- expand.grid(policy = "lru", device = "emu", variant = c("baseline", "ace_prefetch"), warehouses = c(1, 2),
                 stringsAsFactors = FALSE)
d$device_alpha <- 2.8; d$device_k_w <- 8
d$tpm <- ifelse(d$variant == "baseline", 900, 1300); d$speedup <- 1.4
built <- ggplot_build(plot_ace_sweep(d, "warehouses", "warehouses", measure = "tpm", measure_label = "(A) tpmC"))
cat(sapply(built$layout$panel_params, function(p) p$y.range[2]), "\\n")
""")
    assert result.returncode == 0, result.stderr
    tops = [float(v) for v in result.stdout.split()]
    assert len(tops) == 2 and tops[0] > 1000 and tops[1] < 2, tops


def test_a_legend_wider_than_the_figure_is_refused(tmp_path):
    result = run_r(f"""
d <- data.frame(x = 1:4, y = 1:4, series = sprintf("a rather long series name number %d", 1:4))
p <- ggplot(d, aes(x, y, colour = series)) + geom_point() + theme_thesis()
save_figure(p, "{tmp_path}/narrow.pdf", width = 4, height = 3, title = "t")
""")
    assert result.returncode != 0
    assert "the figure has 3.86 in inside its margins: give it more rows" in result.stderr, result.stderr
    assert not (tmp_path / "narrow.pdf").exists()
    wide = run_r(f"""
d <- data.frame(x = 1:4, y = 1:4, series = sprintf("a rather long series name number %d", 1:4))
p <- ggplot(d, aes(x, y, colour = series)) + geom_point() + theme_thesis() + guides(colour = guide_legend(nrow = 4))
save_figure(p, "{tmp_path}/four_rows.pdf", width = 4, height = 3, title = "t")
""")
    assert wide.returncode == 0, wide.stderr


def test_measuring_plots_before_drawing_writes_nothing_in_the_working_directory(tmp_path):
    # stack_plots measures each plot's grob before save_figure opens its PDF: R's default device
    # would write Rplots.pdf where the script runs (a read-only repository in a hardened container)
    program = ('p <- ggplot(data.frame(x = 1:3, y = 1:3), aes(x, y)) + geom_point()\n'
               f'save_figure(stack_plots(list(p, p), c(1, 1), 4, 5), "{tmp_path}/out.pdf", 4, 5, "test")')
    result = subprocess.run(["Rscript", "-e", f'source("{THEME}")\n{program}'], capture_output=True, text=True,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.pdf"]
