// Times as players read them, from the server's milliseconds.

/** A game clock: m:ss.sss. */
export function formatClock(ms) {
  const total = Math.max(0, ms) / 1000;
  const m = Math.floor(total / 60);
  const s = total - m * 60;
  return `${m}:${s.toFixed(3).padStart(6, "0")}`;
}

/** A result: 12.345 s under a minute, m:ss.sss above. */
export function formatTime(ms) {
  const total = ms / 1000;
  return total < 60 ? `${total.toFixed(3)} s` : formatClock(ms);
}

/** A chance of a mine, as a percentage with at most one decimal. */
export function formatPercent(p) {
  return `${(Math.round(p * 1000) / 10).toString()}%`;
}
