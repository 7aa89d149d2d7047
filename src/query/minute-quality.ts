import type { Static } from '@sinclair/typebox';
import type { BarBlocks, Catalog, Dataset, Field } from '../catalog/catalog.js';
import type { MinuteQualityRowSchema } from '../contract/quality.js';
import { invalid } from '../errors.js';
import { hhmm } from '../ingest/minute-bars.js';
import { BarVectors, decodeBarsInto } from '../model/bar-codec.js';
import type { Condition } from '../model/query-plan.js';
import { MAX_LISTED_DATES } from '../model/quality-rules.js';
import type { MinuteBlock, MinuteCodeSpan, MinuteQualityQuery, Store } from '../storage/store.js';
import { MAX_BLOCKS, blocksOf } from './minute-query.js';
import { BarTable } from './minute-columns.js';
import { MAX_LIMIT } from './query-params.js';
import { codeParam, reportParams } from './quality-service.js';

/**
 * The quality report of a minute dataset (docs/minute-bars.md "Quality report"): per code, each
 * day's bars resampled to `1d` against the daily dataset's bar of the same source, the days one
 * side lacks, minutes missing inside a session, impossible bars. Paged by code: one statement
 * (one snapshot, a reader process on SQLite) gives the page's codes from the block table and
 * only their blocks in the window, decoded here — at most MAX_BLOCKS a page, in slices that give
 * the event loop back between them; the daily bars are read after it.
 */

export type MinuteQualityRow = Static<typeof MinuteQualityRowSchema>;

export const MINUTE_QUALITY_PARAMS = [
  'code',
  'source',
  'date_from',
  'date_to',
  'limit',
  'offset',
  'order',
] as const;

/**
 * Codes per page by default: a year of one code is about 250 blocks, so 20 codes stay within
 * the MAX_BLOCKS a page may decode.
 */
export const MINUTE_QUALITY_LIMIT = 20;

/**
 * Largest differences taken as equal (decision): prices half the smallest tick (0.001 for ETFs),
 * so any tick apart is reported; volume half a share; amount half a yuan (vendors round daily
 * amounts, to the yuan at worst).
 */
export const MINUTE_TOLERANCE = { price: 0.0005, volume: 0.5, amount: 0.5 } as const;

/** Blocks decoded between two returns to the event loop (about 25 ms of CPU on this machine). */
const SLICE = 200;
const CACHE_SIZE = 200;
const FIELDS = ['open', 'high', 'low', 'close', 'volume', 'amount'] as const;
type BarField = (typeof FIELDS)[number];

export interface MinuteQualityPage {
  rows: MinuteQualityRow[];
  total: number;
  limit: number;
  offset: number;
  daily: string | null;
}

/** A daily bar of the compared dataset: its values by field, null where it has none. */
type DailyBar = Record<BarField, number | null>;

export class MinuteQualityService {
  private readonly cache = new Map<string, { versions: string; value: MinuteQualityPage }>();

  constructor(
    private readonly store: Pick<Store, 'datasets'>,
    private readonly catalog: Catalog,
  ) {}

  /** The datasets with a minute report: those stored as bar blocks. */
  datasets(): Dataset[] {
    return this.catalog.datasets.filter((d) => d.blocks);
  }

  async report(d: Dataset, raw: Record<string, unknown>): Promise<MinuteQualityPage> {
    const b = blocksOf(d);
    const { get, range, int, order } = reportParams(raw, MINUTE_QUALITY_PARAMS);
    const mq: MinuteQualityQuery = {
      dataset: d,
      code: codeParam(d, get('code')),
      source: get('source') ?? null,
      ...range(),
      order: order() ?? 'asc',
    };
    const limit = Math.min(int('limit', 1, MINUTE_QUALITY_LIMIT), MAX_LIMIT);
    const offset = int('offset', 0, 0);
    const daily = b.daily === null ? null : (this.catalog.byName.get(b.daily) ?? null);
    const versions = (
      await Promise.all(
        [d.name, ...(daily ? [daily.name] : [])].map((n) => this.store.datasets.datasetVersion(n)),
      )
    ).join(',');
    const key = JSON.stringify([d.name, mq.code, mq.source, mq.dateFrom, mq.dateTo, mq.order, limit, offset]);
    const hit = this.cache.get(key);
    if (hit && hit.versions === versions) return hit.value;
    // The codes, the total and the blocks in one statement: one snapshot, so a batch landing
    // meanwhile is wholly in the page or wholly out of it.
    const read = await this.store.datasets.minuteQualityPage(mq, limit, offset, MAX_BLOCKS);
    const { rows: spans, total } = read;
    if (read.blocks === null) {
      const blocks = spans.reduce((n, s) => n + s.blocks, 0);
      // The page's codes in order until the bound: how many would fit.
      let fit = 0;
      for (let n = 0; fit < spans.length && n + (spans[fit]?.blocks ?? 0) <= MAX_BLOCKS; fit++)
        n += spans[fit]?.blocks ?? 0;
      throw invalid(
        `this page's ${spans.length} codes hold ${blocks} code-days of bars, more than the ${MAX_BLOCKS} a page reads: ` +
          (fit > 0 ? `ask limit=${fit} or fewer, or ` : '') +
          'narrow date_from/date_to',
        { parameter: fit > 0 ? 'limit' : 'date_from', max_blocks: MAX_BLOCKS },
      );
    }
    const rows = spans.length ? await this.judge(b, mq, spans, read.blocks, daily) : [];
    const value: MinuteQualityPage = { rows, total, limit, offset, daily: daily?.name ?? null };
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, { versions, value });
    return value;
  }

  /** The page's codes judged over their blocks (read with them) and daily bars, slice by slice. */
  private async judge(
    b: BarBlocks,
    mq: MinuteQualityQuery,
    spans: readonly MinuteCodeSpan[],
    blocks: readonly MinuteBlock[],
    daily: Dataset | null,
  ): Promise<MinuteQualityRow[]> {
    const from = spans.reduce((m, x) => (x.first_date < m ? x.first_date : m), spans[0]?.first_date ?? '');
    const to = spans.reduce((m, x) => (x.last_date > m ? x.last_date : m), '');
    const codes = spans.map((x) => x.code);
    const where = (code: Field, dateField: Field, source: Field | undefined): Condition[] => [
      { field: code, op: 'in', values: codes },
      { field: dateField, op: 'gte', value: from },
      { field: dateField, op: 'lte', value: to },
      ...(mq.source !== null && source ? [{ field: source, op: 'eq' as const, value: mq.source }] : []),
    ];
    const dailyBars = daily ? await this.dailyBars(daily, where, mq) : new Map<string, DailyBar>();
    const rows = new Map(spans.map((x) => [x.code, emptyRow(x)]));
    // Each code and source's first and last minute date: the span where a daily bar expects minutes.
    const spanOf = new Map<string, { first: string; last: string }>();
    const seen = new Set<string>();
    // Each block decoded into one set of columns, reused; each compared day's 1d bar a row of `days`.
    const scratch = new BarVectors();
    const days = new BarTable(b, '1d', null, null);
    for (let i = 0; i < blocks.length; i++) {
      if (i > 0 && i % SLICE === 0) await new Promise((r) => setImmediate(r));
      const { code, source, date, bars: payload } = blocks[i] as MinuteBlock;
      const row = rows.get(code);
      if (!row) continue;
      const sp = spanOf.get(`${code}\u0000${source}`);
      if (!sp) spanOf.set(`${code}\u0000${source}`, { first: date, last: date });
      else if (date > sp.last) sp.last = date;
      seen.add(dayKey(code, date, source));
      const bars = decodeBarsInto(payload, scratch);
      judgeDay(b, row, date, source, bars);
      const dayBar = dailyBars.get(dayKey(code, date, source));
      if (!daily) continue;
      if (!dayBar) {
        row.no_daily++;
        push(row.no_daily_dates, { date, source });
        continue;
      }
      // The day's 1d bar, resampled as the reads resample (one row a block of the table).
      const before = days.length;
      days.addDecoded(
        { code, date, source, updatedAt: null, createdAt: null, base: 0, day: 0 },
        bars,
        null,
        [],
      );
      if (days.length === before) continue;
      const r = days.length - 1;
      row.compared_days++;
      let differs = false;
      FIELDS.forEach((field, c) => {
        const m =
          (days.valid[c] as Uint8Array)[r] === 1 ? ((days.values[c] as Float64Array)[r] as number) : null;
        const v = dayBar[field];
        if (m === null || v === null || Math.abs(m - v) <= tolerance(field)) return;
        differs = true;
        push(row.mismatches, { date, source, field, minutes: m, daily: v });
      });
      if (differs) row.mismatched_days++;
    }
    // Traded daily bars inside a code and source's minute span without its minutes.
    for (const [k, bar] of [...dailyBars].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
      const [code = '', date = '', source = ''] = k.split('\u0000');
      const sp = spanOf.get(`${code}\u0000${source}`);
      const row = rows.get(code);
      if (!row || !sp || date < sp.first || date > sp.last || seen.has(k) || bar.volume === 0) continue;
      row.no_minutes++;
      push(row.no_minute_dates, { date, source });
    }
    return [...rows.values()];
  }

  /** The daily bars of the page's codes and window, keyed by code, date and source. */
  private async dailyBars(
    daily: Dataset,
    where: (code: Field, date: Field, source: Field | undefined) => Condition[],
    mq: MinuteQualityQuery,
  ): Promise<Map<string, DailyBar>> {
    const s = daily.daily;
    if (!s) return new Map();
    const source = daily.fieldByName.get('source');
    const named = (f: BarField): Field | null =>
      (f === 'volume' ? s.bar?.volume : f === 'amount' ? null : s.bar?.[f]) ??
      daily.fieldByName.get(f) ??
      null;
    const values = FIELDS.map((f) => [f, named(f)] as const);
    const select = [
      s.code,
      s.date,
      ...(source ? [source] : []),
      ...values.flatMap(([, f]) => (f ? [f] : [])),
    ];
    const out = new Map<string, DailyBar>();
    // Pages of the key order: the window's daily bars are at most a few per block read.
    for (let offset = 0; ; offset += MAX_BLOCKS) {
      const { rows } = await this.store.datasets.query(
        {
          dataset: daily,
          select,
          where: where(s.code, s.date, mq.source !== null ? source : undefined),
          orderBy: daily.key.map((k) => ({ field: k, dir: 'asc' as const })),
          limit: MAX_BLOCKS,
          offset,
        },
        false,
      );
      for (const r of rows) {
        const bar = Object.fromEntries(
          values.map(([name, f]) => {
            const v = f ? r[f.apiName] : null;
            return [name, typeof v === 'number' ? v : v === null || v === undefined ? null : Number(v)];
          }),
        ) as DailyBar;
        out.set(
          dayKey(
            String(r[s.code.apiName]),
            String(r[s.date.apiName]),
            String(source ? r[source.apiName] : ''),
          ),
          bar,
        );
      }
      if (rows.length < MAX_BLOCKS) return out;
    }
  }
}

const dayKey = (code: string, date: string, source: string): string => `${code}\u0000${date}\u0000${source}`;

const tolerance = (f: BarField): number =>
  f === 'volume'
    ? MINUTE_TOLERANCE.volume
    : f === 'amount'
      ? MINUTE_TOLERANCE.amount
      : MINUTE_TOLERANCE.price;

/** Appends to one of a row's lists, which keep their first MAX_LISTED_DATES items. */
function push<T>(list: T[], item: T): void {
  if (list.length < MAX_LISTED_DATES) list.push(item);
}

function emptyRow(x: MinuteCodeSpan): MinuteQualityRow {
  return {
    code: x.code,
    first_date: x.first_date,
    last_date: x.last_date,
    days: x.days,
    bars: x.bars,
    compared_days: 0,
    mismatched_days: 0,
    mismatches: [],
    no_daily: 0,
    no_daily_dates: [],
    no_minutes: 0,
    no_minute_dates: [],
    gap_days: 0,
    gaps: [],
    ohlc_violations: 0,
    ohlc_violation_times: [],
  };
}

/**
 * One block's own checks: minutes missing inside a session that has bars (a session without
 * any is a half day or a suspension, no gap), and impossible bars. Bars outside the sessions
 * cannot be stored (ingest refuses them).
 */
function judgeDay(b: BarBlocks, row: MinuteQualityRow, date: string, source: string, bars: BarVectors): void {
  const n = bars.length;
  const minutes = bars.minutes;
  let expected = 0;
  for (const [from, to] of b.sessions) {
    for (let i = 0; i < n; i++) {
      const m = minutes[i] as number;
      if (m > from && m <= to) {
        expected += to - from;
        break;
      }
    }
  }
  if (n < expected) {
    row.gap_days++;
    push(row.gaps, { date, source, bars: n, expected });
  }
  const [open, high, low, close, volume] = bars.values as Float64Array[];
  const [hasOpen, hasHigh, hasLow, hasClose, hasVolume] = bars.valid as Uint8Array[];
  if (!open || !high || !low || !close || !volume) return;
  if (!hasOpen || !hasHigh || !hasLow || !hasClose || !hasVolume) return;
  for (let i = 0; i < n; i++) {
    const range = hasLow[i] === 1 && hasHigh[i] === 1;
    const lo = low[i] as number;
    const hi = high[i] as number;
    const outside = (has: number | undefined, v: number | undefined): boolean =>
      range && has === 1 && ((v as number) < lo || (v as number) > hi);
    const bad =
      (range && lo > hi) ||
      outside(hasOpen[i], open[i]) ||
      outside(hasClose[i], close[i]) ||
      (hasVolume[i] === 1 && (volume[i] as number) < 0);
    if (!bad) continue;
    row.ohlc_violations++;
    push(row.ohlc_violation_times, {
      time: `${date}T${hhmm(minutes[i] as number)}:00${b.utcOffset}`,
      source,
    });
  }
}
