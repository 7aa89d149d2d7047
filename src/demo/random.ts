/**
 * Deterministic randomness for demo data: the same seed gives the same data, so a second
 * `mds seed --demo` finds every batch already processed instead of writing new rows.
 */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }

  /** mulberry32: small, fast, good enough for synthetic prices. */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  between(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  int(lo: number, hi: number): number {
    return Math.floor(this.between(lo, hi + 1));
  }

  /** Standard normal (Box–Muller). */
  normal(): number {
    const u = Math.max(this.next(), 1e-12);
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** A child generator whose sequence does not depend on how much this one is used later. */
  fork(label: string): Random {
    let h = this.state ^ 0x811c9dc5;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
    return new Random(h >>> 0);
  }
}

/** Rounds to `digits` decimals, the way a data vendor publishes prices. */
export const round = (x: number, digits: number): number => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

/**
 * The demo exchange holidays: New Year's Day, Labour Day (1–3 May) and National Day (1–7
 * October), by rule; the real calendars add the lunar holidays, which the demo leaves out.
 */
export function isDemoHoliday(date: string): boolean {
  const md = date.slice(5);
  return md === '01-01' || (md >= '05-01' && md <= '05-03') || (md >= '10-01' && md <= '10-07');
}

/** True on the demo's trading days: weekdays that are not demo holidays. */
export function isDemoTradingDay(date: string): boolean {
  const day = new Date(`${date}T00:00:00Z`).getUTCDay();
  return day !== 0 && day !== 6 && !isDemoHoliday(date);
}

/** Demo trading days ending at `end` (YYYY-MM-DD) or the trading day before it, oldest first. */
export function tradingDays(end: string, count: number): string[] {
  const out: string[] = [];
  let t = Date.parse(`${end}T00:00:00Z`);
  while (out.length < count) {
    const date = new Date(t).toISOString().slice(0, 10);
    if (isDemoTradingDay(date)) out.push(date);
    t -= 86_400_000;
  }
  return out.reverse();
}

/** The last day of each calendar quarter in [first, last]. */
export function quarterEnds(first: string, last: string): string[] {
  const out: string[] = [];
  const y0 = Number(first.slice(0, 4));
  const y1 = Number(last.slice(0, 4));
  for (let y = y0; y <= y1; y++) {
    for (const md of ['03-31', '06-30', '09-30', '12-31']) {
      const d = `${y}-${md}`;
      if (d >= first && d <= last) out.push(d);
    }
  }
  return out;
}

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** The latest demo trading day on or before `date`. */
export function lastWeekday(date: string): string {
  let d = date;
  while (!isDemoTradingDay(d)) d = addDays(d, -1);
  return d;
}
