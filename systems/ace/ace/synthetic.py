"""The synthetic workloads of thesis Table 4.2 as pgbench scripts (our own code: the
thesis does not say how it made pgbench produce them, T983-991).

A workload is a read/write ratio and a locality "S/D": S % of the operations go to D % of
the pages. Each pgbench transaction is one operation on `pgbench_accounts`, chosen by
pgbench's own seeded generator:

- with probability read_pct % a point read (`SELECT abalance ... WHERE aid = :aid`),
  otherwise an update of that row (`UPDATE ... SET abalance = abalance + 1`), which
  dirties the row's heap page;
- with probability hot_ops_pct % the row is uniform among the first hot_pages_pct % of
  the accounts, otherwise uniform among the rest.

pgbench loads the accounts in key order, so the first D % of keys are the first D % of
the table's heap pages and of its index's leaf pages: the locality holds for pages, not
just for keys. The table is loaded with a fill factor below 100 so that an update's new
row version stays on its page (a HOT update) instead of moving the row to the end of the
table, which would erode the locality as the run goes on. The page-level mix is tested
against the server's own buffer trace (tests/test_synthetic.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ACCOUNTS_PER_SCALE = 100_000  # pgbench: rows of pgbench_accounts per scale unit


@dataclass(frozen=True)
class SyntheticWorkload:
    read_pct: int       # share of operations that are reads, in %
    hot_ops_pct: int    # share of operations on the hot pages, in %
    hot_pages_pct: int  # share of the pages that are hot, in %

    def __post_init__(self):
        for name in ("read_pct", "hot_ops_pct", "hot_pages_pct"):
            value = getattr(self, name)
            if not 0 <= value <= 100:
                raise ValueError(f"{name} must be between 0 and 100, not {value}")
        if not 0 < self.hot_pages_pct < 100:
            raise ValueError(f"hot_pages_pct must be strictly between 0 and 100, not {self.hot_pages_pct}")

    def hot_accounts(self, scale: int) -> int:
        """The hot keys: aid 1..hot_accounts."""
        accounts = ACCOUNTS_PER_SCALE * scale
        return max(1, min(accounts - 1, accounts * self.hot_pages_pct // 100))

    def script(self, scale: int) -> str:
        """The pgbench script: one operation per transaction."""
        accounts = ACCOUNTS_PER_SCALE * scale
        hot = self.hot_accounts(scale)
        return (
            f"-- read/write {self.read_pct}/{100 - self.read_pct}, locality "
            f"{self.hot_ops_pct}/{self.hot_pages_pct} (systems/ace/ace/synthetic.py)\n"
            "\\set where random(1, 100)\n"
            f"\\if :where <= {self.hot_ops_pct}\n"
            f"\\set aid random(1, {hot})\n"
            "\\else\n"
            f"\\set aid random({hot + 1}, {accounts})\n"
            "\\endif\n"
            "\\set op random(1, 100)\n"
            f"\\if :op <= {self.read_pct}\n"
            "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n"
            "\\else\n"
            "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;\n"
            "\\endif\n"
        )

    def pgbench_arguments(self, directory: Path, scale: int) -> list[str]:
        """Write the script into `directory` and return pgbench's arguments for it."""
        path = Path(directory) / f"synthetic-r{self.read_pct}-l{self.hot_ops_pct}-{self.hot_pages_pct}.sql"
        path.write_text(self.script(scale), encoding="utf-8")
        path.chmod(0o644)  # pgbench may run as the server's user
        return ["--no-vacuum", "-f", str(path)]


def load_arguments(scale: int, fillfactor: int) -> list[str]:
    """pgbench's initialization of the synthetic database (server-side data generation:
    no rows travel through the client)."""
    return ["-i", "-s", str(scale), "-F", str(fillfactor), "-I", "dtGvp", "-q"]
