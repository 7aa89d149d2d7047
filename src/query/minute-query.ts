import { createHash } from 'node:crypto';
import type { BarBlocks } from '../catalog/catalog.js';
import { BLOCK_BARS, BLOCK_COUNT } from '../catalog/catalog.js';
import type { Dataset, Field } from '../catalog/catalog.js';
import { invalid } from '../errors.js';
import { exchangeMinute, hhmm } from '../ingest/minute-bars.js';
import { decodeBars } from '../model/bar-codec.js';
import type { Store } from '../storage/store.js';
import type { Condition, QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';
import { planFingerprint } from './cursor.js';
import type { ParsedQuery } from './parse.js';
import type { QueryPage, QueryService } from './query-service.js';
import { resample, type MinuteBar } from './minute-sessions.js';
import { adjustMeta } from './adjust-meta.js';
import type { BarKey, FactorState } from './factor-sources.js';
import { minuteAdjuster } from './minute-adjust.js';

import { MINUTE_INTERVALS, readMinuteInterval, readParam, type MinuteInterval } from './query-params.js';

export { MINUTE_INTERVALS, type MinuteInterval };

/** Most blocks (code-days) one answer reads: a whole market day (docs/minute-bars.md). */
export const MAX_BLOCKS = 6000;
const EXPORT_CHUNK = 1000;

interface MinuteRequest {
  interval: MinuteInterval;
  /** Epoch ms bounds on the bar's end minute; null: open. */
  timeFrom: number | null;
  timeTo: number | null;
}

/**
 * The intraday datasets' reads (docs/minute-bars.md): the common parameters parsed and planned
 * as for every dataset (QueryService.parse), the plan's filters on code, date and source moved
 * onto the stored blocks (catalog.ts `BarBlocks`) with `as_of`, the blocks decoded, filtered by
 * `time_from` / `time_to`, resampled by session, then sorted and paged here.
 */
export class MinuteQueryService {
  private readonly requests = new WeakMap<QueryPlan, MinuteRequest>();

  constructor(
    private readonly store: Pick<Store, 'datasets'>,
    private readonly query: QueryService,
  ) {}

  parse(d: Dataset, raw: Record<string, unknown>): { parsed: ParsedQuery; plan: QueryPlan } {
    blocksOf(d);
    const rest: Record<string, unknown> = { ...raw };
    const once = (name: string): string | undefined => {
      const v = rest[name];
      delete rest[name];
      if (v === undefined) return undefined;
      if (typeof v !== 'string') throw invalid(`parameter ${name} must be given once`, { parameter: name });
      return v;
    };
    // Read here, before the common parser, by their declarations (query-params.ts).
    const interval = readMinuteInterval(once('interval'));
    const timeFrom = readParam('time_from', d, once);
    const timeTo = readParam('time_to', d, once);
    const cursor = once('cursor');
    const { parsed, plan } = this.query.parse(d, rest);
    const req: MinuteRequest = { interval, timeFrom, timeTo };
    // The time bounds' trading dates bound the blocks read, and the window of adjust_anchor=end.
    const b = blocksOf(d);
    const dayOf = (ms: number): string => exchangeMinute(b, new Date(ms).toISOString()).date;
    const bounds: Condition[] = [];
    if (timeFrom !== null) bounds.push({ field: b.date, op: 'gte', value: dayOf(timeFrom) });
    if (timeTo !== null) bounds.push({ field: b.date, op: 'lte', value: dayOf(timeTo) });
    plan.where = [...plan.where, ...bounds];
    if (cursor !== undefined) plan.offset = offsetOf(plan, req, cursor);
    parsed.cursor = cursor ?? null;
    this.requests.set(plan, req);
    return { parsed, plan };
  }

  /** `factorsVersion`: an adjusted answer's factor version as the route read it (else read here). */
  async page(plan: QueryPlan, version: number, factorsVersion?: number): Promise<QueryPage> {
    const state = await this.query.factors.stateOf(plan, factorsVersion);
    const { page, total } = (await this.dayPage(plan, state)) ?? (await this.wholePage(plan, state));
    const hasMore = plan.offset + page.length < total;
    const b = blocksOf(plan.dataset);
    const adjust = state
      ? await adjustMeta(
          this.store,
          this.query.factors,
          plan,
          state,
          page.map((r) => barKey(b, r)),
        )
      : undefined;
    return {
      ...(adjust ? { adjust } : {}),
      rows: { kind: 'objects', rows: page.map((r) => project(plan, r)) },
      total,
      limit: plan.limit,
      offset: plan.offset,
      hasMore,
      nextCursor: hasMore ? cursorOf(plan, this.request(plan), plan.offset + page.length) : null,
      version,
    };
  }

  async *stream(plan: QueryPlan): AsyncIterable<Record<string, Value>[]> {
    for await (const rows of this.chunks(plan)) yield rows.map((r) => project(plan, r));
  }

  async *streamArrays(plan: QueryPlan): AsyncIterable<Value[][]> {
    const names = plan.select.map((f) => f.apiName);
    for await (const rows of this.chunks(plan)) yield rows.map((r) => names.map((n) => r[n] ?? null));
  }

  /**
   * An export's rows in chunks: ordered by time or date, one trading date at a time (a
   * day's bars of every code sorted in memory); in another order, the whole answer at once.
   */
  private async *chunks(plan: QueryPlan): AsyncIterable<Record<string, Value>[]> {
    const b = blocksOf(plan.dataset);
    // The route checked the factor sources before the first byte (QueryService.checkAdjust).
    const state = await this.query.factors.stateOf(plan);
    const lead = plan.orderBy[0];
    const rows = async function* (all: Record<string, Value>[]) {
      for (let i = plan.offset; i < all.length; i += EXPORT_CHUNK) yield all.slice(i, i + EXPORT_CHUNK);
    };
    if (!lead || (lead.field !== b.time && lead.field !== b.date)) {
      yield* rows(await this.allRows(plan, state));
      return;
    }
    const dates = await this.dates(plan, lead.dir);
    for (const date of dates) {
      const day = await this.rowsOf(
        plan,
        [{ field: b.stored.fieldByName.get(b.date.name) as Field, op: 'eq', value: date }],
        state,
      );
      for (let i = 0; i < day.length; i += EXPORT_CHUNK) yield day.slice(i, i + EXPORT_CHUNK);
    }
  }

  private async wholePage(
    plan: QueryPlan,
    state: FactorState | null,
  ): Promise<{ page: Row[]; total: number }> {
    const rows = await this.allRows(plan, state);
    return { page: rows.slice(plan.offset, plan.offset + plan.limit), total: rows.length };
  }

  /**
   * A page of 1m bars in time or date order without time bounds, decoding only the trading dates
   * it covers: the total is the blocks' bar counts (read without their payloads), and the dates
   * before the page are skipped by their counts. null: another query (resampled, time-bounded or
   * sorted by a value), whose rows are only known once every block is decoded.
   */
  private async dayPage(
    plan: QueryPlan,
    state: FactorState | null,
  ): Promise<{ page: Row[]; total: number } | null> {
    const b = blocksOf(plan.dataset);
    const req = this.request(plan);
    const lead = plan.orderBy[0];
    if (req.interval !== '1m' || req.timeFrom !== null || req.timeTo !== null) return null;
    if (!lead || (lead.field !== b.time && lead.field !== b.date)) return null;
    const date = b.stored.fieldByName.get(b.date.name) as Field;
    const count = b.stored.fieldByName.get(BLOCK_COUNT) as Field;
    const blocks = (
      await this.store.datasets.query({ ...this.blockPlan(plan, []), select: [date, count] }, false)
    ).rows;
    tooMany(b, blocks.length);
    const perDay = new Map<string, number>();
    for (const r of blocks) {
      const d = r[date.apiName] as string;
      perDay.set(d, (perDay.get(d) ?? 0) + Number(r[count.apiName]));
    }
    const days = [...perDay.keys()].sort();
    if (lead.dir === 'desc') days.reverse();
    let skip = plan.offset;
    const page: Row[] = [];
    for (const d of days) {
      const n = perDay.get(d) ?? 0;
      if (skip >= n) {
        skip -= n;
        continue;
      }
      const day = await this.rowsOf(plan, [{ field: date, op: 'eq', value: d }], state);
      page.push(...day.slice(skip, skip + plan.limit - page.length));
      skip = 0;
      if (page.length >= plan.limit) break;
    }
    return { page, total: [...perDay.values()].reduce((a, n) => a + n, 0) };
  }

  private request(plan: QueryPlan): MinuteRequest {
    return this.requests.get(plan) ?? { interval: '1m', timeFrom: null, timeTo: null };
  }

  private allRows(plan: QueryPlan, state: FactorState | null): Promise<Record<string, Value>[]> {
    return this.rowsOf(plan, [], state);
  }

  /** The trading dates the plan's blocks cover, in `dir` order. */
  private async dates(plan: QueryPlan, dir: 'asc' | 'desc'): Promise<string[]> {
    const b = blocksOf(plan.dataset);
    const date = b.stored.fieldByName.get(b.date.name) as Field;
    const read = await this.store.datasets.query(
      { ...this.blockPlan(plan, []), select: [date], orderBy: [{ field: date, dir }], distinct: true },
      false,
    );
    return read.rows.map((r) => r[date.apiName] as string);
  }

  /** The stored blocks' plan: the filters on code, date and source (the time bounds' dates among them), `as_of`. */
  private blockPlan(plan: QueryPlan, extra: readonly Condition[]): QueryPlan {
    const b = blocksOf(plan.dataset);
    const s = b.stored;
    const onStored = (f: Field): Field => s.fieldByName.get(f.name) ?? f;
    const where: Condition[] = plan.where.map((c) => ({ ...c, field: onStored(c.field) }) as Condition);
    where.push(...extra);
    const key = s.key;
    return {
      dataset: s,
      select: s.rowFields,
      where,
      orderBy: key.map((k) => ({ field: k, dir: 'asc' as const })),
      limit: MAX_BLOCKS + 1,
      offset: 0,
      ...(plan.asOf !== undefined ? { asOf: plan.asOf } : {}),
    };
  }

  /** Every bar row the plan selects (with `extra` block conditions), resampled and in the plan's order. */
  private async rowsOf(
    plan: QueryPlan,
    extra: readonly Condition[],
    state: FactorState | null,
  ): Promise<Record<string, Value>[]> {
    const b = blocksOf(plan.dataset);
    const s = b.stored;
    const req = this.request(plan);
    const blocks = (await this.store.datasets.query(this.blockPlan(plan, extra), false)).rows;
    tooMany(b, blocks.length);
    decodedBlocks.count += blocks.length;
    const api = (f: Field): string => (s.fieldByName.get(f.name) ?? f).apiName;
    const keyOf = (blk: Record<string, Value>): BarKey => ({
      code: String(blk[api(b.code)]),
      source: String(blk[api(b.source)]),
    });
    const adjuster =
      state && b.adjust
        ? await minuteAdjuster(this.store, this.query.factors, plan, state, blocks.map(keyOf))
        : null;
    // The adjusted values' columns in the block (open, high, low, close).
    const prices = b.adjust ? b.adjust.prices.map((f) => b.values.indexOf(f)) : [];
    const out: Record<string, Value>[] = [];
    for (const blk of blocks) {
      const bars = decodeBars(blk[BLOCK_BARS] as string);
      const date = blk[api(b.date)] as string;
      let day: MinuteBar[] = bars.minutes.map((minute, i) => ({
        minute,
        values: bars.columns.map((c) => c[i] ?? null),
      }));
      if (req.timeFrom !== null || req.timeTo !== null) {
        const base = Date.parse(`${date}T00:00:00Z`) - b.offsetMinutes * 60_000;
        day = day.filter((bar) => {
          const at = base + bar.minute * 60_000;
          return (req.timeFrom === null || at >= req.timeFrom) && (req.timeTo === null || at <= req.timeTo);
        });
      }
      if (req.interval !== '1m') day = resample(b, day, req.interval);
      // After resampling: a day's bars share one factor, and scaling by a positive factor keeps
      // which bar is first, last, highest and lowest, so the values are those of adjusting each bar.
      const k = keyOf(blk);
      const scale = adjuster ? await adjuster(k.code, k.source ?? '', date) : null;
      if (scale) for (const bar of day) for (const c of prices) bar.values[c] = scale(bar.values[c] ?? null);
      for (const bar of day) {
        const row: Record<string, Value> = {
          [b.code.apiName]: blk[api(b.code)] ?? null,
          [b.date.apiName]: date,
          [b.time.apiName]: `${date}T${hhmm(bar.minute)}:00${b.utcOffset}`,
        };
        b.values.forEach((f, c) => (row[f.apiName] = bar.values[c] ?? null));
        row[b.source.apiName] = blk[api(b.source)] ?? null;
        row.updated_at = blk.updated_at ?? null;
        row.created_at = blk.created_at ?? null;
        out.push(row);
      }
    }
    const order = plan.orderBy.map((o) => ({ name: o.field.apiName, sign: o.dir === 'asc' ? 1 : -1 }));
    out.sort((x, y) => {
      for (const o of order) {
        const c = compare(x[o.name] ?? null, y[o.name] ?? null);
        if (c !== 0) return c * o.sign;
      }
      return 0;
    });
    return out;
  }
}

type Row = Record<string, Value>;

/** Blocks decoded by reads since the process started: what a page costs, as tests see it. */
export const decodedBlocks = { count: 0 };

/** One answer reads at most MAX_BLOCKS blocks: more is the client's to narrow. */
function tooMany(b: BarBlocks, blocks: number): void {
  if (blocks > MAX_BLOCKS) {
    throw invalid(
      `the answer spans more than ${MAX_BLOCKS} code-days of bars: narrow it with ${b.code.apiName}= or date_from/date_to`,
      { parameter: 'date_from', max_blocks: MAX_BLOCKS },
    );
  }
}

/** A bar row's code and source, as meta.adjust names them. */
function barKey(b: BarBlocks, row: Record<string, Value>): BarKey {
  return { code: String(row[b.code.apiName]), source: String(row[b.source.apiName]) };
}

export function blocksOf(d: Dataset): BarBlocks {
  if (!d.blocks) throw new Error(`${d.name} is not stored as bar blocks`);
  return d.blocks;
}

/** Values of one field: numbers by value, text by code unit (times share their offset); null last. */
function compare(a: Value, b: Value): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

function project(plan: QueryPlan, row: Record<string, Value>): Record<string, Value> {
  if (plan.select.length === plan.dataset.rowFields.length) return row;
  return Object.fromEntries(plan.select.map((f) => [f.apiName, row[f.apiName] ?? null]));
}

/** A minute answer's cursor: the offset of the next page, bound to the query (filters, order, interval, times). */
function cursorOf(plan: QueryPlan, req: MinuteRequest, offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset, h: fingerprint(plan, req) })).toString('base64url');
}

function fingerprint(plan: QueryPlan, req: MinuteRequest): string {
  return createHash('sha256')
    .update(`${planFingerprint({ ...plan, offset: 0 })}|${req.interval}|${req.timeFrom}|${req.timeTo}`)
    .digest('base64url')
    .slice(0, 16);
}

function offsetOf(plan: QueryPlan, req: MinuteRequest, cursor: string): number {
  const bad = (why: string) =>
    invalid(`cursor is ${why}; use the meta.next_cursor of a previous page of the same query`, {
      parameter: 'cursor',
    });
  let body: unknown;
  try {
    body = /^[A-Za-z0-9_-]{1,512}$/.test(cursor)
      ? JSON.parse(Buffer.from(cursor, 'base64url').toString())
      : null;
  } catch {
    body = null;
  }
  const { o, h } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (typeof o !== 'number' || !Number.isSafeInteger(o) || o < 0 || typeof h !== 'string')
    throw bad('malformed');
  if (h !== fingerprint(plan, req)) throw bad('for a different query (filters or sort changed)');
  return o;
}
