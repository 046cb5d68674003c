"""The hot-reset comparison's reading of the stand-in nodes' timelines: which devices were withheld, which ended
healthy and when the chip was offered again, and the differences between two plugins' decisions."""

import tomllib
import unittest

from peers.differences import Collector
from peers.hot_reset import OFFERED_AGAIN_TOLERANCE, compare_decisions, decisions, fault_overlay


def change(at, device, health):
    return {"at": at, "resource": "huawei.com/Ascend910", "id": device, "health": health}


# A ring of two: chip 1 faulted from the start, the ring withdrawn for its reset at 66 s, both healthy at 70 s.
OURS = [change(17.0, "Ascend910-0", "Healthy"), change(17.0, "Ascend910-1", "Unhealthy"),
        change(66.2, "Ascend910-0", "Unhealthy"), change(69.4, "Ascend910-0", "Healthy"),
        change(70.0, "Ascend910-1", "Healthy")]
# Only the faulty chip withheld, offered again at 72 s.
HUAWEI = [change(17.2, "Ascend910-0", "Healthy"), change(17.2, "Ascend910-1", "Unhealthy"),
          change(72.1, "Ascend910-1", "Healthy")]


class Decisions(unittest.TestCase):
    def test_withheld_final_and_offered_again(self):
        found = decisions(OURS)
        self.assertEqual(found["withheld"], ["Ascend910-0", "Ascend910-1"])
        self.assertEqual(found["final"], {"Ascend910-0": "Healthy", "Ascend910-1": "Healthy"})
        self.assertEqual(found["offered_again"], {"Ascend910-0": 69.4, "Ascend910-1": 70.0})

    def test_a_chip_that_faults_again_is_not_offered_again(self):
        found = decisions(HUAWEI + [change(80.0, "Ascend910-1", "Unhealthy")])
        self.assertEqual(found["final"]["Ascend910-1"], "Unhealthy")
        self.assertNotIn("Ascend910-1", found["offered_again"])

    def test_differences(self):
        collector = Collector()
        line = compare_decisions("host", "inference", decisions(HUAWEI), decisions(OURS), collector)
        self.assertIn("offered again Huawei {'Ascend910-1': 72.1}", line)
        self.assertEqual([(d.key.host, d.key.kind, d.key.metric) for d in collector.all()],
                         [("host+inference", "value", "withheld devices")])
        # Offered again far apart, or not at all by one side.
        late = [dict(entry, at=entry["at"] + OFFERED_AGAIN_TOLERANCE + 1) if entry["at"] > 70 else entry
                for entry in HUAWEI]
        never = [entry for entry in HUAWEI if entry["at"] < 70]
        for theirs, metric, kind in ((late, "offered again Ascend910-1", "value"),
                                     (never, "final health Ascend910-1", "value")):
            collector = Collector()
            compare_decisions("host", "inference", decisions(theirs), decisions(HUAWEI), collector)
            self.assertEqual([(d.key.kind, d.key.metric) for d in collector.all()], [(kind, metric)])

    def test_the_overlay_faults_one_chip_and_frees_every_chip(self):
        overlay = tomllib.loads(fault_overlay(3, 1))
        self.assertEqual([chip["logic_id"] for chip in overlay["chip"]], [0, 1, 2])
        self.assertTrue(all(chip["process"] == [] for chip in overlay["chip"]))
        self.assertEqual([chip.get("faults") for chip in overlay["chip"]], [None, [0x80E24E00], None])


if __name__ == "__main__":
    unittest.main()
