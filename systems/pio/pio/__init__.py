"""The Parametric I/O model (thesis Chapter 3) and, later, the device characterization benchmark."""
