"""Trace converters on tiny hand-made traces, and trace statistics."""

from __future__ import annotations

import pytest

from restore import traces
from restore.engine import RestoreError, run


def test_postgres_trace_maps_relation_blocks_to_dense_pages(tmp_path):
    src = tmp_path / "pg.trace"
    src.write_text("\n".join([
        "101,1663,5,16384,main,0,R",
        "101,1663,5,16384,main,1,R",
        "102,1663,5,16384,main,0,W",      # same page as line 1
        "102,1663,5,16385,main,0,R",      # another relation
        "103,1663,5,16384,fsm,0,R",       # another fork of the first relation
        "101,1663,5,16384,main,1,W",
    ]) + "\n")
    stats = traces.convert_postgres(src, tmp_path / "pg.csv")
    assert (tmp_path / "pg.csv").read_text().splitlines() == [
        "page,op", "0,R", "1,R", "0,W", "2,R", "3,R", "1,W"]
    assert stats == {"trace": "pg.csv", "unique_pages": 4, "operations": 6, "reads": 4, "writes": 2,
                     "read_pct": pytest.approx(100 * 4 / 6)}


def test_postgres_trace_errors_name_the_line(tmp_path):
    src = tmp_path / "bad.trace"
    src.write_text("101,1663,5,16384,main,0,R\n101,1663,5,16384,main,0,X\n")
    with pytest.raises(traces.TraceFormatError, match="bad.trace:2"):
        traces.convert_postgres(src, tmp_path / "out.csv")
    assert not (tmp_path / "out.csv").exists()


def test_snia_msr_requests_split_into_4k_pages(tmp_path):
    src = tmp_path / "hm_1.csv"
    src.write_text("\n".join([
        "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
        "128166372003061629,hm,1,Read,8192,8192,100",     # pages 2, 3
        "128166372003061630,hm,1,Write,12288,4096,50",    # page 3
        "128166372003061631,hm,1,Read,4095,2,50",         # bytes 4095-4096: pages 0 and 1
        "128166372003061632,hm,0,Read,8192,512,50",       # disk 0 page 2: a different page
    ]) + "\n")
    stats = traces.convert_snia(src, tmp_path / "hm.csv")
    lines = (tmp_path / "hm.csv").read_text().splitlines()
    assert lines[0] == "page,op,timestamp"
    assert [tuple(line.split(",")[:2]) for line in lines[1:]] == [
        ("0", "R"), ("1", "R"), ("1", "W"), ("2", "R"), ("3", "R"), ("4", "R")]
    assert stats["unique_pages"] == 5 and stats["operations"] == 6 and stats["writes"] == 1


def test_thesios_by_header_names(tmp_path):
    src = tmp_path / "thesios.csv"
    src.write_text("\n".join([
        "filename,file_offset,application,op_type,request_io_size_bytes,start_time",
        "/f/a,0,bigtable,READ,16384,10",      # 4 pages
        "/f/b,0,bigtable,WRITE,4096,11",      # another file
        "/f/a,4096,bigtable,WRITE,100,12",    # page 1 of /f/a again
    ]) + "\n")
    stats = traces.convert_thesios(src, tmp_path / "t.csv")
    ops = [tuple(line.split(",")[:2]) for line in (tmp_path / "t.csv").read_text().splitlines()[1:]]
    assert ops == [("0", "R"), ("1", "R"), ("2", "R"), ("3", "R"), ("4", "W"), ("1", "W")]
    assert stats["unique_pages"] == 5
    bad = tmp_path / "bad.csv"
    bad.write_text("offset,size\n1,2\n")
    with pytest.raises(traces.TraceFormatError, match="needs the columns"):
        traces.convert_thesios(bad, tmp_path / "x.csv")


def test_statistics_and_frequency_distribution(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("page,op\n0,R\n0,W\n0,R\n1,R\n2,W\n2,R\n")
    assert traces.trace_stats(path) == {"trace": "t.csv", "unique_pages": 3, "operations": 6, "reads": 4,
                                        "writes": 2, "read_pct": pytest.approx(400 / 6)}
    assert traces.frequency_distribution(path) == [
        {"trace": "t.csv", "access_count": 1, "pages": 1},
        {"trace": "t.csv", "access_count": 2, "pages": 1},
        {"trace": "t.csv", "access_count": 3, "pages": 1}]


def test_converted_trace_runs_in_the_simulator(binary, tmp_path):
    src = tmp_path / "pg.trace"
    src.write_text("".join(f"1,1663,5,16384,main,{b % 40},{'W' if b % 3 == 0 else 'R'}\n" for b in range(400)))
    traces.convert_postgres(src, tmp_path / "pg.csv")
    rows = run(binary, trace=tmp_path / "pg.csv", policy="static:tlfu:restore", capacity_pct=[10, 20, 100])
    assert [r["requests"] for r in rows] == [400] * 3
    assert rows[0]["pages"] == 40 and rows[0]["workload"] == "pg.csv"
    assert rows[0]["read_pct"] == pytest.approx(100 * 266 / 400)


@pytest.mark.parametrize("text, line", [
    ("-1,R\n0,R\n", 1),                 # not a header: a page that is not a whole number
    ("Page,Op\n0,R\n", 1),              # a header only by its exact names
    ("page,op\n0,R,5,junk\n", 2),       # no field after the timestamp
    ("page,op\n0,X\n", 2),
    ("0,R\npage,op\n", 2),              # a header only first
])
def test_a_page_trace_line_that_is_not_a_request_is_an_error_naming_it(tmp_path, text, line):
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(traces.TraceFormatError, match=f"t.csv:{line}: expected page,op"):
        list(traces.read_page_trace(path))


def test_a_page_trace_may_start_with_comments_and_its_header(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("# made by hand\npage,op,timestamp\n3,w,17\n\n1,R,\n")
    assert list(traces.read_page_trace(path)) == [(3, "W"), (1, "R")]


def test_a_snia_header_is_known_by_its_names_and_a_bad_first_line_is_an_error(tmp_path):
    src = tmp_path / "hm_1.csv"
    src.write_text("Time,Host,Disk,Type,Offset,Size\n128166372003061629,hm,1,Read,8192,8192\n")
    with pytest.raises(traces.TraceFormatError, match="hm_1.csv:1: the request type must be Read or Write"):
        traces.convert_snia(src, tmp_path / "hm.csv")


def sparse(path, size=2 << 30):
    """A file of `size` NUL bytes and no line break that takes no room on disk."""
    with open(path, "wb") as handle:
        handle.truncate(size)
    return path


def test_a_trace_without_line_breaks_is_refused_at_its_first_line(tmp_path):
    big = sparse(tmp_path / "big.csv")
    with pytest.raises(traces.TraceFormatError, match="big.csv:1: a line longer than 4096 bytes; a trace has one "
                                                      "short request per line"):
        list(traces.read_page_trace(big))
    with pytest.raises(traces.TraceFormatError, match="big.csv:1: a line longer than 4096 bytes"):
        traces.convert_snia(big, tmp_path / "out.csv")


def test_restore_sim_refuses_a_trace_without_line_breaks_in_a_moment(binary, tmp_path):
    """It read 2 GB into 6-8 GB of memory and gave no answer in a minute."""
    with pytest.raises(RestoreError, match="big.csv:1: a line longer than 4096 bytes"):
        run(binary, trace=sparse(tmp_path / "big.csv"), capacity_pct=[10, 20, 100])


def test_both_readers_take_a_line_of_4096_bytes_and_refuse_one_more(binary, tmp_path):
    for size, accepted in ((traces.MAX_LINE_BYTES, True), (traces.MAX_LINE_BYTES + 1, False)):
        path = tmp_path / "t.csv"
        path.write_text("#" * size + "\n0,R\n1,W\n")
        if accepted:
            assert traces.trace_stats(path)["operations"] == 2
            assert run(binary, trace=path, capacity_pages=[1, 1, 2])[0]["requests"] == 2
        else:
            with pytest.raises(traces.TraceFormatError, match="t.csv:1: a line longer"):
                traces.trace_stats(path)
            with pytest.raises(RestoreError, match="t.csv:1: a line longer"):
                run(binary, trace=path, capacity_pages=[1, 1, 2])


@pytest.mark.parametrize("timestamp", ["abc", "-5", "1e9", "1.2.3", ".", " 7"])
def test_a_timestamp_that_is_not_a_decimal_number_is_refused(binary, tmp_path, timestamp):
    path = tmp_path / "t.csv"
    path.write_text(f"page,op,timestamp\n0,R,17\n1,W,{timestamp}\n")
    with pytest.raises(traces.TraceFormatError, match="t.csv:3: expected page,op"):
        list(traces.read_page_trace(path))
    with pytest.raises(RestoreError, match="t.csv:3: timestamp must be empty or a non-negative decimal number"):
        run(binary, trace=path, capacity_pages=[1, 1, 2])


def test_timestamps_as_the_converters_write_them_are_read(binary, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("page,op,timestamp\n0,R,128166372003061629\n1,W,1705312345.123456\n0,r,\n")
    assert list(traces.read_page_trace(path)) == [(0, "R"), (1, "W"), (0, "R")]
    assert run(binary, trace=path, capacity_pages=[1, 1, 2])[0]["requests"] == 3


def test_a_converter_refuses_a_timestamp_it_could_not_write(tmp_path):
    src = tmp_path / "hm_1.csv"
    src.write_text("128166372003061629,hm,1,Read,0,4096\nnoon,hm,1,Read,0,4096\n")
    with pytest.raises(traces.TraceFormatError, match="hm_1.csv:2: Timestamp must be a non-negative decimal number, "
                                                      "got 'noon'"):
        traces.convert_snia(src, tmp_path / "hm.csv")


def test_a_bad_field_is_shown_escaped_and_short(binary, tmp_path):
    """A NUL cut restore-sim's message short; a 50 MB field was echoed whole."""
    path = tmp_path / "t.csv"
    path.write_bytes(b"0,R\n1,R\0W\n")
    with pytest.raises(RestoreError) as caught:
        run(binary, trace=path, capacity_pages=[1, 1, 2])
    assert "t.csv:2: op must be R or W, got 'R\\x00W'\n(restore-sim --help" in str(caught.value)
    path.write_text("0,R\n" + "9" * 4000 + ",R\n")
    with pytest.raises(RestoreError) as caught:
        run(binary, trace=path, capacity_pages=[1, 1, 2])
    assert f"t.csv:2: page must be an integer in [0, 2^31), got '{'9' * 60}'... (4000 bytes)" in str(caught.value)
    with pytest.raises(traces.TraceFormatError) as caught:
        list(traces.read_page_trace(path))
    assert str(caught.value).endswith(f"got '{'9' * 60}'... (4002 characters)") and len(str(caught.value)) < 400
