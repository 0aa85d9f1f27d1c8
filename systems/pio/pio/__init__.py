"""The Parametric I/O model (thesis Chapter 3) and the device characterization benchmark (Chapter 2)."""
