import type { Dataset, DailySeries } from '../catalog/catalog.js';
import { ident, join, q, raw, sql, type Sql } from './sql.js';
import type { QualityQuery } from './store.js';

/**
 * The statements of the data-quality report (GET /api/v1/quality/{dataset}): aggregates per
 * code computed by the database, so only one row per code (and the rare bad bars) reach the
 * domain, which judges them against the calendar (query/quality-service.ts).
 */

function daily(d: Dataset): DailySeries {
  if (!d.daily) throw new Error(`${d.name} is not a daily series`);
  return d.daily;
}

/** The report's filters on the daily rows: one code, and the date window. */
function conditions(qq: QualityQuery): Sql[] {
  const s = daily(qq.dataset);
  const out: Sql[] = [];
  if (qq.code !== null) out.push(sql`${ident(s.code.name)} = ${qq.code}`);
  if (qq.dateFrom !== null) out.push(sql`${ident(s.date.name)} >= ${qq.dateFrom}`);
  if (qq.dateTo !== null) out.push(sql`${ident(s.date.name)} <= ${qq.dateTo}`);
  return out;
}

const where = (parts: Sql[]): Sql => (parts.length ? sql` WHERE ${join(parts, ' AND ')}` : raw(''));

/** The open days of the report's exchange, as a subquery of dates. */
function openDays(qq: QualityQuery): Sql {
  const c = qq.calendar.calendar;
  if (!c) throw new Error(`${qq.calendar.name} is not a calendar`);
  return sql`SELECT ${ident(c.date.name)} FROM ${ident(qq.calendar.name)} WHERE ${ident(c.exchange.name)} = ${qq.exchange} AND ${ident(c.isOpen.name)} = 1`;
}

/**
 * Per code: first and last date, distinct bar dates, those on open days of the calendar, and
 * days with zero volume. Several sources of one day count once.
 */
export function qualitySummarySql(qq: QualityQuery): Sql {
  const s = daily(qq.dataset);
  const code = ident(s.code.name);
  const date = ident(s.date.name);
  const volume = s.bar?.volume;
  const zero = volume
    ? raw(`count(DISTINCT CASE WHEN ${q(volume.name)} = 0 THEN ${q(s.date.name)} END)`)
    : raw('CAST(NULL AS INTEGER)');
  return sql`SELECT ${code} AS code, min(${date}) AS first_date, max(${date}) AS last_date, count(DISTINCT ${date}) AS bars, count(DISTINCT CASE WHEN ${date} IN (${openDays(qq)}) THEN ${date} END) AS open_bars, ${zero} AS zero_volume_days FROM ${ident(qq.dataset.name)}${where(conditions(qq))} GROUP BY ${code}`;
}

/** Impossible bars: low > high, open or close outside [low, high], negative volume. */
export function qualityViolationsSql(qq: QualityQuery): Sql | null {
  const b = daily(qq.dataset).bar;
  if (!b) return null;
  const [o, h, l, c] = [b.open, b.high, b.low, b.close].map((f) => q(f.name));
  const bad = [`${l} > ${h}`, `${o} < ${l}`, `${o} > ${h}`, `${c} < ${l}`, `${c} > ${h}`];
  if (b.volume) bad.push(`${q(b.volume.name)} < 0`);
  const s = daily(qq.dataset);
  return sql`SELECT DISTINCT ${ident(s.code.name)} AS code, ${ident(s.date.name)} AS date FROM ${ident(qq.dataset.name)}${where(
    [...conditions(qq), raw(`(${bad.join(' OR ')})`)],
  )} ORDER BY code, date`;
}

/** The open days of the exchange, oldest first. */
export function qualityOpenDaysSql(qq: QualityQuery): Sql {
  const c = qq.calendar.calendar;
  if (!c) throw new Error(`${qq.calendar.name} is not a calendar`);
  return sql`SELECT DISTINCT ${ident(c.date.name)} AS date FROM (${openDays(qq)}) AS "o" ORDER BY date`;
}

/** The exchanges the calendar holds. */
export function calendarExchangesSql(calendar: Dataset): Sql {
  const c = calendar.calendar;
  if (!c) throw new Error(`${calendar.name} is not a calendar`);
  return sql`SELECT DISTINCT ${ident(c.exchange.name)} AS exchange FROM ${ident(calendar.name)} ORDER BY exchange`;
}

/** One code's distinct bar dates within [from, to]. */
export function codeDatesSql(d: Dataset, code: string, from: string, to: string): Sql {
  const s = daily(d);
  const date = ident(s.date.name);
  return sql`SELECT DISTINCT ${date} AS date FROM ${ident(d.name)} WHERE ${ident(s.code.name)} = ${code} AND ${date} >= ${from} AND ${date} <= ${to} ORDER BY date`;
}
