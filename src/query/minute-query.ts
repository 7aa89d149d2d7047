import { createHash } from 'node:crypto';
import type { BarBlocks } from '../catalog/catalog.js';
import { BLOCK_BARS, BLOCK_COUNT } from '../catalog/catalog.js';
import type { Dataset, Field } from '../catalog/catalog.js';
import { invalid } from '../errors.js';
import { exchangeMinute } from '../ingest/minute-bars.js';
import type { Store } from '../storage/store.js';
import type { Condition, QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';
import { planFingerprint } from './cursor.js';
import type { ParsedQuery } from './parse.js';
import type { PageRows, QueryPage, QueryService } from './query-service.js';
import { BarTable, blockInfo, columnChunk, rowJsonWriter, rowOrder, rowReader } from './minute-columns.js';
import { rowSchema } from '../contract/rows.js';
import type { ColumnChunk } from '../export/column-batch.js';
import { adjustMeta } from './adjust-meta.js';
import type { FactorState } from './factor-sources.js';
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
    return this.answer(plan, version, factorsVersion, false);
  }

  /**
   * As `page`, its rows as their response JSON (`kind: 'json'`) when rowJsonWriter writes them:
   * the HTTP route's, which joins them into the envelope. `page` keeps objects for the MCP tools.
   */
  async jsonPage(plan: QueryPlan, version: number, factorsVersion?: number): Promise<QueryPage> {
    return this.answer(plan, version, factorsVersion, true);
  }

  private async answer(
    plan: QueryPlan,
    version: number,
    factorsVersion: number | undefined,
    json: boolean,
  ): Promise<QueryPage> {
    const state = await this.query.factors.stateOf(plan, factorsVersion);
    const { page, total } = (await this.dayPage(plan, state)) ?? (await this.wholePage(plan, state));
    const hasMore = plan.offset + page.length < total;
    const adjust = state
      ? await adjustMeta(
          this.store,
          this.query.factors,
          plan,
          state,
          page.map((r) => ({ code: String(r.code), source: String(r.source) })),
        )
      : undefined;
    return {
      ...(adjust ? { adjust } : {}),
      rows: (json && jsonRows(plan, page)) || objectRows(plan, page),
      total,
      limit: plan.limit,
      offset: plan.offset,
      hasMore,
      nextCursor: hasMore ? cursorOf(plan, this.request(plan), plan.offset + page.length) : null,
      version,
    };
  }

  async *stream(plan: QueryPlan): AsyncIterable<Record<string, Value>[]> {
    const names = plan.select.map((f) => f.apiName);
    for await (const rows of this.streamArrays(plan))
      yield rows.map((r) => Object.fromEntries(names.map((n, j) => [n, r[j] ?? null])));
  }

  async *streamArrays(plan: QueryPlan): AsyncIterable<Value[][]> {
    const b = blocksOf(plan.dataset);
    for await (const { table, order, from } of this.tables(plan)) {
      const read = rowReader(b, plan.select, table);
      for (let i = from; i < order.length; i += EXPORT_CHUNK) {
        const rows: Value[][] = [];
        for (let j = i; j < Math.min(order.length, i + EXPORT_CHUNK); j++)
          rows.push(read(order[j] as number));
        yield rows;
      }
    }
  }

  /** The answer as chunks of typed columns (Arrow, Parquet): no value per row is made. */
  async *streamColumns(plan: QueryPlan): AsyncIterable<ColumnChunk[]> {
    const b = blocksOf(plan.dataset);
    for await (const { table, order, from } of this.tables(plan)) {
      for (let i = from; i < order.length; i += COLUMN_CHUNK)
        yield [columnChunk(b, plan.select, table, order, i, Math.min(order.length, i + COLUMN_CHUNK))];
    }
  }

  /**
   * An export's bars: ordered by time or date, one trading date at a time (a day's bars of
   * every code ordered in memory); in another order, the whole answer at once. `from`: the
   * first row of the table's order to answer (the plan's offset, in the whole answer only).
   */
  private async *tables(plan: QueryPlan): AsyncIterable<Ordered & { from: number }> {
    const b = blocksOf(plan.dataset);
    // The route checked the factor sources before the first byte (QueryService.checkAdjust).
    const state = await this.query.factors.stateOf(plan);
    const lead = plan.orderBy[0];
    if (!lead || (lead.field !== b.time && lead.field !== b.date)) {
      yield { ...(await this.tableOf(plan, [], state)), from: plan.offset };
      return;
    }
    // One code's consecutive dates are read together, up to GROUP_DATES (its month: one read);
    // otherwise a date at a time, as a date is never split (its bars of every code are ordered together).
    const date = b.stored.fieldByName.get(b.date.name) as Field;
    const oneCode = plan.where.some((c) => c.op === 'eq' && c.field.name === b.code.name);
    if (oneCode) {
      // Its blocks read at once when they are few (a month: one statement, no dates read first).
      const blocks = await this.blocks({ ...this.blockPlan(plan, []), limit: GROUP_DATES + 1 });
      if (blocks.length <= GROUP_DATES) {
        yield { ...(await this.tableOf(plan, [], state, blocks)), from: 0 };
        return;
      }
    }
    const dates = await this.dates(plan, lead.dir);
    const size = oneCode ? GROUP_DATES : 1;
    for (let i = 0; i < dates.length; i += size) {
      const [lo, hi] = [dates[i] as string, dates[Math.min(dates.length, i + size) - 1] as string].sort();
      const range: Condition[] = [
        { field: date, op: 'gte', value: lo as string },
        { field: date, op: 'lte', value: hi as string },
      ];
      yield { ...(await this.tableOf(plan, range, state)), from: 0 };
    }
  }

  private async wholePage(
    plan: QueryPlan,
    state: FactorState | null,
  ): Promise<{ page: PageRow[]; total: number }> {
    const t = await this.tableOf(plan, [], state);
    return { page: pageRows(t, plan.offset, plan.limit), total: t.order.length };
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
  ): Promise<{ page: PageRow[]; total: number } | null> {
    const b = blocksOf(plan.dataset);
    const req = this.request(plan);
    const lead = plan.orderBy[0];
    if (req.interval !== '1m' || req.timeFrom !== null || req.timeTo !== null) return null;
    if (!lead || (lead.field !== b.time && lead.field !== b.date)) return null;
    const date = b.stored.fieldByName.get(b.date.name) as Field;
    // One code's day (at most one block a source): its blocks read at once, payloads and all, and
    // its bar counts taken from them, instead of the counts first and the blocks in a second read.
    const fixed = (f: Field): boolean => plan.where.some((c) => c.op === 'eq' && c.field.name === f.name);
    const read = fixed(b.code) && fixed(b.date) ? await this.blocks(this.blockPlan(plan, [])) : undefined;
    const days = await this.days(plan, lead.dir, read);
    let skip = plan.offset;
    const page: PageRow[] = [];
    for (const { date: d, bars: n, blocks } of days) {
      if (skip >= n) {
        skip -= n;
        continue;
      }
      const onDay: Condition[] = [{ field: date, op: 'eq', value: d }];
      const codes = lead.field === b.time ? neededCodes(plan, blocks, skip + plan.limit - page.length) : null;
      if (codes) {
        const code = b.stored.fieldByName.get(b.code.name) as Field;
        onDay.push({ field: code, op: 'in', values: codes });
      }
      const day = read ? await this.tableOf(plan, [], state, read) : await this.tableOf(plan, onDay, state);
      page.push(...pageRows(day, skip, plan.limit - page.length));
      skip = 0;
      if (page.length >= plan.limit) break;
    }
    return { page, total: days.reduce((a, d) => a + d.bars, 0) };
  }

  private request(plan: QueryPlan): MinuteRequest {
    return this.requests.get(plan) ?? { interval: '1m', timeFrom: null, timeTo: null };
  }

  private async blocks(blockPlan: QueryPlan): Promise<Record<string, Value>[]> {
    return (await this.store.datasets.query(blockPlan, false)).rows;
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

  /**
   * The trading dates the plan's blocks cover, in `dir` order, with their bars and their blocks'
   * keys and bar counts (read without the payloads, unless `read`: the plan's blocks already read).
   */
  private async days(plan: QueryPlan, dir: 'asc' | 'desc', read?: Record<string, Value>[]): Promise<Day[]> {
    const b = blocksOf(plan.dataset);
    const s = b.stored;
    const [date, code, source, count] = [b.date.name, b.code.name, b.source.name, BLOCK_COUNT].map(
      (n) => s.fieldByName.get(n) as Field,
    ) as [Field, Field, Field, Field];
    const rows =
      read ??
      (
        await this.store.datasets.query(
          { ...this.blockPlan(plan, []), select: [date, code, source, count] },
          false,
        )
      ).rows;
    tooMany(b, rows.length);
    const perDay = new Map<string, Day>();
    for (const r of rows) {
      const d = r[date.apiName] as string;
      const day = perDay.get(d) ?? { date: d, bars: 0, blocks: [] };
      const bars = Number(r[count.apiName]);
      day.bars += bars;
      day.blocks.push({ code: r[code.apiName] ?? null, source: r[source.apiName] ?? null, bars });
      perDay.set(d, day);
    }
    const out = [...perDay.values()];
    out.sort((x, y) => (x.date < y.date ? -1 : x.date > y.date ? 1 : 0));
    return dir === 'desc' ? out.reverse() : out;
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

  /**
   * Every bar the plan selects (with `extra` block conditions) as a table of columns, resampled
   * and adjusted, with the row numbers in the plan's order. Decoded on this thread in slices of
   * SLICE blocks, returning to the event loop between them (/health and other requests are
   * served meanwhile); the blocks themselves are read as every query's rows are (a reader
   * process on SQLite).
   */
  private async tableOf(
    plan: QueryPlan,
    extra: readonly Condition[],
    state: FactorState | null,
    read?: Record<string, Value>[],
  ): Promise<Ordered> {
    const b = blocksOf(plan.dataset);
    const s = b.stored;
    const req = this.request(plan);
    const blocks = read ?? (await this.blocks(this.blockPlan(plan, extra)));
    tooMany(b, blocks.length);
    decodedBlocks.count += blocks.length;
    const api = (f: Field): string => (s.fieldByName.get(f.name) ?? f).apiName;
    const fields = { code: api(b.code), date: api(b.date), source: api(b.source) };
    const adjuster =
      state && b.adjust
        ? await minuteAdjuster(
            this.store,
            this.query.factors,
            plan,
            state,
            blocks.map((blk) => ({ code: String(blk[fields.code]), source: String(blk[fields.source]) })),
          )
        : null;
    // The adjusted values' columns in the block (open, high, low, close).
    const prices = b.adjust ? b.adjust.prices.map((f) => b.values.indexOf(f)) : [];
    const table = new BarTable(b, req.interval, req.timeFrom, req.timeTo);
    for (let i = 0; i < blocks.length; i++) {
      if (i > 0 && i % SLICE === 0) await new Promise((r) => setImmediate(r));
      const blk = blocks[i] as Record<string, Value>;
      const info = blockInfo(b, fields, blk);
      const scale = adjuster ? await adjuster(String(info.code), String(info.source), info.date) : null;
      table.add(info, blk[BLOCK_BARS] as string, scale, prices);
    }
    return { table, order: rowOrder(b, table, plan.orderBy) };
  }
}

/** A trading date of an answer: its bars, and its blocks' keys and bar counts. */
interface Day {
  date: string;
  bars: number;
  blocks: { code: Value; source: Value; bars: number }[];
}

/**
 * The codes whose blocks a 1m page in time order needs from one day, when fewer than the day's:
 * `rows` (the page's offset in the day + its limit) rows are the first in the order of time,
 * then code and source. A block holding every minute of the sessions (its bar count says so:
 * one bar per minute, never outside a session) has a row at every minute any block has, so at
 * each minute the first `rows` such blocks in code and source order come before the others and
 * no later one can be in the page; a block with fewer bars could have any minutes, so it is
 * read whatever its place. null: every block (another order after time, or no block to spare).
 */
function neededCodes(plan: QueryPlan, blocks: Day['blocks'], rows: number): Value[] | null {
  const b = blocksOf(plan.dataset);
  const ties = plan.orderBy.slice(1);
  const keyOf = (f: Field): 'code' | 'source' | null =>
    f.name === b.code.name ? 'code' : f.name === b.source.name ? 'source' : null;
  if (ties.some((o) => keyOf(o.field) === null && o.field.name !== b.date.name)) return null;
  const full = b.sessions.reduce((n, [from, to]) => n + to - from, 0);
  // Code-unit order, null after every value (rowOrder's ranks).
  const cmp = (x: Value, y: Value): number =>
    x === y ? 0 : x === null ? 1 : y === null ? -1 : (x as string) < (y as string) ? -1 : 1;
  const whole = blocks
    .filter((k) => k.bars === full)
    .sort((x, y) => {
      for (const o of ties) {
        const k = keyOf(o.field);
        if (k === null) continue;
        const c = cmp(x[k], y[k]);
        if (c !== 0) return o.dir === 'asc' ? c : -c;
      }
      return 0;
    });
  if (whole.length <= rows) return null;
  const codes = new Set<Value>(blocks.filter((k) => k.bars !== full).map((k) => k.code));
  for (const k of whole.slice(0, rows)) codes.add(k.code);
  return [...codes];
}

/** A table of bars and its rows in the plan's order. */
interface Ordered {
  table: BarTable;
  order: Uint32Array;
}

/** A page's row: its table and row number, and the code and source meta.adjust names. */
interface PageRow {
  table: BarTable;
  i: number;
  code: Value;
  source: Value;
}

/** Rows `skip` … `skip + limit` of a table's order, as the page answers them. */
function pageRows(t: Ordered, skip: number, limit: number): PageRow[] {
  const out: PageRow[] = [];
  for (let j = skip; j < Math.min(t.order.length, skip + limit); j++) {
    const i = t.order[j] as number;
    const blk = t.table.blocks[t.table.block[i] as number];
    out.push({ table: t.table, i, code: blk?.code ?? null, source: blk?.source ?? null });
  }
  return out;
}

/** Each row's reader (or writer), made once per table of the page (a page may span several days' tables). */
function perTable<T>(make: (t: BarTable) => T): (t: BarTable) => T {
  let last: BarTable | null = null;
  let made: T | undefined;
  return (t) => {
    if (t !== last || made === undefined) {
      last = t;
      made = make(t);
    }
    return made;
  };
}

/** The page's rows as objects of the selected fields (the response schema serialises them). */
function objectRows(plan: QueryPlan, page: readonly PageRow[]): PageRows {
  const b = blocksOf(plan.dataset);
  const names = plan.select.map((f) => f.apiName);
  const reader = perTable((t) => rowReader(b, plan.select, t));
  return {
    kind: 'objects',
    rows: page.map((r) => {
      const values = reader(r.table)(r.i);
      return Object.fromEntries(names.map((n, j) => [n, values[j] ?? null]));
    }),
  };
}

/** The page's rows as their response JSON (rowJsonWriter); null: as objects instead. */
function jsonRows(plan: QueryPlan, page: readonly PageRow[]): PageRows | null {
  const b = blocksOf(plan.dataset);
  const schema = responseProperties(plan.dataset);
  const writer = perTable((t) => rowJsonWriter(b, schema, plan.select, t));
  const rows: string[] = [];
  for (const r of page) {
    const json = writer(r.table)?.(r.i) ?? null;
    if (json === null) return null;
    rows.push(json);
  }
  return { kind: 'json', rows };
}

const schemas = new WeakMap<Dataset, Readonly<Record<string, Record<string, unknown>>>>();

/** The properties of the dataset's row in its route's response schema. */
function responseProperties(d: Dataset): Readonly<Record<string, Record<string, unknown>>> {
  let s = schemas.get(d);
  if (!s) {
    s = (rowSchema(d) as unknown as { properties: Record<string, Record<string, unknown>> }).properties;
    schemas.set(d, s);
  }
  return s;
}

/** Blocks decoded between two returns to the event loop (about 1–2 ms of CPU). */
const SLICE = 200;
/** Dates of one code an export reads and orders at once (a year: about 250 blocks a source). */
const GROUP_DATES = 250;
/** Rows per chunk of typed columns handed to the encoder (one Arrow batch at most). */
const COLUMN_CHUNK = 8192;

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

export function blocksOf(d: Dataset): BarBlocks {
  if (!d.blocks) throw new Error(`${d.name} is not stored as bar blocks`);
  return d.blocks;
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
