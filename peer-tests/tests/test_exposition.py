"""The exposition reader and the differ: what the comparison's verdicts rest on."""

import unittest

import tempfile
from pathlib import Path

from peers.differences import Collector, Known, Key, compare_scrapes, judge, load_known, stale
from peers.exposition import ParseError, parse, same_single_precision
from peers.host import frozen_topology

HUAWEI = """# HELP npu_chip_info_power the npu power
# TYPE npu_chip_info_power gauge
npu_chip_info_power{id="0",pcie_bus_info="0000:C1:00.0"} 280.20001220703125 1796428288162
npu_chip_info_power{id="1",pcie_bus_info="0000:C2:00.0"} 281.5 1796428288162
# HELP npu_chip_info_health_status the npu health status
# TYPE npu_chip_info_health_status gauge
npu_chip_info_health_status{id="0",pcie_bus_info="0000:C1:00.0"} 1 1796428288162
"""


def ours(body_edit=lambda body: body):
    body = """# HELP npu_chip_info_power the npu power
# TYPE npu_chip_info_power gauge
npu_chip_info_power{pcie_bus_info="0000:C1:00.0",id="0"} 280.2
npu_chip_info_power{pcie_bus_info="0000:C2:00.0",id="1"} 281.5
# HELP npu_chip_info_health_status the npu health status
# TYPE npu_chip_info_health_status gauge
npu_chip_info_health_status{pcie_bus_info="0000:C1:00.0",id="0"} 1
"""
    return parse(body_edit(body))


def kinds(collector):
    return sorted((d.key.kind, d.key.metric, d.key.label) for d in collector.all())


def compare(mine):
    collector = Collector()
    compare_scrapes("npu-exporter", "host", parse(HUAWEI), mine, collector)
    return collector


class Exposition(unittest.TestCase):
    def test_labels_in_any_order_and_escapes_read_as_a_scraper_does(self):
        families = parse('# TYPE m gauge\nm{b="x\\"y",a="1\\n"} 2\n')
        ((name, labels), sample), = families["m"].samples.items()
        self.assertEqual(labels, (("a", "1\n"), ("b", 'x"y')))
        self.assertEqual(sample.value, 2)

    def test_timestamps_are_kept_apart(self):
        sample = parse(HUAWEI)["npu_chip_info_power"].samples[("npu_chip_info_power", (("id", "0"), ("pcie_bus_info", "0000:C1:00.0")))]
        self.assertEqual(sample.timestamp_ms, 1796428288162)

    def test_malformed_lines_name_the_line(self):
        with self.assertRaisesRegex(ParseError, "line 2"):
            parse('m 1\nm{a="1} 2\n')
        with self.assertRaisesRegex(ParseError, "given twice"):
            parse("m 1\nm 2\n")

    def test_single_precision(self):
        self.assertTrue(same_single_precision(280.20001220703125, 280.2))
        self.assertTrue(same_single_precision(321.3000183105469, 321.3), "3213 x 0.1f, one float32 step away")
        self.assertFalse(same_single_precision(280.3, 280.2))

    def test_frozen_topology_sets_one_tick_for_the_run(self):
        text = frozen_topology("atlas-800t-a2")
        self.assertRegex(text, r"(?m)^\[simulation\]\nsample_period_ms = 10000000000000$")


class Differ(unittest.TestCase):
    def test_the_same_scrape_differs_only_in_timestamps_and_precision(self):
        self.assertEqual(kinds(compare(ours())), [
            ("precision", "npu_chip_info_power", ""),
            ("timestamp", "npu_chip_info_health_status", ""),
            ("timestamp", "npu_chip_info_power", ""),
        ])

    def test_a_label_written_otherwise_is_named(self):
        found = kinds(compare(ours(lambda b: b.replace("0000:C1:00.0", "0000:c1:00.0"))))
        self.assertIn(("label", "npu_chip_info_power", "pcie_bus_info"), found)
        self.assertIn(("label", "npu_chip_info_health_status", "pcie_bus_info"), found)

    def test_values_help_type_missing_and_extra_series(self):
        def edit(body):
            body = body.replace("281.5", "282.5").replace("the npu power", "the npu power (W)")
            body = body.replace("# TYPE npu_chip_info_health_status gauge", "# TYPE npu_chip_info_health_status counter")
            body = body.replace('npu_chip_info_health_status{pcie_bus_info="0000:C1:00.0",id="0"} 1\n', "")
            return body + "npu_extra 1\n"
        found = kinds(compare(ours(edit)))
        for wanted in [("value", "npu_chip_info_power", ""), ("help", "npu_chip_info_power", ""),
                       ("missing", "npu_chip_info_health_status", ""), ("extra", "npu_extra", "")]:
            self.assertIn(wanted, found)

    def test_known_differences_explain_matching_keys_and_go_stale(self):
        entry = Known("npu-exporter", "timestamp", "npu_chip_info_*", "why", "where", "deliberate")
        unused = Known("npu-exporter", "value", "npu_gone", "why", "where", "huawei-bug", hosts=("host",))
        unexplained, explained = judge(compare(ours()).all(), [entry, unused])
        self.assertEqual([d.key.kind for d in unexplained], ["precision"])
        self.assertEqual(len(explained), 2)
        self.assertEqual(stale([entry, unused], {"npu-exporter"}, {"host"}), [unused])
        self.assertTrue(entry.matches(Key("npu-exporter", "host", "timestamp", "npu_chip_info_power")))
        self.assertFalse(entry.matches(Key("npu-exporter", "host", "timestamp", "machine_npu_nums")))


class KnownDifferences(unittest.TestCase):
    def test_the_committed_list_is_well_formed(self):
        entries = load_known(Path(__file__).resolve().parents[1] / "known-differences.toml")
        self.assertTrue(entries)
        for entry in entries:
            self.assertIn("mind-cluster", entry.source + entry.reason, f"{entry.where} cites no Huawei source")

    def test_a_malformed_entry_is_named(self):
        cases = {
            'program = "x"\nkind = "value"\nmetric = "m"\nreason = "r"\nsource = "s"': "lacks verdict",
            'program = "x"\nkind = "odd"\nmetric = "m"\nreason = "r"\nsource = "s"\nverdict = "deliberate"':
                "kind 'odd'",
            'program = "x"\nkind = "value"\nmetric = "m"\nreason = "r"\nsource = "s"\nverdict = "deliberate"\n'
            'why = "?"': "unknown field",
        }
        for body, message in cases.items():
            with tempfile.NamedTemporaryFile("w", suffix=".toml") as file:
                file.write("[[difference]]\n" + body + "\n")
                file.flush()
                with self.assertRaisesRegex(ValueError, f"difference 1.*{message}|difference 1 {message}"):
                    load_known(Path(file.name))


if __name__ == "__main__":
    unittest.main()
