#!/usr/bin/env python3
"""The bench/ scripts' pieces: r1pibench/stats.py against values checked by hand or taken from
printed tables; the environment check and the output-hash gate of ab.py, which must refuse."""
import contextlib
import io
import math
import os
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ab  # noqa: E402
from r1pibench import env, report, runs, stats  # noqa: E402


class StudentT(unittest.TestCase):
    def test_quantiles_match_the_printed_table(self):
        # Two-sided 95% (p = 0.975) and 99% (0.995) critical values, as in every t table.
        for df, p, t in [(1, 0.975, 12.7062), (2, 0.975, 4.3027), (10, 0.975, 2.2281),
                         (19, 0.975, 2.0930), (30, 0.975, 2.0423), (10, 0.995, 3.1693),
                         (1000, 0.975, 1.9623)]:
            self.assertAlmostEqual(stats.t_quantile(p, df), t, places=4, msg=(df, p))

    def test_cdf_by_closed_forms(self):
        # df = 1 is Cauchy: F(t) = 1/2 + atan(t)/pi; df = 2: F(t) = 1/2 + t / (2 sqrt(2 + t^2)).
        for t in (-3.0, -0.5, 0.0, 0.7, 4.0):
            self.assertAlmostEqual(stats.t_cdf(t, 1), 0.5 + math.atan(t) / math.pi, places=12)
            self.assertAlmostEqual(stats.t_cdf(t, 2), 0.5 + t / (2 * math.sqrt(2 + t * t)), places=12)


class Summaries(unittest.TestCase):
    def test_mean_sd_ci_and_percentiles(self):
        xs = [2, 4, 4, 4, 5, 5, 7, 9]
        s = stats.summary(xs)
        self.assertEqual(s["mean"], 5)
        self.assertAlmostEqual(s["sd"], math.sqrt(32 / 7), places=12)
        # 5 +- t(0.975, 7) * sd / sqrt(8), t(0.975, 7) = 2.3646 (table).
        half = 2.364624 * math.sqrt(32 / 7) / math.sqrt(8)
        self.assertAlmostEqual(s["ci95"][0], 5 - half, places=5)
        self.assertAlmostEqual(s["ci95"][1], 5 + half, places=5)
        self.assertEqual((s["min"], s["max"]), (2, 9))
        # Type 7: position (n - 1) p in the sorted list: p50 4.5, p90 at 6.3 -> 7 + 0.3 * 2.
        self.assertAlmostEqual(s["p50"], 4.5)
        self.assertAlmostEqual(s["p90"], 7.6)
        self.assertAlmostEqual(s["p99"], 7 + 0.93 * 2)

    def test_one_value(self):
        s = stats.summary([3.0])
        self.assertEqual((s["sd"], s["p50"], s["p99"]), (0.0, 3.0, 3.0))


class Welch(unittest.TestCase):
    # Wikipedia's example of Welch's t-test (A1, A2): t = -2.46 and p = 0.021 (for A1 - A2; welch()
    # takes b - a, so the sign turns); df = 24.99 by the Welch-Satterthwaite formula on the
    # standard library's statistics.variance (7.8674 and 3.8127).
    A1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4]
    A2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4]

    def test_published_example(self):
        w = stats.welch(self.A2, self.A1)
        self.assertAlmostEqual(w["t"], -2.46, places=2)
        self.assertAlmostEqual(w["df"], 24.99, places=2)
        self.assertAlmostEqual(w["p"], 0.021, places=3)

    def test_by_hand(self):
        # a: mean 2, var 1; b: mean 4, var 1; n = 3 each: t = 2 / sqrt(2/3), df = 4.
        w = stats.welch([1, 2, 3], [3, 4, 5])
        self.assertAlmostEqual(w["t"], 2 / math.sqrt(2 / 3), places=12)
        self.assertAlmostEqual(w["df"], 4.0, places=12)
        self.assertAlmostEqual(w["p"], 2 * (1 - stats.t_cdf(2 / math.sqrt(2 / 3), 4)), places=12)

    def test_identical_constant_samples(self):
        self.assertEqual(stats.welch([5, 5], [5, 5])["p"], 1.0)


class Ratio(unittest.TestCase):
    def test_by_hand(self):
        # a: mean 2, sd 1, n 3; b: mean 4, sd 1, n 3: r = 2, relative se sqrt(1/12 + 1/48),
        # Welch df 4, t(0.975, 4) = 2.7764 (table).
        r = stats.ratio_ci([1, 2, 3], [3, 4, 5])
        self.assertEqual(r["ratio"], 2.0)
        half = 2.776445 * 2 * math.sqrt(1 / 12 + 1 / 48)
        self.assertAlmostEqual(r["ci95"][0], 2 - half, places=5)
        self.assertAlmostEqual(r["ci95"][1], 2 + half, places=5)


class LeastSquares(unittest.TestCase):
    def test_by_hand(self):
        # x 1..5, y 2 4 5 4 5: b = 6 / 10, a = 4.0 - 0.6 * 3, SSres 2.4 of SStot 6.
        f = stats.linear_fit([1, 2, 3, 4, 5], [2, 4, 5, 4, 5])
        self.assertAlmostEqual(f["b"], 0.6, places=12)
        self.assertAlmostEqual(f["a"], 2.2, places=12)
        self.assertAlmostEqual(f["r2"], 0.6, places=12)

    def test_the_seeds_decode_law_is_recovered(self):
        xs = list(range(0, 4096, 7))
        f = stats.linear_fit(xs, [116.73 + 0.0174 * x for x in xs])
        self.assertAlmostEqual(f["a"], 116.73, places=9)
        self.assertAlmostEqual(f["b"], 0.0174, places=12)
        self.assertAlmostEqual(f["r2"], 1.0, places=12)


class RobustLine(unittest.TestCase):
    """The decode-rate law's fit: the line must run under the bulk of the points when a shared
    machine's slow stretches put a fifth of the tokens far above it."""

    def series(self):
        xs = list(range(0, 4000, 2))
        # Deterministic jitter of +-0.5 ms and every fifth token 5-30 ms slow.
        ys = [24.0 + 0.0023 * x + 0.5 * math.sin(1.7 * x) + (5 + (x * 7919) % 25 if x % 10 == 0 else 0)
              for x in xs]
        return xs, ys

    def test_slow_stretches_do_not_lift_the_line(self):
        xs, ys = self.series()
        plain, robust = stats.linear_fit(xs, ys), stats.robust_linear_fit(xs, ys)
        self.assertGreater(plain["a"] - 24.0, 2.0)  # least squares is lifted (why the fit changed)
        self.assertAlmostEqual(robust["a"], 24.0, delta=0.1)
        self.assertAlmostEqual(robust["b"], 0.0023, delta=0.00005)
        self.assertAlmostEqual(robust["kept"], 0.8, delta=0.01)  # the slow fifth has no weight
        self.assertGreater(robust["below"], 0.3)

    def test_a_clean_line_is_recovered_exactly(self):
        xs = list(range(0, 4096, 7))
        f = stats.robust_linear_fit(xs, [116.73 + 0.0174 * x for x in xs])
        self.assertAlmostEqual(f["a"], 116.73, places=9)
        self.assertAlmostEqual(f["b"], 0.0174, places=12)
        self.assertEqual(f["kept"], 1.0)


class ResultsFolder(unittest.TestCase):
    def test_default_is_outside_the_checkout(self):
        base = tempfile.mkdtemp()
        with mock.patch.dict(os.environ, {"R1PI_RESULTS_DIR": base}):
            path = report.results_dir()
        self.assertTrue(path.startswith(base + os.sep), path)
        self.assertFalse(os.path.abspath(path).startswith(os.path.dirname(HERE) + os.sep))
        with mock.patch.dict(os.environ, {"R1PI_RESULTS_DIR": ""}):
            with mock.patch("os.makedirs"):
                home = report.results_dir()
        self.assertTrue(home.startswith(os.path.join(os.path.expanduser("~"), "r1pi-results")), home)

    def test_a_plot_without_a_title_is_refused(self):
        png = os.path.join(tempfile.mkdtemp(), "x.png")
        with self.assertRaises(SystemExit):
            with contextlib.redirect_stderr(io.StringIO()):
                report.plot(png, "plot x")
        self.assertFalse(os.path.exists(png))


class Environment(unittest.TestCase):
    def test_record_has_every_compared_field(self):
        e = env.record(HERE)
        for key in env.STATIC + ("frequency_mhz", "temperature_c", "load", "model_sha256"):
            self.assertIn(key, e)

    def test_changes_name_the_field(self):
        before = {"governor": "performance", "kernel": "6.1", "load": "1.0"}
        after = {"governor": "powersave", "kernel": "6.1", "load": "5.0"}
        self.assertEqual(env.changes(before, after, ("governor", "kernel")), ["governor: performance -> powersave"])


def fake_r1pi(sha):
    """A shell line that prints r1pi's summary lines with this sha256 (or one that moves)."""
    return "printf 'decode: 10 tokens, 100.0 tok/s\\nsha256: %s\\n' >&2" % sha


class AbRefuses(unittest.TestCase):
    SHA = "ab" * 32

    def run_ab(self, a, b, *extra):
        out = tempfile.mkdtemp()
        argv = ["ab.py", "--a", a, "--b", b, "-N", "2", "-W", "0", "--out", out] + list(extra)
        err = io.StringIO()
        with mock.patch.object(sys, "argv", argv), contextlib.redirect_stderr(err):
            try:
                ab.main()
                code = 0
            except SystemExit as e:
                code = e.code
        return code, err.getvalue(), out

    def test_a_moved_hash(self):
        counter = os.path.join(tempfile.mkdtemp(), "n")
        moving = ("n=$(cat %s 2>/dev/null || echo 0); echo $((n + 1)) > %s; "
                  "printf 'decode: 10 tokens, 100.0 tok/s\\nsha256: %%064d\\n' $n >&2" % (counter, counter))
        code, err, _ = self.run_ab(fake_r1pi(self.SHA), moving)
        self.assertEqual(code, 1)
        self.assertIn("the output moved", err)

    def test_a_changed_environment(self):
        real = env.record
        calls = []

        def drifting(*args, **kwargs):
            e = real(*args, **kwargs)
            calls.append(1)
            e["governor"] = "performance" if len(calls) < 4 else "powersave"
            return e

        with mock.patch.object(env, "record", drifting):
            code, err, _ = self.run_ab(fake_r1pi(self.SHA), fake_r1pi(self.SHA))
            self.assertEqual(code, 1)
            self.assertIn("governor: performance -> powersave", err)
            calls.clear()
            code, err, out = self.run_ab(fake_r1pi(self.SHA), fake_r1pi(self.SHA), "--allow-env-change")
            self.assertEqual(code, 0, err)
            with open(os.path.join(out, "ab.md")) as f:
                self.assertIn("governor: performance -> powersave", f.read())

    def test_summary_lines_are_read(self):
        s = runs.r1pi_summary("run: 1 rank x 2 threads, avx2 kernels, context 4096\nprefill: 5 tokens, 50.5 tok/s\n"
                              "decode: 9 tokens, 7.25 tok/s\nsha256: %s\n" % self.SHA)
        self.assertEqual((s["prefill"], s["decode"], s["decode_tokens"], s["sha256"], s["kernels"]),
                         (50.5, 7.25, 9, self.SHA, "avx2"))


if __name__ == "__main__":
    unittest.main()
