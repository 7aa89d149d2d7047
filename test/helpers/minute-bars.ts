import { hhmm } from '../../src/ingest/minute-bars.js';

/** Minute bars for tests (issue 30): a day's 240 bars of one code, deterministic, with 2-decimal prices. */

/** The end minutes of an A-share day, HH:MM: 09:31–11:30 and 13:01–15:00. */
export function sessionMinutes(): string[] {
  const out: string[] = [];
  for (const [from, to] of [
    [570, 690],
    [780, 900],
  ] as const) {
    for (let m = from + 1; m <= to; m++) out.push(hhmm(m));
  }
  return out;
}

/** `code`'s 240 bars of `date` from `source`: a walk from `base`, more volume at the open and the close. */
export function dayBars(code: string, date: string, base = 10, source = 'eastmoney') {
  let seed = [...`${code}${date}`].reduce((s, c) => (s * 31 + c.charCodeAt(0)) >>> 0, 7);
  const rand = (): number => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const cents = (x: number): number => Math.round(x * 100) / 100;
  let close = base;
  return sessionMinutes().map((hm, i) => {
    const open = close;
    close = cents(Math.max(0.01, open + (rand() - 0.5) * 0.1));
    const high = cents(Math.max(open, close) + rand() * 0.03);
    const low = cents(Math.max(0.01, Math.min(open, close) - rand() * 0.03));
    const shape = 1 + (3 * Math.abs(i - 119.5) ** 2) / 119.5 ** 2;
    const volume = Math.round(rand() * 1000 * shape + 1) * 100;
    return {
      symbol: code,
      date,
      time: `${date}T${hm}:00+08:00`,
      open,
      high,
      low,
      close,
      volume,
      amount: cents((volume * (open + close)) / 2),
      source,
    };
  });
}
