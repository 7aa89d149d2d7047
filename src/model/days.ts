/** Calendar days written YYYY-MM-DD (UTC): the arithmetic the stored periods and the quality report share. */

export const DAY = 86_400_000;
/** The day's midnight, UTC, in ms. */
export const ms = (date: string): number => Date.parse(`${date}T00:00:00Z`);
export const isoDay = (t: number): string => new Date(t).toISOString().slice(0, 10);

/** A calendar date (YYYY-MM-DD, years 1000–9999): anything else (the stored periods: anything else keeps the on-demand path). */
export function isCalendarDate(v: unknown): v is string {
  return typeof v === 'string' && /^[1-9]\d{3}-\d{2}-\d{2}$/.test(v) && isoDay(ms(v)) === v;
}

export const dayAfter = (date: string): string => isoDay(ms(date) + DAY);
export const dayBefore = (date: string): string => isoDay(ms(date) - DAY);
