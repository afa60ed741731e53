// Statistics of the benchmarks and the reliability runs, defined once so every figure in docs/ is computed alike.

/** The median of numbers: the middle value, or the mean of the two middle ones (NaN for none). */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The p-th percentile (0-100) of numbers by nearest rank: the smallest value with p % of them at or below it. */
export function percentile(xs, p) {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** Of several runs, the one whose `key` is the median (the upper one of an even count): its other figures go with it. */
export function medianBy(items, key) {
  return [...items].sort((a, b) => key(a) - key(b))[Math.floor(items.length / 2)];
}
