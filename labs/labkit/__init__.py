"""What every lab's grader shares: hidden parameters per student (seeds), running a
submission's code in a sandbox (sandbox, child), and Gradescope's results.json (report).
A lab's own grader is labs/<n>-<name>/grader.py; `python -m labkit.grade` runs it."""
