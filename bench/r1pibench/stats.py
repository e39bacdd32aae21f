"""The statistics of the bench reports, from the standard library alone (no scipy on a fresh
Debian): Student's t distribution through the regularised incomplete beta function, summaries with
95% confidence intervals, Welch's t-test, the ratio of two means with its interval, and the
least-squares line with R^2."""
import math


def _betacf(a, b, x):
    """Continued fraction of the incomplete beta function (modified Lentz, as Numerical Recipes)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """Regularised incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) +
                     b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t, df):
    """P(T <= t) for Student's t with df degrees of freedom (df may be fractional: Welch)."""
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p, df):
    """The t with t_cdf(t, df) = p, by bisection (monotone, so it cannot miss)."""
    lo, hi = -1.0, 1.0
    while t_cdf(lo, df) > p:
        lo *= 2.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def mean(xs):
    return sum(xs) / len(xs)


def sd(xs):
    """Sample standard deviation (n - 1); 0 for a single value."""
    if len(xs) < 2:
        return 0.0
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def percentile(xs, p):
    """Linear interpolation between order statistics (numpy's default, Hyndman-Fan type 7)."""
    s = sorted(xs)
    k = (len(s) - 1) * p / 100.0
    f = math.floor(k)
    c = min(f + 1, len(s) - 1)
    return s[f] + (s[c] - s[f]) * (k - f)


def summary(xs):
    """mean, sd, the 95% confidence interval of the mean (Student t), min, max, p50, p90, p99."""
    n = len(xs)
    m, s = mean(xs), sd(xs)
    half = t_quantile(0.975, n - 1) * s / math.sqrt(n) if n > 1 else float("nan")
    return {"n": n, "mean": m, "sd": s, "ci95": (m - half, m + half), "min": min(xs), "max": max(xs),
            "p50": percentile(xs, 50), "p90": percentile(xs, 90), "p99": percentile(xs, 99)}


def welch(a, b):
    """Welch's t-test of mean(b) - mean(a): t, Welch-Satterthwaite degrees of freedom, two-sided p."""
    va, vb = sd(a) ** 2 / len(a), sd(b) ** 2 / len(b)
    if va + vb == 0:
        same = mean(a) == mean(b)
        return {"t": 0.0 if same else math.copysign(math.inf, mean(b) - mean(a)),
                "df": float(len(a) + len(b) - 2), "p": 1.0 if same else 0.0}
    t = (mean(b) - mean(a)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return {"t": t, "df": df, "p": 2.0 * (1.0 - t_cdf(abs(t), df))}


def ratio_ci(a, b):
    """mean(b) / mean(a) with a 95% interval by the delta method (relative standard errors added in
    quadrature) on Welch's degrees of freedom: adequate when both means are far from zero, as
    rates are."""
    ma, mb = mean(a), mean(b)
    r = mb / ma
    rel = math.sqrt(sd(a) ** 2 / len(a) / ma ** 2 + sd(b) ** 2 / len(b) / mb ** 2)
    half = t_quantile(0.975, welch(a, b)["df"]) * r * rel
    return {"ratio": r, "ci95": (r - half, r + half)}


def linear_fit(xs, ys):
    """Least squares y = a + b x: a, b and R^2."""
    a, b = weighted_line(xs, ys, [1.0] * len(xs))
    my = mean(ys)
    ss_res = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
    ss_tot = sum((y - my) ** 2 for y in ys)
    return {"a": a, "b": b, "r2": 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0}


def weighted_line(xs, ys, ws):
    """Weighted least squares y = a + b x."""
    sw = sum(ws)
    mx = sum(w * x for w, x in zip(ws, xs)) / sw
    my = sum(w * y for w, y in zip(ws, ys)) / sw
    sxx = sum(w * (x - mx) ** 2 for w, x in zip(ws, xs))
    sxy = sum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys))
    b = sxy / sxx if sxx > 0 else 0.0
    return my - b * mx, b


def robust_linear_fit(xs, ys, iterations=20):
    """y = a + b x by Tukey's biweight (iteratively reweighted least squares, scale from the
    residuals' median absolute deviation, tuning constant 4.685): a timing series on a shared
    machine has slow stretches far above the line, which pull least squares up and tilt it, while
    the biweight gives points beyond ~4.7 robust deviations no weight. Also the share of points
    that kept weight and R^2 of those points around the robust line."""
    a, b = weighted_line(xs, ys, [1.0] * len(xs))
    ws = [1.0] * len(xs)
    for _ in range(iterations):
        res = [y - a - b * x for x, y in zip(xs, ys)]
        scale = 1.4826 * percentile([abs(r) for r in res], 50)
        if scale == 0:
            break
        ws = [max(0.0, 1.0 - (r / (4.685 * scale)) ** 2) ** 2 for r in res]
        a_new, b_new = weighted_line(xs, ys, ws)
        done = abs(a_new - a) <= 1e-9 * max(1.0, abs(a)) and abs(b_new - b) <= 1e-12 * max(1.0, abs(b))
        a, b = a_new, b_new
        if done:
            break
    kept = [(x, y) for x, y, w in zip(xs, ys, ws) if w > 0]
    my = mean([y for _, y in kept])
    ss_res = sum((y - a - b * x) ** 2 for x, y in kept)
    ss_tot = sum((y - my) ** 2 for _, y in kept)
    return {"a": a, "b": b, "kept": len(kept) / len(xs),
            "below": sum(1 for x, y in zip(xs, ys) if y <= a + b * x) / len(xs),
            "r2": 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0}
